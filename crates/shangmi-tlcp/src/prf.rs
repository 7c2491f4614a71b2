//! TLCP's PRF: TLS 1.2's P_hash on HMAC-SM3, and the secrets made with it.

use shangmi::sm3::HmacSm3;
use zeroize::Zeroizing;

/// P_SM3(secret, label || seed), `out.len()` bytes.
pub(crate) fn prf(secret: &[u8], label: &[u8], seed: &[u8], out: &mut [u8]) {
    let keyed = HmacSm3::new(secret);
    // A(1) = HMAC(secret, label || seed), A(i) = HMAC(secret, A(i-1)).
    let mut a = {
        let mut h = keyed.clone();
        h.update(label);
        h.update(seed);
        Zeroizing::new(h.finalize())
    };
    for chunk in out.chunks_mut(32) {
        let mut h = keyed.clone();
        h.update(&*a);
        h.update(label);
        h.update(seed);
        let block = Zeroizing::new(h.finalize());
        chunk.copy_from_slice(&block[..chunk.len()]);
        let mut h = keyed.clone();
        h.update(&*a);
        a = Zeroizing::new(h.finalize());
    }
}

/// The 48-byte master secret from the pre-master secret and both randoms.
pub(crate) fn master_secret(
    pms: &[u8],
    client_random: &[u8; 32],
    server_random: &[u8; 32],
) -> Zeroizing<[u8; 48]> {
    let mut seed = [0u8; 64];
    seed[..32].copy_from_slice(client_random);
    seed[32..].copy_from_slice(server_random);
    let mut out = Zeroizing::new([0u8; 48]);
    prf(pms, b"master secret", &seed, &mut *out);
    out
}

/// The key block: `len` bytes expanded from the master secret (server random first).
pub(crate) fn key_block(
    master: &[u8; 48],
    client_random: &[u8; 32],
    server_random: &[u8; 32],
    len: usize,
) -> Zeroizing<Vec<u8>> {
    let mut seed = [0u8; 64];
    seed[..32].copy_from_slice(server_random);
    seed[32..].copy_from_slice(client_random);
    let mut out = Zeroizing::new(vec![0u8; len]);
    prf(master, b"key expansion", &seed, &mut out);
    out
}

/// Finished's verify_data: 12 bytes over the handshake hash.
pub(crate) fn verify_data(master: &[u8; 48], client: bool, handshake_hash: &[u8; 32]) -> [u8; 12] {
    let label: &[u8] = if client {
        b"client finished"
    } else {
        b"server finished"
    };
    let mut out = [0u8; 12];
    prf(master, label, handshake_hash, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn p_hash_extends_by_blocks_and_prefixes_agree() {
        // The first 32 bytes of a longer output are the shorter output: P_hash is a stream.
        let (mut a, mut b) = ([0u8; 32], [0u8; 80]);
        prf(b"secret", b"label", b"seed", &mut a);
        prf(b"secret", b"label", b"seed", &mut b);
        assert_eq!(a, b[..32]);
        // A(1) computed by hand: HMAC(secret, label || seed); block 1 = HMAC(A(1) || label || seed).
        let a1 = shangmi::sm3::hmac(b"secret", b"labelseed");
        let mut m = a1.to_vec();
        m.extend_from_slice(b"labelseed");
        assert_eq!(shangmi::sm3::hmac(b"secret", &m), a);
        let a2 = shangmi::sm3::hmac(b"secret", &a1);
        let mut m = a2.to_vec();
        m.extend_from_slice(b"labelseed");
        assert_eq!(shangmi::sm3::hmac(b"secret", &m), b[32..64]);
    }
}
