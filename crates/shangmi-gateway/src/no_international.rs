//! International TLS is not in this build (the `international` feature is off): a site that
//! asks for it is refused with the reason.

use std::ops::Range;

use toml::Spanned;

use crate::config::{Pair, Problem, Source};
use crate::keys::ClientAuth;
use crate::site::International;
use crate::tickets::{Scope, TicketKeys};

pub(crate) fn config(
    src: &Source,
    span: Range<usize>,
    _pairs: &[Spanned<Pair>],
    _client_auth: Option<&ClientAuth>,
    _tickets: Option<&TicketKeys>,
    _scope: Scope,
    _alpn: Vec<Vec<u8>>,
) -> Result<International, Problem> {
    Err(src.problem(
        span,
        "international: this build has no international TLS (the `international` feature)",
    ))
}
