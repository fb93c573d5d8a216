//! `mdvault token create|list|revoke`: clients with static tokens, kept in the data
//! directory's credentials file (`crate::auth::clients`), each with a grant (which vaults,
//! folders, read or read-write, which MCP tools; `vault::grant`).
//!
//! It needs no running server: the file is shared, so a token revoked here is refused by a
//! server on the same data directory at its next request. Making a token needs the API key the
//! server runs with (the shell's `MDVAULT_API_KEY`, else the installed service's), since
//! tokens are hashed under a pepper derived from it; listing and revoking need none. A token
//! is printed once, when made; only its hash is kept.
//!
//! `--vault` is the global flag: here each one names a configured vault the client reaches.

use clap::{Args, Subcommand};

use super::{Failure, print, print_json};
use crate::api::mcp::VaultMcp;
use crate::auth::clients::{Client, Kind};
use crate::auth::{Credentials, Pepper, utc};
use crate::config::Config;
use crate::error::{Error, ErrorCode};
use crate::vault::grant::{self, Grant};
use crate::wire;

/// `mdvault token`.
#[derive(Debug, Subcommand)]
pub(crate) enum TokenCommand {
    /// Make a client with a static token and print the token, once. With no --vault it
    /// reaches every vault; with no --allow, every folder but the --deny ones.
    #[command(
        after_help = "Examples:\n  mdvault token create phone --vault notes --read-only\n  mdvault token create inbox-bot --allow Inbox/ --deny Private/\n  mdvault token create reader --tool vault_search --tool vault_read"
    )]
    Create(CreateArgs),
    /// List the clients and their rights (never a token), live ones first.
    #[command(after_help = "Examples:\n  mdvault token list\n  mdvault token list --json")]
    List(ListArgs),
    /// Revoke a client: its token is refused from now on, by every server on this data
    /// directory.
    #[command(after_help = "Example:\n  mdvault token revoke phone")]
    Revoke(RevokeArgs),
}

/// `mdvault token create`.
#[derive(Debug, Args)]
pub(crate) struct CreateArgs {
    /// The client's name: letters, digits, '.', '_' or '-'.
    name: String,
    /// Only reads: every write is refused (`not_granted`).
    #[arg(long)]
    read_only: bool,
    /// A folder it may see (repeat for several); without any, the whole vault.
    #[arg(long, value_name = "FOLDER")]
    allow: Vec<String>,
    /// A folder it may never see, even inside an allowed one (repeat for several): its notes
    /// are invisible, not only unwritable.
    #[arg(long, value_name = "FOLDER")]
    deny: Vec<String>,
    /// An MCP tool it may call (repeat for several); without any, every tool.
    #[arg(long, value_name = "NAME")]
    tool: Vec<String>,
    /// Print JSON: `{"name", "token", "grant"}`.
    #[arg(long)]
    json: bool,
}

/// `mdvault token list`.
#[derive(Debug, Args)]
pub(crate) struct ListArgs {
    /// Print JSON: `{"clients": [{"name", "kind", "app", "created", "revoked", "grant"}]}`
    /// (`kind` is `token` or `oauth`; `app` an OAuth client's registered client_id).
    #[arg(long)]
    json: bool,
}

/// `mdvault token revoke`.
#[derive(Debug, Args)]
pub(crate) struct RevokeArgs {
    /// The client's name as `token list` shows it.
    name: String,
}

/// Runs a `token` subcommand; `vaults` are the global `--vault` flags, the vaults granted.
pub(crate) fn run(config: &Config, vaults: Vec<String>, cmd: TokenCommand) -> Result<(), Failure> {
    let creds = Credentials::open(&config.data_dir)?;
    match cmd {
        TokenCommand::Create(args) => {
            let grant = grant_of(config, vaults, &args)?;
            let key = super::service::known_keys(&config.data_dir)
                .into_iter()
                .next()
                .map(|(k, _)| k)
                .ok_or_else(|| {
                    Error::new(
                        ErrorCode::InvalidRequest,
                        "no API key: a token is hashed under the server's key, so set \
                         MDVAULT_API_KEY to the key the server runs with and try again",
                    )
                })?;
            let (secret, client) =
                creds.create_client(&Pepper::for_tokens(&key), &grant, Kind::Token)?;
            if args.json {
                print_json(&wire::token_made(&client, &secret.expose()));
            } else {
                print(&format!(
                    "made client '{}' ({})\n{}\nThis token is shown once; keep it now. Send it \
                     as `Authorization: Bearer <token>`; `mdvault token revoke {}` ends it.\n",
                    client.name,
                    client.grant.describe(),
                    secret.expose(),
                    client.name
                ));
            }
        }
        TokenCommand::List(args) => {
            let list = creds.clients()?;
            if args.json {
                print_json(&wire::clients(&list));
            } else {
                print(&table(&list));
            }
        }
        TokenCommand::Revoke(args) => {
            let client = creds.revoke_client(args.name.trim())?;
            print(&format!("revoked client '{}'; its token is refused from now on\n", client.name));
        }
    }
    Ok(())
}

/// The grant the flags ask for, each name checked: a configured vault, a tool the server has.
fn grant_of(config: &Config, vaults: Vec<String>, a: &CreateArgs) -> Result<Grant, Error> {
    let configured: Vec<&str> = config.vaults.iter().map(|v| v.name.as_str()).collect();
    for v in &vaults {
        if !configured.contains(&v.as_str()) {
            return Err(Error::new(
                ErrorCode::NotFound,
                format!(
                    "there is no vault named '{v}'; the vaults are: {} (give one of those to \
                     --vault)",
                    configured.join(", ")
                ),
            ));
        }
    }
    let tools = VaultMcp::tool_names();
    for t in &a.tool {
        if !tools.contains(t) {
            return Err(Error::new(
                ErrorCode::InvalidRequest,
                format!("there is no tool named '{t}'; the tools are: {}", tools.join(", ")),
            ));
        }
    }
    let folders = |list: &[String]| -> Result<Vec<String>, Error> {
        list.iter().map(|f| grant::folder(f)).collect()
    };
    Ok(Grant {
        client: a.name.trim().to_string(),
        vaults,
        allow: folders(&a.allow)?,
        deny: folders(&a.deny)?,
        read_only: a.read_only,
        tools: a.tool.clone(),
    })
}

/// The listing: one line per client, its rights last.
fn table(list: &[Client]) -> String {
    if list.is_empty() {
        return "no clients; `mdvault token create NAME` makes one".to_string();
    }
    let width = list.iter().map(|c| c.name.chars().count()).max().unwrap_or(0).max(4);
    let mut out = format!(
        "{:<width$}  {:<5}  {:<20}  {:<20}  RIGHTS\n",
        "NAME", "KIND", "CREATED", "REVOKED"
    );
    for c in list {
        let revoked = c.revoked.map(utc).unwrap_or_else(|| "-".to_string());
        out.push_str(&format!(
            "{:<width$}  {:<5}  {:<20}  {:<20}  {}\n",
            c.name,
            c.kind,
            utc(c.created),
            revoked,
            c.grant.describe()
        ));
    }
    out
}
