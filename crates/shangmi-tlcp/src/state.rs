//! The handshake as a chain of states, one per message expected: a state checks its message
//! against the shared [`Context`], sends what that message calls for, and becomes the state
//! that expects the next one. What a state needs travels inside it, so no state can read a
//! field an earlier step has not set, and a message out of order has nowhere to go.

use crate::common::{Context, Message};
use crate::error::Error;

pub(crate) trait State: Send {
    /// Handles one handshake message: the next state, or the error that ends the connection.
    fn handle(self: Box<Self>, cx: &mut Context, msg: Message<'_>)
    -> Result<Box<dyn State>, Error>;

    /// Whether the peer's ChangeCipherSpec may come now (its Finished is next).
    fn expects_change_cipher_spec(&self) -> bool {
        false
    }

    /// Whether the handshake has completed (application data may flow).
    fn is_established(&self) -> bool {
        false
    }
}

/// After the handshake: any handshake message is a renegotiation, which TLCP servers and
/// clients here refuse.
pub(crate) struct Established;

impl State for Established {
    fn handle(self: Box<Self>, _: &mut Context, _: Message<'_>) -> Result<Box<dyn State>, Error> {
        Err(Error::Renegotiation)
    }

    fn is_established(&self) -> bool {
        true
    }
}

/// `Ok` when `msg` is of the type `typ` the state expects, the out-of-order error otherwise.
pub(crate) fn expect(cx: &Context, msg: &Message<'_>, typ: u8) -> Result<(), Error> {
    if msg.typ == typ {
        Ok(())
    } else {
        Err(unexpected(cx))
    }
}

/// The error for a message the current state does not expect.
pub(crate) fn unexpected(cx: &Context) -> Error {
    Error::UnexpectedMessage(if cx.client {
        "handshake message out of order (client)"
    } else {
        "handshake message out of order (server)"
    })
}
