//! `mdvault audit`: the audit trail (`crate::auth::audit`), every write with the client that
//! made it, newest first, narrowed by client, path and time.
//!
//! It reads the data directory's credentials file and needs no running server nor key: whoever
//! can run mdvault on this data directory is its owner and sees every client's rows.

use clap::Args;

use super::{Failure, print, print_json};
use crate::auth::audit::{Entry, Filter};
use crate::auth::{Credentials, utc};
use crate::config::Config;
use crate::wire;

/// `mdvault audit`.
#[derive(Debug, Args)]
pub(crate) struct AuditArgs {
    /// Only this client's writes (`owner` is the API key's, the web page's and the CLI's).
    #[arg(long, value_name = "NAME")]
    client: Option<String>,
    /// Only writes at this path or under this folder (a move counts by either end).
    #[arg(long, value_name = "PREFIX")]
    path: Option<String>,
    /// Only writes since this date (2026-05-02, midnight UTC) or time (RFC 3339).
    #[arg(long, value_name = "DATE")]
    since: Option<String>,
    /// At most this many rows, the newest.
    #[arg(long, value_name = "N", default_value_t = Filter::DEFAULT_LIMIT)]
    limit: usize,
    /// Print JSON: `{"entries": [{"at", "client", "vault", "path", "to", "kind"}]}`.
    #[arg(long)]
    json: bool,
}

/// Runs `mdvault audit`.
pub(crate) fn run(config: &Config, a: AuditArgs) -> Result<(), Failure> {
    let limit = a.limit.to_string();
    let filter =
        Filter::asked(a.client.as_deref(), a.path.as_deref(), a.since.as_deref(), Some(&limit))?;
    let rows = Credentials::open(&config.data_dir)?.audit(&filter)?;
    if a.json {
        print_json(&wire::audit(&rows));
    } else {
        print(&table(&rows));
    }
    Ok(())
}

/// One line per write: time, client, kind, then `vault:path` (and `-> destination`).
fn table(rows: &[Entry]) -> String {
    if rows.is_empty() {
        return "no writes recorded (or none that match)\n".to_string();
    }
    let width = rows.iter().map(|r| r.client.chars().count()).max().unwrap_or(0).max(6);
    let mut out = format!("{:<20}  {:<width$}  {:<13}  PATH\n", "AT (UTC)", "CLIENT", "KIND");
    for r in rows {
        let to = r.to.as_deref().map(|t| format!(" -> {t}")).unwrap_or_default();
        out.push_str(&format!(
            "{:<20}  {:<width$}  {:<13}  {}:{}{to}\n",
            utc(r.at),
            r.client,
            r.kind,
            r.vault,
            r.path
        ));
    }
    out
}
