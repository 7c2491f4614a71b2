//! Session tickets sealed with SM4-GCM, for servers built on this provider alone.
//!
//! A ticket is `key name (16) || nonce (12) || SM4-GCM(state) || tag (16)`, the key name
//! authenticated as associated data. Keys are random per process and rotate through rustls'
//! `TicketRotator`: a key seals tickets for six hours and opens them for twelve, then is
//! dropped (and wiped).

use std::sync::Arc;

use rustls::Error;
use rustls::crypto::GetRandomFailed;
use rustls::server::ProducesTickets;
use rustls::ticketer::TicketRotator;
use shangmi::sm4::Sm4Gcm;
use zeroize::Zeroize;

/// How long one key seals tickets, in seconds (rustls' own ticketers use the same).
const LIFETIME: u32 = 6 * 60 * 60;

struct Sm4Tickets {
    name: [u8; 16],
    gcm: Sm4Gcm,
}

impl core::fmt::Debug for Sm4Tickets {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Sm4Tickets").finish_non_exhaustive()
    }
}

fn fresh() -> Result<Box<dyn ProducesTickets>, GetRandomFailed> {
    let mut key = [0u8; 16];
    let mut name = [0u8; 16];
    getrandom::fill(&mut key).map_err(|_| GetRandomFailed)?;
    getrandom::fill(&mut name).map_err(|_| GetRandomFailed)?;
    let gcm = Sm4Gcm::new(&key);
    key.zeroize();
    Ok(Box::new(Sm4Tickets { name, gcm }))
}

impl ProducesTickets for Sm4Tickets {
    fn enabled(&self) -> bool {
        true
    }

    fn lifetime(&self) -> u32 {
        LIFETIME
    }

    fn encrypt(&self, plain: &[u8]) -> Option<Vec<u8>> {
        let mut nonce = [0u8; 12];
        getrandom::fill(&mut nonce).ok()?;
        let mut out = Vec::with_capacity(16 + 12 + plain.len() + 16);
        out.extend_from_slice(&self.name);
        out.extend_from_slice(&nonce);
        out.extend_from_slice(plain);
        let tag = self
            .gcm
            .encrypt_in_place_detached(&nonce, &self.name, &mut out[28..])
            .ok()?;
        out.extend_from_slice(&tag);
        Some(out)
    }

    fn decrypt(&self, ticket: &[u8]) -> Option<Vec<u8>> {
        if ticket.len() < 16 + 12 + 16 || ticket[..16] != self.name {
            return None;
        }
        let (head, rest) = ticket.split_at(28);
        let (body, tag) = rest.split_at(rest.len() - 16);
        let mut plain = body.to_vec();
        self.gcm
            .decrypt_in_place_detached(&head[16..], &self.name, &mut plain, tag)
            .ok()?;
        Some(plain)
    }
}

/// A rotating SM4-GCM ticketer for `ServerConfig::ticketer`.
pub fn ticketer() -> Result<Arc<dyn ProducesTickets>, Error> {
    Ok(Arc::new(TicketRotator::new(LIFETIME, fresh)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tickets_open_only_unaltered_and_under_their_key() {
        let t = fresh().unwrap();
        let sealed = t.encrypt(b"resumption state").unwrap();
        assert_eq!(t.decrypt(&sealed).unwrap(), b"resumption state");
        for i in 0..sealed.len() {
            let mut bad = sealed.clone();
            bad[i] ^= 1;
            assert!(t.decrypt(&bad).is_none(), "byte {i} flipped");
        }
        assert!(t.decrypt(&sealed[..sealed.len() - 1]).is_none());
        assert!(fresh().unwrap().decrypt(&sealed).is_none());
        assert!(t.decrypt(&[]).is_none());
    }
}
