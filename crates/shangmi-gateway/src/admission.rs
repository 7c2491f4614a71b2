//! Who may open a connection, and who may send: the connection count (all listeners, and per
//! client address), handshakes begun per second per address, requests per second per address,
//! and when the gateway is full, which connection makes room.
//!
//! An address is an IPv4 address or an IPv6 /64 (a host's share of a network; one IPv6 host
//! can take any address of its /64). The rate tables hold at most [`MAX_ADDRESSES`] addresses:
//! when full, the half used least recently is forgotten, so a sweep over many addresses costs
//! bounded memory and amortised constant time per connection.
//!
//! When every connection slot is taken, a connection still in its first flight or handshake
//! (the oldest) is closed to make room; only when none is, the new one is refused. Stalled
//! handshakes are what a flood is made of, and a real client's handshake takes milliseconds.

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::sync::Notify;

use crate::config::Limits;

/// Addresses a rate table remembers at most.
pub const MAX_ADDRESSES: usize = 1 << 16;

/// A client address as limits count it: IPv4, or the /64 of IPv6 (an IPv4-mapped IPv6
/// address is its IPv4 address).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Address(u128);

impl Address {
    /// The address `ip` counts as.
    pub fn of(ip: IpAddr) -> Address {
        match ip {
            IpAddr::V4(v4) => Address(u128::from(u32::from(v4))),
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => Address(u128::from(u32::from(v4))),
                None => Address(u128::from(v6) >> 64 | 1 << 127),
            },
        }
    }
}

/// Token buckets by address, at most [`MAX_ADDRESSES`], the least recently used half dropped
/// when full.
#[derive(Default)]
pub struct Buckets {
    map: HashMap<Address, Bucket>,
    clock: u64,
}

struct Bucket {
    tokens: f64,
    last: Instant,
    used: u64,
}

impl Buckets {
    /// Takes a token of `address`'s bucket (refilled at `per_second`, holding `burst`): whether
    /// there was one.
    pub fn take(&mut self, address: Address, per_second: f64, burst: f64, now: Instant) -> bool {
        if self.map.len() >= MAX_ADDRESSES && !self.map.contains_key(&address) {
            let mut ages: Vec<u64> = self.map.values().map(|b| b.used).collect();
            let (_, cut, _) = ages.select_nth_unstable(MAX_ADDRESSES / 2);
            let cut = *cut;
            self.map.retain(|_, b| b.used > cut);
        }
        self.clock += 1;
        let b = self.map.entry(address).or_insert(Bucket {
            tokens: burst,
            last: now,
            used: 0,
        });
        b.used = self.clock;
        b.tokens = (b.tokens + now.duration_since(b.last).as_secs_f64() * per_second).min(burst);
        b.last = now;
        if b.tokens >= 1.0 {
            b.tokens -= 1.0;
            true
        } else {
            false
        }
    }

    /// How many addresses are remembered.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

#[derive(Default)]
struct Table {
    /// Open connections by address (an address with none is removed).
    open: HashMap<Address, usize>,
    /// All open connections.
    total: usize,
    handshakes: Buckets,
    requests: Buckets,
    /// Connections still before the end of their handshake, oldest first, with what closes
    /// them.
    pending: BTreeMap<u64, Arc<Notify>>,
    next: u64,
}

/// The gateway's admission state.
#[derive(Default)]
pub struct Admission {
    table: Mutex<Table>,
}

/// Why a connection was not admitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Every slot is taken by connections past their handshake.
    Full,
    /// Its address has `max_connections_per_address` open.
    AddressFull,
    /// Its address began more handshakes than `handshakes_per_second` allows.
    HandshakeRate,
}

impl Refusal {
    /// For logs and the metric's label.
    pub fn reason(self) -> &'static str {
        match self {
            Refusal::Full => "full",
            Refusal::AddressFull => "address full",
            Refusal::HandshakeRate => "handshake rate",
        }
    }
}

/// An admitted connection's place: given back when dropped.
pub struct Admitted {
    admission: Arc<Admission>,
    address: Address,
    id: u64,
    /// Notified when the connection is shed to make room (while it has not finished its
    /// handshake).
    pub shed: Arc<Notify>,
    established: bool,
}

impl Admission {
    /// Admits a connection from `ip` under `limits`, or says why not.
    pub fn admit(self: &Arc<Self>, ip: IpAddr, limits: &Limits) -> Result<Admitted, Refusal> {
        let address = Address::of(ip);
        let now = Instant::now();
        let mut t = self.table.lock().unwrap_or_else(|p| p.into_inner());
        let per_address = limits.max_connections_per_address;
        if per_address > 0 && t.open.get(&address).copied().unwrap_or(0) >= per_address {
            return Err(Refusal::AddressFull);
        }
        if limits.handshakes_per_second > 0.0
            && !t.handshakes.take(
                address,
                limits.handshakes_per_second,
                limits.handshake_burst,
                now,
            )
        {
            return Err(Refusal::HandshakeRate);
        }
        if t.total >= limits.max_connections {
            // The oldest connection still in its handshake makes room; it leaves the table
            // when it ends, so the count is over by one until then.
            let oldest = t.pending.keys().next().copied();
            match oldest {
                Some(id) => {
                    if let Some(n) = t.pending.remove(&id) {
                        n.notify_one();
                    }
                }
                None => return Err(Refusal::Full),
            }
        }
        t.total += 1;
        *t.open.entry(address).or_default() += 1;
        let id = t.next;
        t.next += 1;
        let shed = Arc::new(Notify::new());
        t.pending.insert(id, shed.clone());
        Ok(Admitted {
            admission: self.clone(),
            address,
            id,
            shed,
            established: false,
        })
    }

