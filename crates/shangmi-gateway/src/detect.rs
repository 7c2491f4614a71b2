//! Which protocol a client speaks, from its first flight alone: TLCP (GB/T 38636), TLS 1.3
//! with the SM suites (RFC 8998), or international TLS, and the server name it asks for.
//!
//! Nothing is consumed: the caller buffers what arrived, asks [`detect`] until it answers,
//! then hands every buffered byte to the protocol chosen. A ClientHello may span several
//! records (post-quantum key shares push it past 4 KiB), so the handshake message is
//! reassembled from consecutive handshake records, up to a bound.

/// TLCP's record version.
const TLCP_VERSION: u16 = 0x0101;
/// TLS_SM4_GCM_SM3, TLS_SM4_CCM_SM3.
const SM_SUITES: [u16; 2] = [0x00C6, 0x00C7];
const CURVE_SM2: u16 = 0x0029;
const CURVE_SM2_MLKEM768: u16 = 0x11EE;
/// curveSM2, curveSM2MLKEM768.
const SM_GROUPS: [u16; 2] = [CURVE_SM2, CURVE_SM2_MLKEM768];
const SM2SIG_SM3: u16 = 0x0708;
const TLS13: u16 = 0x0304;

/// The largest first flight read before deciding, record headers included (a ClientHello
/// with every post-quantum key share a client sends today is under 4 KiB; a handshake
/// message can declare up to 16 MiB).
pub const MAX_FIRST_FLIGHT: usize = 64 << 10;

/// What the first flight says so far.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Detected {
    /// Not enough bytes yet: read more (at least this many in all) and ask again.
    NeedMore(usize),
    /// A ClientHello, read whole.
    Hello(Hello),
    /// Not the start of a TLS or TLCP handshake, or a malformed one: close the connection.
    Invalid(&'static str),
}

/// What a client's ClientHello offers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Hello {
    /// The record layer said TLCP (version 0x0101).
    pub tlcp_record: bool,
    /// The server name (SNI), when sent: a host name in ASCII, lower case.
    pub server_name: Option<String>,
    /// TLS 1.3 with an SM suite, an SM group (curveSM2 or the hybrid) and sm2sig_sm3.
    pub rfc8998: bool,
    /// TLCP suites among the cipher suites (TLCP clients, and browsers that offer them inside
    /// a TLS hello).
    pub tlcp_suites: bool,
    /// The groups the client supports, in its order of preference.
    pub groups: Vec<u16>,
    /// TLS 1.3 among its supported versions.
    pub tls13: bool,
    /// The SM2 points of the client's key shares, when it sent them in a well-formed
    /// key_share: the curveSM2 share, and the curveSM2MLKEM768 share's first 65 bytes.
    pub sm2_points: SmPoints,
}

/// The SM2 points a ClientHello's key shares carry.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SmPoints {
    /// The curveSM2 share.
    pub curve_sm2: Option<Vec<u8>>,
    /// The curveSM2MLKEM768 share's curveSM2 half (its first 65 bytes).
    pub hybrid: Option<Vec<u8>>,
}

/// The protocol a connection is served with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// TLCP with a signing and an encryption certificate.
    Tlcp,
    /// TLS 1.3 with the SM suites and an SM2 certificate.
    Rfc8998,
    /// TLS 1.2 and 1.3 with the international suites.
    International,
}

impl Hello {
    /// The protocol to answer with, given what the site can serve: a TLCP record goes to TLCP;
    /// a hello offering RFC 8998 to RFC 8998 when the site has an SM2 certificate; TLCP suites
    /// in a TLS hello to TLCP; everything else to international TLS. A site that serves one
    /// protocol answers every client with it, so a client that cannot speak it still gets
    /// that protocol's alert rather than a silent close. `None` when the site serves several
    /// and none of them fits.
    pub fn choose(
        &self,
        has_tlcp: bool,
        has_sm2: bool,
        has_international: bool,
    ) -> Option<Protocol> {
        let fits = if self.tlcp_record {
            has_tlcp.then_some(Protocol::Tlcp)
        } else if self.rfc8998 && has_sm2 {
            Some(Protocol::Rfc8998)
        } else if self.tlcp_suites && has_tlcp {
            Some(Protocol::Tlcp)
        } else {
            has_international.then_some(Protocol::International)
        };
        fits.or(match (has_tlcp, has_sm2, has_international) {
            (true, false, false) => Some(Protocol::Tlcp),
            (false, true, false) => Some(Protocol::Rfc8998),
            (false, false, true) => Some(Protocol::International),
            _ => None,
        })
    }
}

