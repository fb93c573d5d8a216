//! mdvault: a local-first knowledge server for a Markdown vault.
//!
//! Reading order: `error` (the closed set of codes), `config`, `markdown` (the line model every
//! Markdown reader shares), `vault` (notes on disk and every operation on them), `docs` (filed PDFs to Markdown), `embed` (text to vectors), `index` (the derived store, lexical index and
//! vectors), `auth` (the credentials file: hashes of the web page's sessions), `search` (hybrid retrieval), `upkeep` (index.md, checks, callouts, expiries), `engine` (the façade the surfaces call), `wire`
//! (JSON shapes), and the surfaces: `api` (REST and MCP) and `cli`. The engine modules know nothing of HTTP, MCP or
//! clap. See `ARCHITECTURE.md` for the code map.

#![warn(missing_docs)]

pub mod auth;
pub mod config;
pub mod docs;
pub mod embed;
pub mod engine;
pub mod error;
pub mod index;
pub(crate) mod markdown;
pub mod search;
pub mod service;
pub mod upkeep;
pub mod vault;
pub mod wire;

pub mod api;
pub mod cli;

pub use error::{Error, ErrorCode, Result};
