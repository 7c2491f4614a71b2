//! The handshake messages TLCP exchanges, parsed from and written to their wire forms.

use crate::codec::{Reader, put_u16, put_vec8, put_vec16, put_vec24};
use crate::error::Error;
use crate::record::VERSION;

pub(crate) const CLIENT_HELLO: u8 = 1;
pub(crate) const SERVER_HELLO: u8 = 2;
pub(crate) const CERTIFICATE: u8 = 11;
pub(crate) const SERVER_KEY_EXCHANGE: u8 = 12;
pub(crate) const CERTIFICATE_REQUEST: u8 = 13;
pub(crate) const SERVER_HELLO_DONE: u8 = 14;
pub(crate) const CERTIFICATE_VERIFY: u8 = 15;
pub(crate) const CLIENT_KEY_EXCHANGE: u8 = 16;
pub(crate) const FINISHED: u8 = 20;
pub(crate) const HELLO_REQUEST: u8 = 0;

/// The certificate type asked for in CertificateRequest: ecdsa_sign (64), as the SM2 peers send.
pub(crate) const ECDSA_SIGN: u8 = 64;
/// TLCP's ECDHE parameters name the SM2 curve as TLS group 0x0029 (curveSM2).
pub(crate) const NAMED_CURVE: u8 = 3;
pub(crate) const CURVE_SM2: u16 = 0x0029;
/// Largest handshake message accepted (a certificate chain fits many times over).
pub(crate) const MAX_MESSAGE: usize = 1 << 17;

/// A handshake message with its type and 3-byte length.
pub(crate) fn frame(typ: u8, body: &[u8]) -> Vec<u8> {
    let mut out = vec![typ];
    put_vec24(&mut out, body);
    out
}

pub(crate) struct ClientHello {
    pub(crate) random: [u8; 32],
    pub(crate) session_id: Vec<u8>,
    pub(crate) suites: Vec<u16>,
    pub(crate) extensions: Vec<(u16, Vec<u8>)>,
}

fn put_extensions(out: &mut Vec<u8>, ext: &[(u16, Vec<u8>)]) {
    if ext.is_empty() {
        return;
    }
    let mut all = Vec::new();
    for (t, v) in ext {
        put_u16(&mut all, *t);
        put_vec16(&mut all, v);
    }
    put_vec16(out, &all);
}

fn read_extensions(r: &mut Reader<'_>) -> Result<Vec<(u16, Vec<u8>)>, Error> {
    let mut out = Vec::new();
    if r.is_empty() {
        return Ok(out);
    }
    let mut e = Reader::new(r.vec16("extensions")?);
    while !e.is_empty() {
        let t = e.u16("extension type")?;
        let v = e.vec16("extension")?;
        if out.iter().any(|(x, _)| *x == t) {
            return Err(Error::Decode("extensions (one repeated)"));
        }
        out.push((t, v.to_vec()));
    }
    Ok(out)
}

fn random(r: &mut Reader<'_>) -> Result<[u8; 32], Error> {
    Ok(r.take(32, "random")?.try_into().expect("32 bytes"))
}

fn session_id(r: &mut Reader<'_>) -> Result<Vec<u8>, Error> {
    let id = r.vec8("session id")?;
    if id.len() > 32 {
        return Err(Error::Decode("session id (over 32 bytes)"));
    }
    Ok(id.to_vec())
}

impl ClientHello {
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut b = Vec::new();
        put_u16(&mut b, VERSION);
        b.extend_from_slice(&self.random);
        put_vec8(&mut b, &self.session_id);
        let mut s = Vec::new();
        for id in &self.suites {
            put_u16(&mut s, *id);
        }
        put_vec16(&mut b, &s);
        put_vec8(&mut b, &[0]);
        put_extensions(&mut b, &self.extensions);
        frame(CLIENT_HELLO, &b)
    }

    /// The hello and the version the client asked for.
    pub(crate) fn parse(body: &[u8]) -> Result<(ClientHello, u16), Error> {
        let mut r = Reader::new(body);
        let version = r.u16("client version")?;
        let random = random(&mut r)?;
        let session_id = session_id(&mut r)?;
        let s = r.vec16("cipher suites")?;
        if s.is_empty() || !s.len().is_multiple_of(2) {
            return Err(Error::Decode("cipher suites"));
        }
        let suites = s
            .chunks(2)
            .map(|c| u16::from_be_bytes([c[0], c[1]]))
            .collect();
        let compression = r.vec8("compression methods")?;
        if !compression.contains(&0) {
            return Err(Error::IllegalParameter("no null compression offered"));
        }
        let extensions = read_extensions(&mut r)?;
        r.end("client hello (trailing bytes)")?;
        Ok((
            ClientHello {
                random,
                session_id,
                suites,
                extensions,
            },
            version,
        ))
    }
}

