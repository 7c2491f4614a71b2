//! curveSM2 agreements a server computes before rustls asks for them, so that a server with
//! many handshakes in flight can run their agreements together
//! ([`EphemeralSecret::diffie_hellman_many`]: eight at a time in IFMA lanes).
//!
//! rustls computes a server's key exchange inside `process_new_packets`, one connection at a
//! time, through [`SupportedKxGroup::start_and_complete`]. A server that has read a
//! ClientHello whole (the gateway does, to choose the protocol) takes its curveSM2 share out,
//! computes agreements for many shares with [`prepare_agreements`], then drives each
//! connection inside [`with_prepared`]: the server's `start_and_complete` (curveSM2's, and
//! curveSM2MLKEM768's for its ECDH half) uses the prepared result when its peer point is the
//! one rustls is completing, and computes as usual when it is not (a hello retry, another
//! group chosen). Each prepared result serves one handshake: using it consumes it, and an
//! unused one is wiped when dropped.

use std::cell::RefCell;

use rustls::{Error, PeerMisbehaved};
use shangmi::sm2::EphemeralSecret;
use zeroize::Zeroizing;

use crate::kx::{parse_key_share, take_ephemerals};

/// A server's curveSM2 agreement with one peer share, ready for rustls.
pub struct PreparedAgreement {
    peer: [u8; 65],
    share: [u8; 65],
    secret: Zeroizing<[u8; 32]>,
}

impl core::fmt::Debug for PreparedAgreement {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("PreparedAgreement").finish_non_exhaustive()
    }
}

impl PreparedAgreement {
    /// The server's key share, sent in its ServerHello.
    pub fn share(&self) -> &[u8; 65] {
        &self.share
    }

    /// The server's point and the shared x.
    pub(crate) fn into_parts(self) -> ([u8; 65], Zeroizing<[u8; 32]>) {
        (self.share, self.secret)
    }
}

/// The server's agreements with many ClientHellos' SM2 points (curveSM2 shares, or the first
/// 65 bytes of curveSM2MLKEM768 shares), each result in its point's place. Each takes a fresh
/// ephemeral key; a point that is not a valid curveSM2 share fails alone, as rustls would
/// fail it.
pub fn prepare_agreements(peer_shares: &[&[u8]]) -> Vec<Result<PreparedAgreement, Error>> {
    let peers: Vec<Result<_, Error>> = peer_shares.iter().map(|s| parse_key_share(s)).collect();
    let valid = peers.iter().filter(|p| p.is_ok()).count();
    let mut secrets = match take_ephemerals(valid) {
        Ok(s) => s.into_iter(),
        Err(e) => return peer_shares.iter().map(|_| Err(e.clone())).collect(),
    };
    let mut pairs = Vec::with_capacity(valid);
    let mut shares = Vec::with_capacity(valid);
    for p in peers.iter().flatten() {
        let secret = secrets.next().expect("one secret per valid share");
        shares.push(secret.public_key().to_uncompressed());
        pairs.push((secret, p));
    }
    let mut agreed = EphemeralSecret::diffie_hellman_many(pairs)
        .into_iter()
        .zip(shares);
    peers
        .iter()
        .zip(peer_shares)
        .map(|(p, bytes)| {
            p.as_ref().map_err(Clone::clone)?;
            let (x, share) = agreed.next().expect("one result per valid share");
            let x = x.map_err(|_| Error::from(PeerMisbehaved::InvalidKeyShare))?;
            let mut peer = [0u8; 65];
            peer.copy_from_slice(bytes);
            Ok(PreparedAgreement {
                peer,
                share,
                secret: Zeroizing::new(*x.as_bytes()),
            })
        })
        .collect()
}

thread_local! {
    static READY: RefCell<Option<PreparedAgreement>> = const { RefCell::new(None) };
}

/// Puts back what the thread held before, even when `f` unwinds.
struct Restore<'a> {
    slot: &'a mut Option<PreparedAgreement>,
    outer: Option<PreparedAgreement>,
}

impl Drop for Restore<'_> {
    fn drop(&mut self) {
        *self.slot = READY.with(|r| r.replace(self.outer.take()));
    }
}

/// Runs `f`, a call that may complete a server's curveSM2 key exchange (the connection's
/// `process_new_packets`, or a poll of a future that calls it), with `prepared` on hand on
/// this thread. If rustls completes the exchange with the prepared peer share, the result is
/// used and `prepared` is left empty; otherwise it is handed back for a later call.
pub fn with_prepared<R>(prepared: &mut Option<PreparedAgreement>, f: impl FnOnce() -> R) -> R {
    let outer = READY.with(|r| r.replace(prepared.take()));
    let _restore = Restore {
        slot: prepared,
        outer,
    };
    f()
}

