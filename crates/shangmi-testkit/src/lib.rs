//! Helpers the crates' tests share (not published): what more than one test suite needs and
//! no library should carry.

pub mod der_edit;
pub mod maven;
