//! mdvault: a local-first knowledge server for a Markdown vault.
//!
//! See `ARCHITECTURE.md` for the code map.

pub mod error;
pub mod vault;

pub use error::{Error, ErrorCode, Result};
