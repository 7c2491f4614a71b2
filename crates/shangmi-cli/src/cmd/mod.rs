//! One module per command; what several commands need lives outside `cmd/` (the crate's
//! top-level modules and `net/`), so no command imports another.

pub mod cfca;
pub mod cms;
pub mod mac;
pub mod pkcs12;
pub mod seal;
pub mod sm2;
pub mod sm3;
pub mod sm4;
pub mod speed;
pub mod tlcp;
pub mod tls;
pub mod x509;
