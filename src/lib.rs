//! mdvault: a local-first knowledge server for a Markdown vault.
//!
//! The engine modules (`vault`, `config`, `error`) know nothing of HTTP, MCP or clap; the
//! surfaces (`cli`, and later `api`) call into them. See `ARCHITECTURE.md` for the code map.

#![warn(missing_docs)]

pub mod config;
pub mod error;
pub mod vault;
pub mod wire;

pub mod cli;

pub use error::{Error, ErrorCode, Result};
