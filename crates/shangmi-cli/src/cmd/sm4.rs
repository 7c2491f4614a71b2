//! `shangmi sm4 enc|dec`: the raw block-cipher modes, byte-identical to
//! `openssl enc -sm4-<mode> -K <key> -iv <iv> [-nopad]` for ecb, cbc, cfb, ofb and ctr.
//! GCM and CCM write ciphertext || tag. Decryption with a final check (the tag of GCM and
//! CCM, the padding of ECB and CBC) releases nothing unless the check passes. Streaming in
//! constant memory except for CCM and XTS, whose whole input is one message.

use std::path::PathBuf;

use clap::ValueEnum;
use shangmi::sm4::Sm4;
use shangmi::sm4::modes::{cbc, cfb::Cfb, ctr::Ctr, ofb::Ofb, xts};
use shangmi::sm4::modes::{ccm::Sm4Ccm, gcm::Sm4Gcm};
use zeroize::Zeroizing;

use crate::fail::{Outcome, Result, error, parse_hex, rejected};
use crate::files::{Input, Output, open_input};
use crate::held::verified;
use crate::progress::Progress;
use crate::secrets;

const EXAMPLES: &str = "\
Examples:
  shangmi sm4 enc --mode cbc --key 0123456789abcdeffedcba9876543210 \\
      --iv 000102030405060708090a0b0c0d0e0f -i plain.bin -o cipher.bin
      (the same bytes as: openssl enc -sm4-cbc -K 0123...3210 -iv 0001...0e0f)
  shangmi sm4 dec --mode gcm --key-file key.hex --iv 000000000000000000000001 -i sealed -o plain
      (writes plain only if the tag verifies; exit 1 otherwise)

A key file holds the key in hex (or as raw bytes); \"-\" reads it from stdin. Decrypting with a
final check (gcm, ccm; ecb and cbc unless --nopad) to stdout or a pipe keeps a private copy
of the ciphertext (in memory up to 8 MiB, then in $TMPDIR) and writes nothing until the check
passes; with -o the file appears only then.

Exit status: 0 success, 1 authentication or padding check failed, 2 usage or I/O error.";

