//! What ends a connection: each error names the alert it sends (or the alert the peer sent),
//! and says in words what went wrong.

use core::fmt;

/// The TLS alert descriptions TLCP uses (GB/T 38636 keeps TLS 1.1's, adds a few of its own).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Alert {
    /// 0: the peer is closing the connection cleanly.
    CloseNotify,
    /// 10
    UnexpectedMessage,
    /// 20
    BadRecordMac,
    /// 22
    RecordOverflow,
    /// 40
    HandshakeFailure,
    /// 42
    BadCertificate,
    /// 43
    UnsupportedCertificate,
    /// 44
    CertificateRevoked,
    /// 45
    CertificateExpired,
    /// 46
    CertificateUnknown,
    /// 47
    IllegalParameter,
    /// 48
    UnknownCa,
    /// 50
    DecodeError,
    /// 51
    DecryptError,
    /// 70
    ProtocolVersion,
    /// 80
    InternalError,
    /// 100
    NoRenegotiation,
    /// Any other value.
    Other(u8),
}

impl Alert {
    pub(crate) fn code(self) -> u8 {
        match self {
            Alert::CloseNotify => 0,
            Alert::UnexpectedMessage => 10,
            Alert::BadRecordMac => 20,
            Alert::RecordOverflow => 22,
            Alert::HandshakeFailure => 40,
            Alert::BadCertificate => 42,
            Alert::UnsupportedCertificate => 43,
            Alert::CertificateRevoked => 44,
            Alert::CertificateExpired => 45,
            Alert::CertificateUnknown => 46,
            Alert::IllegalParameter => 47,
            Alert::UnknownCa => 48,
            Alert::DecodeError => 50,
            Alert::DecryptError => 51,
            Alert::ProtocolVersion => 70,
            Alert::InternalError => 80,
            Alert::NoRenegotiation => 100,
            Alert::Other(c) => c,
        }
    }

    pub(crate) fn from_code(c: u8) -> Alert {
        [
            Alert::CloseNotify,
            Alert::UnexpectedMessage,
            Alert::BadRecordMac,
            Alert::RecordOverflow,
            Alert::HandshakeFailure,
            Alert::BadCertificate,
            Alert::UnsupportedCertificate,
            Alert::CertificateRevoked,
            Alert::CertificateExpired,
            Alert::CertificateUnknown,
            Alert::IllegalParameter,
            Alert::UnknownCa,
            Alert::DecodeError,
            Alert::DecryptError,
            Alert::ProtocolVersion,
            Alert::InternalError,
            Alert::NoRenegotiation,
        ]
        .into_iter()
        .find(|a| a.code() == c)
        .unwrap_or(Alert::Other(c))
    }
}

/// Why a connection failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A message or record that does not parse (the field is named).
    Decode(&'static str),
    /// A message that does not belong at this point of the handshake.
    UnexpectedMessage(&'static str),
    /// A record whose MAC, padding or tag does not check (which of them is not said).
    BadRecordMac,
    /// A record longer than TLCP allows.
    RecordOverflow,
    /// A protocol version other than TLCP's 1.1 (0x0101).
    ProtocolVersion(u16),
    /// No suite in common, or a parameter the peer chose that was not offered.
    HandshakeFailure(String),
    /// A value out of range (a point not on the curve, a suite not offered...).
    IllegalParameter(&'static str),
    /// A certificate refused: the reason, with the certificate's role.
    Certificate(String),
    /// A signature, Finished or decrypted secret that does not check.
    DecryptError(&'static str),
    /// The peer sent this alert.
    PeerAlert(Alert),
    /// The peer tried to renegotiate, which this implementation refuses.
    Renegotiation,
    /// The transport failed.
    Io(std::io::Error),
    /// The connection was closed (close_notify sent or received) or has failed before.
    Closed,
    /// Our own failure (random generator, signing).
    Internal(&'static str),
}

impl Error {
    /// The alert this error sends to the peer, if any.
    pub fn alert(&self) -> Option<Alert> {
        Some(match self {
            Error::Decode(_) => Alert::DecodeError,
            Error::UnexpectedMessage(_) => Alert::UnexpectedMessage,
            Error::BadRecordMac => Alert::BadRecordMac,
            Error::RecordOverflow => Alert::RecordOverflow,
            Error::ProtocolVersion(_) => Alert::ProtocolVersion,
            Error::HandshakeFailure(_) => Alert::HandshakeFailure,
            Error::IllegalParameter(_) => Alert::IllegalParameter,
            Error::Certificate(_) => Alert::BadCertificate,
            Error::DecryptError(_) => Alert::DecryptError,
            Error::Renegotiation => Alert::NoRenegotiation,
            Error::Internal(_) => Alert::InternalError,
            Error::PeerAlert(_) | Error::Io(_) | Error::Closed => return None,
        })
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Decode(what) => write!(f, "malformed {what}"),
            Error::UnexpectedMessage(what) => write!(f, "unexpected message: {what}"),
            Error::BadRecordMac => f.write_str("a record failed its integrity check"),
            Error::RecordOverflow => f.write_str("a record longer than TLCP allows"),
            Error::ProtocolVersion(v) => {
                write!(f, "protocol version {v:#06x}, not TLCP's 0x0101")
            }
            Error::HandshakeFailure(why) => write!(f, "handshake failure: {why}"),
            Error::IllegalParameter(what) => write!(f, "illegal parameter: {what}"),
            Error::Certificate(why) => write!(f, "certificate refused: {why}"),
            Error::DecryptError(what) => write!(f, "{what} does not verify"),
            Error::PeerAlert(a) => write!(f, "the peer sent alert {} ({a:?})", a.code()),
            Error::Renegotiation => f.write_str("the peer asked to renegotiate (refused)"),
            Error::Io(e) => write!(f, "transport: {e}"),
            Error::Closed => f.write_str("the connection is closed"),
            Error::Internal(what) => write!(f, "internal error: {what}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io(e)
    }
}
