//! `shangmi pkcs12`: PKCS#12 keystores (.p12/.pfx) with SM2 keys, as OpenSSL, Tongsuo,
//! BouncyCastle and Java's keytool exchange them.

use clap::{Args as ClapArgs, Subcommand, ValueEnum};

use crate::fail::{Outcome, Result, error};
use crate::files::read_small;

mod export;
mod read;

#[derive(ClapArgs)]
#[command(after_help = "\
Examples:
  shangmi pkcs12 export --key server.key --cert server.pem --chain ca.pem --name server \\
      --password-file pw -o server.p12
  shangmi pkcs12 export --key sign.key --cert sign.pem --enc-key enc.key --enc-cert enc.pem \\
      --password-file pw -o tlcp.p12                     # a TLCP pair: aliases sign and enc
  shangmi pkcs12 show server.p12 --password-file pw
  shangmi pkcs12 import server.p12 --password-file pw -o server-all.pem

Written with PBES2 (SM4-CBC, PBKDF2 hmacWithSHA256) and an SM3 MAC by default, as OpenSSL 4
and Tongsuo write it with -keypbe SM4-CBC -certpbe SM4-CBC -macalg SM3 (--prf sm3 for readers
that know hmacWithSM3, such as shangmi); --compat writes OpenSSL 3's defaults (AES-256-CBC,
SHA-256 MAC) for readers without SM.
Exit status: 0 success, 1 a wrong password or a failed MAC (nothing written), 2 usage or
input error.")]
pub struct Args {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Clone, Copy, ValueEnum)]
enum Mac {
    Sm3,
    Sha256,
}

#[derive(Clone, Copy, ValueEnum)]
enum PrfArg {
    Sha256,
    Sm3,
}

#[derive(Subcommand)]
enum Cmd {
    /// Write a key, its certificate and chain (and a TLCP encryption pair) as PKCS#12.
    Export(export::ExportArgs),
    /// List what a keystore holds: keys, certificates, aliases, algorithms.
    Show(read::ShowArgs),
    /// Write a keystore's keys (PKCS#8 PEM) and certificates (PEM) to one file.
    Import(read::ImportArgs),
}

fn cert_ders(path: &std::path::Path) -> Result<Vec<Vec<u8>>> {
    shangmi_pki::certificate_ders(&read_small(path, 1 << 20)?).map_err(|e| error(path.display(), e))
}

pub fn run(args: Args) -> Result<Outcome> {
    match args.cmd {
        Cmd::Export(a) => a.run(),
        Cmd::Show(a) => a.run(),
        Cmd::Import(a) => a.run(),
    }
}
