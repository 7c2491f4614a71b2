//! International TLS is not in this build (the `international` feature is off): a site that
//! asks for it is refused with the reason.

use std::ops::Range;
use std::sync::Arc;

use toml::Spanned;

use crate::config::{Pair, Problem, Source};
use crate::site::Ticketer;

pub(crate) fn config(
    src: &Source,
    span: Range<usize>,
    _pairs: &[Spanned<Pair>],
    _client_ca: Option<&(Range<usize>, Vec<u8>)>,
    _tickets: Option<&Ticketer>,
    _alpn: Vec<Vec<u8>>,
) -> Result<Arc<rustls::ServerConfig>, Problem> {
    Err(src.problem(
        span,
        "international: this build has no international TLS (the `international` feature)",
    ))
}