/// The agreement prepared on this thread for the peer's SM2 point (the curveSM2 share, or
/// the hybrid share's first 65 bytes), if any (taking it).
pub(crate) fn take_prepared(peer_point: &[u8]) -> Option<PreparedAgreement> {
    READY.with(|r| {
        let mut r = r.borrow_mut();
        // The point is public: a plain comparison.
        if r.as_ref().is_some_and(|p| p.peer[..] == *peer_point) {
            r.take()
        } else {
            None
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls::crypto::SupportedKxGroup;

    fn client_share() -> (EphemeralSecret, [u8; 65]) {
        let s = EphemeralSecret::random().unwrap();
        let b = s.public_key().to_uncompressed();
        (s, b)
    }

    #[test]
    fn prepared_agreements_are_what_the_client_computes() {
        for n in [0usize, 1, 3, 8, 13] {
            let clients: Vec<_> = (0..n).map(|_| client_share()).collect();
            let shares: Vec<&[u8]> = clients.iter().map(|(_, b)| &b[..]).collect();
            let prepared = prepare_agreements(&shares);
            assert_eq!(prepared.len(), n);
            for ((secret, _), p) in clients.into_iter().zip(prepared) {
                let p = p.unwrap();
                let server = parse_key_share(p.share()).unwrap();
                let want = secret.diffie_hellman(&server).unwrap();
                assert_eq!(&p.secret[..], want.as_bytes());
            }
        }
    }

    #[test]
    fn a_bad_share_fails_alone() {
        let (_, good) = client_share();
        let mut off_curve = good;
        off_curve[64] ^= 1;
        let shares: Vec<&[u8]> = vec![&good, &off_curve, &good[..33], &good];
        let got = prepare_agreements(&shares);
        assert!(got[0].is_ok() && got[3].is_ok());
        assert!(got[1].is_err() && got[2].is_err());
        // Two handshakes with one share still get two ephemeral keys.
        assert_ne!(
            got[0].as_ref().unwrap().share(),
            got[3].as_ref().unwrap().share()
        );
    }

    #[test]
    fn rustls_gets_the_prepared_result_for_its_share_only() {
        let (client, share) = client_share();
        let (_, other) = client_share();
        let group = crate::kx::CurveSm2;
        let mut prepared = prepare_agreements(&[&share]).pop().unwrap().ok();
        let server_share = *prepared.as_ref().unwrap().share();

        // Another share: computed as usual, the prepared one kept for later.
        let done = with_prepared(&mut prepared, || group.start_and_complete(&other)).unwrap();
        assert_ne!(done.pub_key, server_share);
        assert!(prepared.is_some());

        // Outside `with_prepared` nothing is on hand.
        let done = group.start_and_complete(&share).unwrap();
        assert_ne!(done.pub_key, server_share);

        let done = with_prepared(&mut prepared, || group.start_and_complete(&share)).unwrap();
        assert!(prepared.is_none(), "used, so consumed");
        assert_eq!(done.pub_key, server_share);
        let want = client
            .diffie_hellman(&parse_key_share(&server_share).unwrap())
            .unwrap();
        assert_eq!(done.secret.secret_bytes(), want.as_bytes());
    }

    #[test]
    fn the_hybrid_takes_its_ecdh_half_prepared() {
        let hybrid = crate::hybrid::CurveSm2MlKem768;
        let client = hybrid.start().unwrap();
        let share = client.pub_key().to_vec();
        let mut prepared = prepare_agreements(&[&share[..65]]).pop().unwrap().ok();
        let point = *prepared.as_ref().unwrap().share();
        let done = with_prepared(&mut prepared, || hybrid.start_and_complete(&share)).unwrap();
        assert!(prepared.is_none(), "used, so consumed");
        assert_eq!(done.pub_key[..65], point);
        let secret = client.complete(&done.pub_key).unwrap();
        assert_eq!(secret.secret_bytes(), done.secret.secret_bytes());
    }

    #[test]
    fn nested_calls_restore_the_outer_agreement() {
        let (_, a) = client_share();
        let (_, b) = client_share();
        let mut got = prepare_agreements(&[&a, &b]).into_iter();
        let mut outer = got.next().unwrap().ok();
        let mut inner = got.next().unwrap().ok();
        with_prepared(&mut outer, || {
            with_prepared(&mut inner, || {});
            assert!(take_prepared(&a).is_some());
        });
        assert!(outer.is_none() && inner.is_some());
    }
}
