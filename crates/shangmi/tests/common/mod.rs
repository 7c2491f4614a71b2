//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod curve;
pub mod openssl_keys;
pub mod vectors;
