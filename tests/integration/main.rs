//! The integration test binary: one binary, so the library links once.
//!
//! Each module drives the real library or the real `mdvault` binary against copies of the
//! fixture vault in `tests/fixtures/vault` (or of other committed fixtures). `real_vaults`
//! also runs over the evaluation vaults when they are present; `eval_data` decides that.

// The same allocator as the binary, so the embedder behaves as it does in production.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod adversarial;
mod agent_tasks;
mod attachments;
mod audit;
mod budget;
mod callers;
mod cli;
mod common;
mod contract;
mod crash;
mod daily;
mod docs_links;
mod documents;
mod eval;
mod eval_data;
mod frontmatter_shapes;
mod gate;
mod grants;
mod hardening;
mod hostile_input;
mod line_model;
mod mcp_sdk;
mod mcp_versions;
mod migrate;
mod multivault;
mod native_aliases;
mod native_canvas;
mod native_render;
mod native_tags;
mod oauth;
mod parity;
mod paths;
mod periodic;
mod real_eval;
mod real_vaults;
mod resolver;
mod resources;
mod search;
mod seed_rest;
mod serve;
mod tags;
mod tidy;
mod tls;
mod tour;
mod two_writers;
mod unwritable;
mod upkeep;
mod vault_ops;
mod web;
mod write_bytes;