pub(crate) struct ServerHello {
    pub(crate) random: [u8; 32],
    pub(crate) session_id: Vec<u8>,
    pub(crate) suite: u16,
}

impl ServerHello {
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut b = Vec::new();
        put_u16(&mut b, VERSION);
        b.extend_from_slice(&self.random);
        put_vec8(&mut b, &self.session_id);
        put_u16(&mut b, self.suite);
        b.push(0);
        frame(SERVER_HELLO, &b)
    }

    pub(crate) fn parse(body: &[u8]) -> Result<ServerHello, Error> {
        let mut r = Reader::new(body);
        let version = r.u16("server version")?;
        if version != VERSION {
            return Err(Error::ProtocolVersion(version));
        }
        let random = random(&mut r)?;
        let session_id = session_id(&mut r)?;
        let suite = r.u16("cipher suite")?;
        if r.u8("compression method")? != 0 {
            return Err(Error::IllegalParameter("compression method"));
        }
        // Extensions, if any, are read and ignored: none was asked for that needs an answer.
        read_extensions(&mut r)?;
        r.end("server hello (trailing bytes)")?;
        Ok(ServerHello {
            random,
            session_id,
            suite,
        })
    }
}

/// Certificate: DER certificates, the signing certificate first, then the encryption one.
pub(crate) fn encode_certificates(chain: &[&[u8]]) -> Vec<u8> {
    let mut all = Vec::new();
    for c in chain {
        put_vec24(&mut all, c);
    }
    let mut b = Vec::new();
    put_vec24(&mut b, &all);
    frame(CERTIFICATE, &b)
}

pub(crate) fn parse_certificates(body: &[u8]) -> Result<Vec<Vec<u8>>, Error> {
    let mut r = Reader::new(body);
    let mut list = Reader::new(r.vec24("certificate list")?);
    r.end("certificate message (trailing bytes)")?;
    let mut out = Vec::new();
    while !list.is_empty() {
        let c = list.vec24("certificate")?;
        if c.is_empty() {
            return Err(Error::Decode("certificate (empty)"));
        }
        out.push(c.to_vec());
    }
    Ok(out)
}

/// CertificateRequest: the certificate types, then the acceptable CAs' names (DER).
pub(crate) fn encode_certificate_request(ca_names: &[Vec<u8>]) -> Vec<u8> {
    let mut b = Vec::new();
    put_vec8(&mut b, &[ECDSA_SIGN]);
    let mut names = Vec::new();
    for n in ca_names {
        put_vec16(&mut names, n);
    }
    put_vec16(&mut b, &names);
    frame(CERTIFICATE_REQUEST, &b)
}

pub(crate) fn parse_certificate_request(body: &[u8]) -> Result<(), Error> {
    let mut r = Reader::new(body);
    let types = r.vec8("certificate types")?;
    if types.is_empty() {
        return Err(Error::Decode("certificate types (none)"));
    }
    let mut names = Reader::new(r.vec16("certificate authorities")?);
    while !names.is_empty() {
        names.vec16("distinguished name")?;
    }
    r.end("certificate request (trailing bytes)")
}

/// A signature with a 2-byte length (ServerKeyExchange's tail, CertificateVerify).
pub(crate) fn parse_signature<'a>(
    r: &mut Reader<'a>,
    what: &'static str,
) -> Result<&'a [u8], Error> {
    let s = r.vec16(what)?;
    r.end(what)?;
    Ok(s)
}

/// ECDHE parameters as both sides send them: named curve SM2, then the 65-byte point.
pub(crate) fn encode_ecdh_params(point: &[u8; 65]) -> Vec<u8> {
    let mut b = vec![NAMED_CURVE];
    put_u16(&mut b, CURVE_SM2);
    put_vec8(&mut b, point);
    b
}

pub(crate) fn parse_ecdh_params<'a>(r: &mut Reader<'a>) -> Result<&'a [u8], Error> {
    if r.u8("curve type")? != NAMED_CURVE {
        return Err(Error::IllegalParameter(
            "ECDHE curve type (not a named curve)",
        ));
    }
    if r.u16("named curve")? != CURVE_SM2 {
        return Err(Error::IllegalParameter("ECDHE curve (not SM2)"));
    }
    let point = r.vec8("ECDHE point")?;
    if point.len() != 65 || point[0] != 4 {
        return Err(Error::IllegalParameter(
            "ECDHE point (not 65-byte uncompressed)",
        ));
    }
    Ok(point)
}