impl Hello {
    /// The client's SM2 point a TLS 1.3 server offering `server_groups` will agree with:
    /// when curveSM2 or curveSM2MLKEM768 is the first of the client's groups the server has
    /// (rustls follows the client's order) and the client sent a share for it.
    pub fn sm2_point(&self, server_groups: &[u16]) -> Option<&[u8]> {
        let first = self.groups.iter().find(|g| server_groups.contains(g))?;
        match *first {
            CURVE_SM2 => self.sm2_points.curve_sm2.as_deref(),
            CURVE_SM2_MLKEM768 => self.sm2_points.hybrid.as_deref(),
            _ => None,
        }
    }
}

/// Reads the first flight buffered so far (from its start: for a flight read in pieces,
/// [`Detector`] keeps its place).
pub fn detect(buf: &[u8]) -> Detected {
    Detector::default().detect(buf)
}

/// The first-flight decision kept across reads: each call looks only at the bytes that
/// arrived since the last, so the work is linear in the flight however small its records
/// (1-byte records are legal, and cost an attacker little to send).
#[derive(Default)]
pub struct Detector {
    /// Where the next record starts.
    at: usize,
    /// The handshake bytes of the records so far.
    message: Vec<u8>,
    record_version: Option<u16>,
}

impl Detector {
    /// The decision on `buf`: everything read so far, the bytes of earlier calls unchanged at
    /// its start. Once it has answered `Hello` or `Invalid` it has nothing more to say.
    pub fn detect(&mut self, buf: &[u8]) -> Detected {
        // Handshake records until the first handshake message is whole.
        let whole = loop {
            let at = self.at;
            // Tiny records cost 5 bytes of header each: the bound counts them too.
            if at + 5 > MAX_FIRST_FLIGHT {
                return Detected::Invalid("a first flight larger than any client sends");
            }
            let Some(header) = buf.get(at..at + 5) else {
                return Detected::NeedMore(at + 5);
            };
            if header[0] != 22 {
                return Detected::Invalid("the first record is not a handshake");
            }
            let version = u16::from_be_bytes([header[1], header[2]]);
            if version != TLCP_VERSION && !(0x0300..=0x0304).contains(&version) {
                return Detected::Invalid("neither a TLS nor a TLCP record version");
            }
            let len = usize::from(u16::from_be_bytes([header[3], header[4]]));
            if len == 0 || len > 16384 + 2048 {
                return Detected::Invalid("a handshake record of impossible length");
            }
            let first = *self.record_version.get_or_insert(version);
            if (first == TLCP_VERSION) != (version == TLCP_VERSION) {
                return Detected::Invalid("TLS and TLCP records in one flight");
            }
            if at + 5 + len > MAX_FIRST_FLIGHT {
                return Detected::Invalid("a first flight larger than any client sends");
            }
            let Some(body) = buf.get(at + 5..at + 5 + len) else {
                return Detected::NeedMore(at + 5 + len);
            };
            self.message.extend_from_slice(body);
            self.at = at + 5 + len;
            if self.message.len() >= 4 {
                let m = &self.message;
                if m[0] != 1 {
                    return Detected::Invalid("the first handshake message is not a ClientHello");
                }
                let declared = usize::from(m[1]) << 16 | usize::from(m[2]) << 8 | usize::from(m[3]);
                let want = 4 + declared;
                if want > MAX_FIRST_FLIGHT {
                    return Detected::Invalid("a ClientHello larger than any client sends");
                }
                if m.len() >= want {
                    break want;
                }
            }
        };
        let tlcp_record = self.record_version == Some(TLCP_VERSION);
        match parse_hello(&self.message[4..whole]) {
            Some(mut h) => {
                h.tlcp_record = tlcp_record;
                Detected::Hello(h)
            }
            None => Detected::Invalid("a malformed ClientHello"),
        }
    }
}

