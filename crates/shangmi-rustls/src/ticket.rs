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
use shangmi::sm4::modes::gcm::Sm4Gcm;
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

/// One SM4-GCM key and its name, derived from a 32-byte secret and a scope with SM3 (the name
/// is public, so it must not reveal the key: each comes from its own hash). The scope is
/// hashed first, so scopes of any length cannot run into the secret.
fn from_secret(secret: &[u8; 32], scope: &[u8]) -> Sm4Tickets {
    let scope = shangmi::sm3::hash(scope);
    let derive = |label: &[u8]| {
        let mut h = shangmi::sm3::Sm3::new();
        h.update(b"shangmi ticket ");
        h.update(label);
        h.update(&scope);
        h.update(secret);
        h.finalize()
    };
    let mut name = [0u8; 16];
    name.copy_from_slice(&derive(b"name")[..16]);
    let mut k = derive(b"key");
    let gcm = Sm4Gcm::new(k[..16].try_into().expect("16 bytes"));
    k.zeroize();
    Sm4Tickets { name, gcm }
}

/// Tickets sealed under keys several servers share.
#[derive(Debug)]
struct SharedTickets {
    keys: Vec<Sm4Tickets>,
    lifetime: u32,
}

impl ProducesTickets for SharedTickets {
    fn enabled(&self) -> bool {
        true
    }

    fn lifetime(&self) -> u32 {
        self.lifetime
    }

    fn encrypt(&self, plain: &[u8]) -> Option<Vec<u8>> {
        self.keys.first()?.encrypt(plain)
    }

    fn decrypt(&self, ticket: &[u8]) -> Option<Vec<u8>> {
        let name = ticket.get(..16)?;
        self.keys
            .iter()
            .find(|k| k.name[..] == *name)?
            .decrypt(ticket)
    }
}

/// A ticketer over keys that several servers (replicas behind one name) share, so a client
/// resumes on any of them: the first secret seals, every secret opens. Rotate by putting a
/// new secret first on every server, then dropping the last once tickets under it have
/// expired (`lifetime` seconds, which clients are told).
///
/// A ticket opens only under the `scope` it was sealed in: the keys are derived from each
/// secret and the scope. A server gives as its scope everything a resumed session skips or
/// keeps (its certificates, whether and against which CAs it requires client certificates),
/// so that a session made where no client certificate was asked for never resumes where one
/// is required, while servers configured alike resume each other's. rustls itself checks only
/// the suite and the server name when it resumes.
pub fn shared_ticketer(
    secrets: &[[u8; 32]],
    lifetime: u32,
    scope: &[u8],
) -> Result<Arc<dyn ProducesTickets>, Error> {
    if secrets.is_empty() {
        return Err(Error::General("no ticket key".into()));
    }
    Ok(Arc::new(SharedTickets {
        keys: secrets.iter().map(|s| from_secret(s, scope)).collect(),
        lifetime,
    }))
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

    #[test]
    fn shared_tickets_open_on_every_server_holding_the_key() {
        let (a, b) = ([1u8; 32], [2u8; 32]);
        let one = shared_ticketer(&[a], 3600, b"site").unwrap();
        let other = shared_ticketer(&[a], 3600, b"site").unwrap();
        let sealed = one.encrypt(b"state").unwrap();
        assert_eq!(other.decrypt(&sealed).unwrap(), b"state");
        // Rotated: a new key seals, the old one still opens.
        let rotated = shared_ticketer(&[b, a], 3600, b"site").unwrap();
        assert_eq!(rotated.decrypt(&sealed).unwrap(), b"state");
        let new = rotated.encrypt(b"state").unwrap();
        assert!(one.decrypt(&new).is_none());
        assert_ne!(new[..16], sealed[..16]);
        assert!(
            shared_ticketer(&[b], 3600, b"site")
                .unwrap()
                .decrypt(&sealed)
                .is_none()
        );
        assert!(shared_ticketer(&[], 3600, b"site").is_err());
    }

    #[test]
    fn a_ticket_opens_only_in_the_scope_that_sealed_it() {
        let key = [7u8; 32];
        let open = shared_ticketer(&[key], 3600, b"no client certificates").unwrap();
        let sealed = open.encrypt(b"state").unwrap();
        for other in [
            &b"client certificates from CA 1"[..],
            b"",
            b"no client certificate",
        ] {
            let t = shared_ticketer(&[key], 3600, other).unwrap();
            assert!(t.decrypt(&sealed).is_none(), "{other:?}");
            assert_ne!(t.encrypt(b"state").unwrap()[..16], sealed[..16]);
        }
        let same = shared_ticketer(&[key], 3600, b"no client certificates").unwrap();
        assert_eq!(same.decrypt(&sealed).unwrap(), b"state");
    }
}
