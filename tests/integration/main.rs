//! The integration test binary: one binary, so the library links once.
//!
//! Each module drives the real library or the real `mdvault` binary against copies of the
//! fixture vault in `tests/fixtures/vault`.

mod cli;
mod common;
mod gate;
mod real_vaults;
mod resolver;
mod tidy;
mod vault_ops;
