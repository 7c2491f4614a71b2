//! What the protocols' commands read and show of certificates: files read with a bound, and
//! a chain described one certificate a line.

use std::path::Path;

use crate::fail::Result;
use crate::files::read_small;

/// Certificate and key files are small; the bound keeps /dev/zero from exhausting memory.
const FILE_LIMIT: u64 = 16 << 20;

pub fn read_file(path: &Path) -> Result<Vec<u8>> {
    Ok(read_small(path, FILE_LIMIT)?.to_vec())
}

/// One line per certificate of a chain (DER): its position, subject and issuer.
pub fn describe_chain_der<C: AsRef<[u8]>>(chain: &[C]) -> Vec<String> {
    chain
        .iter()
        .enumerate()
        .map(
            |(i, c)| match <shangmi_pki::Certificate as der::Decode>::from_der(c.as_ref()) {
                Ok(cert) => format!(
                    "{i} s:{} i:{}",
                    cert.tbs_certificate().subject(),
                    cert.tbs_certificate().issuer()
                ),
                Err(_) => format!("{i} (unparsable, {} bytes)", c.as_ref().len()),
            },
        )
        .collect()
}