    /// Whether `ip` may send one more request (or open one more TCP relay) at `per_second`
    /// with `burst`; always when `per_second` is 0.
    pub fn allow_request(&self, ip: IpAddr, per_second: f64, burst: f64) -> bool {
        if per_second <= 0.0 {
            return true;
        }
        let mut t = self.table.lock().unwrap_or_else(|p| p.into_inner());
        t.requests
            .take(Address::of(ip), per_second, burst, Instant::now())
    }

    /// Connections open now.
    pub fn open(&self) -> usize {
        self.table.lock().unwrap_or_else(|p| p.into_inner()).total
    }
}

impl Admitted {
    /// The handshake is done: the connection is no longer shed to make room.
    pub fn established(&mut self) {
        if !self.established {
            self.established = true;
            let mut t = self
                .admission
                .table
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            t.pending.remove(&self.id);
        }
    }
}

impl Drop for Admitted {
    fn drop(&mut self) {
        let mut t = self
            .admission
            .table
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        t.pending.remove(&self.id);
        t.total -= 1;
        if let Some(n) = t.open.get_mut(&self.address) {
            *n -= 1;
            if *n == 0 {
                t.open.remove(&self.address);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv6_addresses_count_by_their_64() {
        let a = |s: &str| Address::of(s.parse().unwrap());
        assert_eq!(a("2001:db8:1:2::1"), a("2001:db8:1:2:ffff::9"));
        assert_ne!(a("2001:db8:1:2::1"), a("2001:db8:1:3::1"));
        assert_eq!(a("::ffff:192.0.2.1"), a("192.0.2.1"));
        assert_ne!(a("192.0.2.1"), a("192.0.2.2"));
        // An IPv4 address never counts as an IPv6 /64.
        assert_ne!(a("0.0.0.1"), a("::1"));
    }

    #[test]
    fn the_rate_table_stays_bounded_and_keeps_the_recent() {
        let mut b = Buckets::default();
        let now = Instant::now();
        let recent = Address(u128::MAX);
        for i in 0..(3 * MAX_ADDRESSES as u128) {
            assert!(b.take(Address(i), 1.0, 2.0, now));
            if i % 1000 == 0 {
                assert!(b.take(recent, 1000.0, 1e9, now));
            }
            assert!(b.len() <= MAX_ADDRESSES);
        }
        // The address used all along was never forgotten: its bucket kept being drawn on.
        assert!(b.map.contains_key(&recent));
        // A bucket empties at its burst and refuses after.
        let one = Address(7);
        let mut b = Buckets::default();
        assert!(b.take(one, 0.001, 2.0, now));
        assert!(b.take(one, 0.001, 2.0, now));
        assert!(!b.take(one, 0.001, 2.0, now));
    }

    #[test]
    fn a_full_gateway_sheds_the_oldest_handshake_then_refuses() {
        let adm = Arc::new(Admission::default());
        let limits = Limits {
            max_connections: 2,
            max_connections_per_address: 0,
            ..Limits::default()
        };
        let ip: IpAddr = "192.0.2.1".parse().unwrap();
        let mut a = adm.admit(ip, &limits).unwrap();
        let b = adm.admit(ip, &limits).unwrap();
        a.established();
        // Full: b (still handshaking) is told to close, and c comes in.
        let c = adm.admit(ip, &limits).unwrap();
        assert!(futures_ready(&b.shed));
        drop(b);
        let mut c = c;
        c.established();
        // Full of established connections: refused.
        assert_eq!(adm.admit(ip, &limits).err(), Some(Refusal::Full));
        drop(a);
        assert!(adm.admit(ip, &limits).is_ok());
        drop(c);
        assert_eq!(adm.open(), 0);
    }

    #[test]
    fn one_address_holds_at_most_its_share() {
        let adm = Arc::new(Admission::default());
        let limits = Limits {
            max_connections_per_address: 2,
            ..Limits::default()
        };
        let ip: IpAddr = "2001:db8::1".parse().unwrap();
        let same_64: IpAddr = "2001:db8::2".parse().unwrap();
        let other: IpAddr = "2001:db8:0:1::1".parse().unwrap();
        let _a = adm.admit(ip, &limits).unwrap();
        let _b = adm.admit(same_64, &limits).unwrap();
        assert_eq!(adm.admit(ip, &limits).err(), Some(Refusal::AddressFull));
        assert!(adm.admit(other, &limits).is_ok());
    }

    /// Whether a notification is stored (a later `notified()` completes at once).
    fn futures_ready(n: &Notify) -> bool {
        let f = n.notified();
        let mut f = std::pin::pin!(f);
        let waker = std::task::Waker::noop();
        let mut cx = std::task::Context::from_waker(waker);
        f.as_mut().poll(&mut cx).is_ready()
    }
}