/// Largest input for the modes that need the whole message at once (CCM, XTS).
const WHOLE_LIMIT: u64 = 1 << 30;
const CHUNK: usize = 1 << 16;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Op {
    /// Encrypt.
    Enc,
    /// Decrypt.
    Dec,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Mode {
    Ecb,
    Cbc,
    Cfb,
    Ofb,
    Ctr,
    Gcm,
    Ccm,
    Xts,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum XtsVariant {
    /// GB/T 17964-2021 (the Chinese standard's tweak handling).
    Gb,
    /// IEEE 1619.
    Ieee,
}

/// SM4 encryption and decryption in a mode of operation (raw: key and IV given in hex).
#[derive(clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// enc or dec.
    op: Op,
    /// The mode of operation.
    #[arg(long, value_enum)]
    mode: Mode,
    /// The key in hex: 16 bytes (32 for xts: the data key then the tweak key). Visible to
    /// other users in the process list: prefer --key-file.
    #[arg(long, value_name = "HEX", required_unless_present = "key_file")]
    key: Option<String>,
    /// A file holding the key (hex or raw bytes); "-" is stdin.
    #[arg(long, value_name = "FILE", conflicts_with = "key")]
    key_file: Option<PathBuf>,
    /// IV (cbc, cfb, ofb, ctr: 16 bytes), nonce (gcm: any length, 12 usual; ccm: 7 to 13) or
    /// tweak (xts: 16 bytes), in hex.
    #[arg(long, value_name = "HEX")]
    iv: Option<String>,
    /// Additional authenticated data for gcm and ccm, in hex.
    #[arg(long, value_name = "HEX")]
    aad: Option<String>,
    /// Tag length in bytes for gcm (12 to 16, or the short 8 and 4 that NIST SP 800-38D
    /// allows for protocols that need them) and ccm (4 to 16, even).
    #[arg(long, value_name = "N", default_value_t = 16)]
    tag_len: usize,
    /// ecb, cbc: no PKCS#7 padding (the input must be whole 16-byte blocks).
    #[arg(long)]
    nopad: bool,
    /// The XTS variant.
    #[arg(long, value_enum, default_value = "gb")]
    xts: XtsVariant,
    /// Input file (default stdin).
    #[arg(short, long, value_name = "IN")]
    input: Option<PathBuf>,
    /// Output file (default stdout); written under a temporary name, renamed when complete.
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,
}

fn iv16(args: &Args) -> Result<[u8; 16]> {
    let iv = args
        .iv
        .as_deref()
        .ok_or_else(|| error("--iv", "this mode needs a 16-byte IV"))?;
    parse_hex("--iv", iv)?
        .try_into()
        .map_err(|_| error("--iv", "must be 16 bytes (32 hex digits)"))
}

pub fn run(args: Args) -> Result<Outcome> {
    secrets::check_stdin_once(args.key_file.as_deref(), args.input.as_deref())?;
    let want = if args.mode == Mode::Xts { 32 } else { 16 };
    let key = secrets::key("key", args.key.as_deref(), args.key_file.as_deref(), want)?;
    if args.nopad && !matches!(args.mode, Mode::Ecb | Mode::Cbc) {
        return Err(error("--nopad", "only ecb and cbc pad"));
    }
    if args.aad.is_some() && !matches!(args.mode, Mode::Gcm | Mode::Ccm) {
        return Err(error("--aad", "only gcm and ccm take additional data"));
    }
    if args.mode == Mode::Ecb && args.iv.is_some() {
        return Err(error("--iv", "ecb takes no IV"));
    }
    let aad = match &args.aad {
        Some(a) => parse_hex("--aad", a)?,
        None => Vec::new(),
    };
    match args.mode {
        Mode::Ecb | Mode::Cbc => block_mode(&args, &key),
        Mode::Cfb | Mode::Ofb | Mode::Ctr => stream_mode(&args, &key),
        Mode::Gcm => gcm(&args, &key, &aad),
        Mode::Ccm | Mode::Xts => whole(&args, &key, &aad),
    }
}

fn sm4(key: &[u8]) -> Sm4 {
    Sm4::new(key.try_into().expect("checked length"))
}

/// ECB and CBC, streamed: whole blocks as they come, the last block held back for padding.
/// Decryption's check at the end (the padding, or whole blocks with --nopad) decides whether
/// anything is released.
fn block_mode(args: &Args, key: &[u8]) -> Result<Outcome> {
    let cipher = sm4(key);
    let iv = if args.mode == Mode::Cbc {
        iv16(args)?
    } else {
        [0; 16]
    };
    let input = open_input(args.input.as_deref())?;
    let mut out = Output::create(args.output.as_deref())?;
    let name = out.name.clone();
    match args.op {
        Op::Enc => block_pass(args, &cipher, &iv, input, &mut out, &name)?,
        Op::Dec => verified(input, &mut out, |input, w| {
            block_pass(args, &cipher, &iv, input, w, &name)
        })?,
    }
    out.commit()?;
    Ok(Outcome::Ok)
}

/// One pass of ECB or CBC over `input` into `out`; decrypting, `Err` if the final check fails.
fn block_pass(
    args: &Args,
    cipher: &Sm4,
    iv: &[u8; 16],
    mut input: Input,
    out: &mut dyn std::io::Write,
    out_name: &str,
) -> Result<()> {
    let mut progress = Progress::new(input.len, "sm4");
    let mut enc = cbc::Encryptor::new(cipher, iv);
    let mut dec = cbc::Decryptor::new(cipher, iv);
    let mut buf = Zeroizing::new(vec![0u8; CHUNK + 16]);
    let put = |out: &mut dyn std::io::Write, data: &[u8]| {
        out.write_all(data)
            .map_err(|e| crate::fail::io_error(out_name, &e))
    };
    // `held` bytes at the front of `buf` carry over: a partial block, or when decrypting
    // with padding the last whole block, whose padding is checked at the end.
    let mut held = 0;
    loop {
        let n = input.fill(&mut buf[held..CHUNK])?;
        progress.advance(n as u64);
        let have = held + n;
        let at_end = n < CHUNK - held;
        let keep = if at_end {
            have
        } else if args.op == Op::Dec && !args.nopad {
            // The partial block and the last whole one: it may be the padded final block.
            (16 + have % 16).min(have)
        } else {
            have % 16
        };
        let ready = have - keep;
        if ready > 0 {
            let r = &mut buf[..ready];
            process(args.mode, args.op, cipher, &mut enc, &mut dec, r);
            put(out, r)?;
        }
        buf.copy_within(ready..have, 0);
        held = keep;
        if at_end {
            break;
        }
    }
    let last = &mut buf[..held];
    match (args.op, args.nopad) {
        (_, true) => {
            if held % 16 != 0 {
                return Err(error(
                    &input.name,
                    "data not a multiple of the 16-byte block (--nopad)",
                ));
            }
            process(args.mode, args.op, cipher, &mut enc, &mut dec, last);
            put(out, last)?;
        }
        (Op::Enc, false) => {
            let mut tail = Zeroizing::new(last.to_vec());
            shangmi::sm4::modes::padding::pad(&mut tail);
            process(args.mode, args.op, cipher, &mut enc, &mut dec, &mut tail);
            put(out, &tail)?;
        }
        (Op::Dec, false) => {
            if held == 0 || held % 16 != 0 {
                return Err(rejected(
                    &input.name,
                    "data not a multiple of the 16-byte block; nothing written",
                ));
            }
            process(args.mode, args.op, cipher, &mut enc, &mut dec, last);
            let final_block: &[u8; 16] = last[held - 16..].try_into().expect("16 bytes");
            let pad = shangmi::sm4::modes::padding::unpad_len(final_block).map_err(|_| {
                rejected(
                    &input.name,
                    "bad decrypt (wrong key, IV or padding); nothing written",
                )
            })?;
            put(out, &last[..held - pad])?;
        }
    }
    Ok(())
}

fn process(
    mode: Mode,
    op: Op,
    cipher: &Sm4,
    enc: &mut cbc::Encryptor<&Sm4>,
    dec: &mut cbc::Decryptor<&Sm4>,
    data: &mut [u8],
) {
    match (mode, op) {
        (Mode::Ecb, Op::Enc) => cipher.encrypt_blocks(as_blocks(data)),
        (Mode::Ecb, Op::Dec) => cipher.decrypt_blocks(as_blocks(data)),
        (_, Op::Enc) => enc.encrypt_blocks(data).expect("whole blocks"),
        (_, Op::Dec) => dec.decrypt_blocks(data).expect("whole blocks"),
    }
}

fn as_blocks(data: &mut [u8]) -> &mut [[u8; 16]] {
    let (blocks, rest) = data.as_chunks_mut::<16>();
    debug_assert!(rest.is_empty());
    blocks
}

/// CFB, OFB, CTR: any length, streamed.
fn stream_mode(args: &Args, key: &[u8]) -> Result<Outcome> {
    let cipher = sm4(key);
    let iv = iv16(args)?;
    let mut input = open_input(args.input.as_deref())?;
    let mut out = Output::create(args.output.as_deref())?;
    let mut progress = Progress::new(input.len, "sm4");
    let mut cfb = Cfb::new(&cipher, &iv);
    let mut ofb = Ofb::new(&cipher, &iv);
    let mut ctr = Ctr::new(&cipher, &iv);
    let mut buf = Zeroizing::new(vec![0u8; CHUNK]);
    loop {
        let n = input.fill(&mut buf)?;
        if n == 0 {
            break;
        }
        progress.advance(n as u64);
        let d = &mut buf[..n];
        match (args.mode, args.op) {
            (Mode::Cfb, Op::Enc) => cfb.encrypt(d),
            (Mode::Cfb, Op::Dec) => cfb.decrypt(d),
            (Mode::Ofb, _) => ofb.apply_keystream(d),
            _ => ctr.apply_keystream(d),
        }
        out.put(d)?;
        if n < CHUNK {
            break;
        }
    }
    out.commit()?;
    Ok(Outcome::Ok)
}

fn nonce(args: &Args) -> Result<Vec<u8>> {
    let n = args
        .iv
        .as_deref()
        .ok_or_else(|| error("--iv", "gcm and ccm need a nonce"))?;
    parse_hex("--iv", n)
}

/// GCM, streamed: the tag follows the ciphertext. Decryption releases nothing unless the tag
/// verifies.
fn gcm(args: &Args, key: &[u8], aad: &[u8]) -> Result<Outcome> {
    let g = Sm4Gcm::with_short_tag(key.try_into().expect("16 bytes"), args.tag_len)
        .map_err(|e| error("--tag-len", e))?;
    let nonce = nonce(args)?;
    g.start(&nonce, aad).map_err(|e| error("--iv", e))?;
    let input = open_input(args.input.as_deref())?;
    let mut out = Output::create(args.output.as_deref())?;
    let name = out.name.clone();
    match args.op {
        Op::Enc => gcm_pass(args, &g, &nonce, aad, input, &mut out, &name)?,
        Op::Dec => verified(input, &mut out, |input, w| {
            gcm_pass(args, &g, &nonce, aad, input, w, &name)
        })?,
    }
    out.commit()?;
    Ok(Outcome::Ok)
}

/// One pass of GCM; decrypting, `Err` unless the tag verifies (the plaintext written to `out`
/// meanwhile is the caller's to hold back).
fn gcm_pass(
    args: &Args,
    g: &Sm4Gcm,
    nonce: &[u8],
    aad: &[u8],
    mut input: Input,
    out: &mut dyn std::io::Write,
    out_name: &str,
) -> Result<()> {
    let mut stream = g.start(nonce, aad).map_err(|e| error("--iv", e))?;
    let mut progress = Progress::new(input.len, "sm4-gcm");
    let put = |out: &mut dyn std::io::Write, data: &[u8]| {
        out.write_all(data)
            .map_err(|e| crate::fail::io_error(out_name, &e))
    };
    let t = args.tag_len;
    let mut buf = Zeroizing::new(vec![0u8; CHUNK + t]);
    let mut held = 0;
    loop {
        let n = input.fill(&mut buf[held..CHUNK + t])?;
        progress.advance(n as u64);
        let have = held + n;
        let at_end = have < CHUNK + t;
        // Decrypting, the last `t` bytes seen may be the tag.
        let keep = if args.op == Op::Dec { have.min(t) } else { 0 };
        let ready = have - keep;
        let d = &mut buf[..ready];
        match args.op {
            Op::Enc => stream.encrypt(d),
            Op::Dec => stream.decrypt_unverified(d),
        }
        .map_err(|e| error(&input.name, e))?;
        put(out, d)?;
        buf.copy_within(ready..have, 0);
        held = keep;
        if at_end {
            break;
        }
    }
    match args.op {
        Op::Enc => put(out, &stream.finish()[..t]),
        Op::Dec => {
            if held < t {
                return Err(rejected(
                    &input.name,
                    "shorter than the tag; nothing written",
                ));
            }
            stream
                .verify(&buf[..t])
                .map_err(|_| rejected(&input.name, "authentication failed; nothing written"))
        }
    }
}

/// CCM and XTS: the whole input is one message.
fn whole(args: &Args, key: &[u8], aad: &[u8]) -> Result<Outcome> {
    let input = open_input(args.input.as_deref())?;
    let name = input.name.clone();
    let mut data = input.read_all(WHOLE_LIMIT)?;
    let result = match args.mode {
        Mode::Ccm => {
            let nonce = nonce(args)?;
            let c = Sm4Ccm::new(key.try_into().expect("16 bytes"), nonce.len(), args.tag_len)
                .map_err(|e| error("--iv/--tag-len", e))?;
            match args.op {
                Op::Enc => c.encrypt(&nonce, aad, &data).map_err(|e| error(&name, e))?,
                Op::Dec => c
                    .decrypt(&nonce, aad, &data)
                    .map_err(|_| rejected(&name, "authentication failed; nothing written"))?,
            }
        }
        _ => {
            let variant = match args.xts {
                XtsVariant::Gb => xts::Variant::Gb,
                XtsVariant::Ieee => xts::Variant::Ieee,
            };
            let x = xts::Xts::new(key.try_into().expect("32 bytes"), variant)
                .map_err(|e| error("--key", e))?;
            let tweak = iv16(args)?;
            match args.op {
                Op::Enc => x.encrypt(&tweak, &mut data),
                Op::Dec => x.decrypt(&tweak, &mut data),
            }
            .map_err(|e| error(&name, e))?;
            std::mem::take(&mut *data)
        }
    };
    let result = Zeroizing::new(result);
    let mut out = Output::create(args.output.as_deref())?;
    out.put(&result)?;
    out.commit()?;
    Ok(Outcome::Ok)
}
