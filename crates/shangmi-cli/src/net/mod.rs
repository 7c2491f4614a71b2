//! What the protocol commands share: the client relay (`tls connect`, `tlcp connect`), the
//! servers (`tls serve`, `tlcp serve`) and the certificate files they read.

pub mod peer;
pub mod relay;
pub mod serve;