/// A cursor over a byte string: every read checks its bounds.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }

    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }

    fn u16(&mut self) -> Option<u16> {
        self.take(2).map(|b| u16::from_be_bytes([b[0], b[1]]))
    }

    fn vec8(&mut self) -> Option<&'a [u8]> {
        let n = self.u8()?;
        self.take(usize::from(n))
    }

    fn vec16(&mut self) -> Option<&'a [u8]> {
        let n = self.u16()?;
        self.take(usize::from(n))
    }

    fn u16s(bytes: &[u8]) -> Option<Vec<u16>> {
        if !bytes.len().is_multiple_of(2) {
            return None;
        }
        Some(
            bytes
                .chunks_exact(2)
                .map(|c| u16::from_be_bytes([c[0], c[1]]))
                .collect(),
        )
    }
}

fn parse_hello(body: &[u8]) -> Option<Hello> {
    let mut r = Reader(body);
    r.u16()?; // legacy_version (TLCP: 0x0101; TLS 1.3: 0x0303)
    r.take(32)?; // random
    r.vec8()?; // session id
    let suites = Reader::u16s(r.vec16()?)?;
    r.vec8()?; // compression methods
    let mut hello = Hello {
        tlcp_suites: suites
            .iter()
            .any(|&s| shangmi_tlcp::Suite::from_id(s).is_some()),
        ..Hello::default()
    };
    // No extensions at all is a valid hello (TLCP clients send none).
    if r.0.is_empty() {
        return Some(hello);
    }
    let mut exts = Reader(r.vec16()?);
    if !r.0.is_empty() {
        return None;
    }
    let (mut sigalgs, mut versions) = (Vec::new(), Vec::new());
    let mut seen = Vec::new();
    while !exts.0.is_empty() {
        let kind = exts.u16()?;
        let data = exts.vec16()?;
        if seen.contains(&kind) {
            return None; // RFC 8446 4.2: no extension twice
        }
        seen.push(kind);
        let mut d = Reader(data);
        match kind {
            0 => hello.server_name = server_name(&mut d)?,
            10 => hello.groups = Reader::u16s(d.vec16()?)?,
            13 => sigalgs = Reader::u16s(d.vec16()?)?,
            43 => versions = Reader::u16s(d.vec8()?)?,
            // A malformed key_share is rustls' to refuse, with the right alert.
            51 => hello.sm2_points = sm2_points(&mut d).unwrap_or_default(),
            _ => {}
        }
    }
    hello.tls13 = versions.contains(&TLS13);
    hello.rfc8998 = hello.tls13
        && suites.iter().any(|s| SM_SUITES.contains(s))
        && hello.groups.iter().any(|g| SM_GROUPS.contains(g))
        && sigalgs.contains(&SM2SIG_SM3);
    Some(hello)
}

/// RFC 8446's key_share (client_shares): the first entry of each SM group, as its point.
fn sm2_points(d: &mut Reader<'_>) -> Option<SmPoints> {
    let mut list = Reader(d.vec16()?);
    let mut points = SmPoints::default();
    while !list.0.is_empty() {
        let group = list.u16()?;
        let share = list.vec16()?;
        let slot = match group {
            CURVE_SM2 => &mut points.curve_sm2,
            CURVE_SM2_MLKEM768 => &mut points.hybrid,
            _ => continue,
        };
        if slot.is_none() {
            // The hybrid's point is its first 65 bytes; a share too short for it is left to
            // rustls to refuse.
            let point = if group == CURVE_SM2 {
                Some(share)
            } else {
                share.get(..65)
            };
            *slot = point.map(<[u8]>::to_vec);
        }
    }
    Some(points)
}

/// RFC 6066's server_name: the first host_name entry, as an ASCII host name.
fn server_name(d: &mut Reader<'_>) -> Option<Option<String>> {
    let mut list = Reader(d.vec16()?);
    while !list.0.is_empty() {
        let kind = list.u8()?;
        let name = list.vec16()?;
        if kind == 0 {
            let ok = !name.is_empty()
                && name.len() <= 253
                && name
                    .iter()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_'));
            if !ok {
                return None;
            }
            let text = String::from_utf8(name.to_ascii_lowercase()).ok()?;
            return Some(Some(text));
        }
    }
    Some(None)
}
