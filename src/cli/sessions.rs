//! `mdvault sessions list|revoke`: the web page's signed-in sessions, read from and ended in
//! the data directory's credentials file (`crate::auth`).
//!
//! It needs no vault, no model and no running server: the file is shared, so a session revoked
//! here is refused by a server on the same data directory at its next request. A session is
//! named by a prefix of its stored hash; its secret exists only in the browser's cookie.

use clap::{Args, Subcommand};

use super::{Failure, print, print_json};
use crate::auth::sessions::{Revoke, Session};
use crate::auth::{Credentials, utc};
use crate::config::Config;
use crate::wire;

/// `mdvault sessions`.
#[derive(Debug, Subcommand)]
pub(crate) enum SessionsCommand {
    /// List the web page's live sessions, the most recently seen first: id, when it signed in,
    /// was last seen and ends, the address and the browser.
    #[command(after_help = "Examples:\n  mdvault sessions list\n  mdvault sessions list --json")]
    List(ListArgs),
    /// End sessions now: one by its id (or any prefix of it that names one), or every one.
    /// The browser holding it is sent to sign-in at its next request.
    #[command(
        after_help = "Examples:\n  mdvault sessions revoke 3f9a\n  mdvault sessions revoke --all"
    )]
    Revoke(RevokeArgs),
}

/// `mdvault sessions list`.
#[derive(Debug, Args)]
pub(crate) struct ListArgs {
    /// Print JSON: `{"sessions": [{"id", "created", "last_seen", "expires", "remote",
    /// "user_agent"}]}`.
    #[arg(long)]
    json: bool,
}

/// `mdvault sessions revoke`.
#[derive(Debug, Args)]
#[group(required = true, multiple = false)]
pub(crate) struct RevokeArgs {
    /// The session's id as `sessions list` shows it, or a prefix of it that names one session.
    #[arg(value_name = "ID")]
    id: Option<String>,
    /// End every session.
    #[arg(long)]
    all: bool,
}

/// Runs a `sessions` subcommand.
pub(crate) fn run(config: &Config, cmd: SessionsCommand) -> Result<(), Failure> {
    let creds = Credentials::open(&config.data_dir)?;
    match cmd {
        SessionsCommand::List(args) => {
            let list = creds.sessions()?;
            if args.json {
                print_json(&wire::sessions(&list));
            } else {
                print(&table(&list));
            }
        }
        SessionsCommand::Revoke(args) => {
            let which = match args.id {
                Some(id) if !args.all => Revoke::Prefix(id),
                _ => Revoke::All,
            };
            let ended = creds.revoke(&which)?;
            print(&revoked(&ended));
        }
    }
    Ok(())
}

/// The listing: one line per session under a header, the browser last (it is the longest).
fn table(list: &[Session]) -> String {
    if list.is_empty() {
        return "no one is signed in to the web page".to_string();
    }
    let from = list.iter().map(|s| s.remote.chars().count()).max().unwrap_or(0).max(4);
    let mut out = format!(
        "{:<12}  {:<20}  {:<20}  {:<20}  {:<from$}  BROWSER\n",
        "ID", "SIGNED IN", "LAST SEEN", "ENDS", "FROM"
    );
    for s in list {
        out.push_str(&format!(
            "{:<12}  {:<20}  {:<20}  {:<20}  {:<from$}  {}\n",
            s.id(),
            utc(s.created),
            utc(s.last_seen),
            utc(s.expires),
            s.remote,
            s.user_agent
        ));
    }
    out
}

/// What a revocation says: how many ended, and which.
fn revoked(ended: &[Session]) -> String {
    if ended.is_empty() {
        return "no sessions to revoke".to_string();
    }
    let noun = if ended.len() == 1 { "session" } else { "sessions" };
    let mut out = format!("revoked {} {noun}:\n", ended.len());
    for s in ended {
        let from = if s.remote.is_empty() { String::new() } else { format!(" from {}", s.remote) };
        out.push_str(&format!("  {} (signed in {}{from})\n", s.id(), utc(s.created)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::Pepper;
    use crate::auth::sessions::Client;

    #[test]
    fn the_listing_and_the_revocation_name_sessions_by_their_short_ids() {
        assert_eq!(table(&[]), "no one is signed in to the web page");
        assert_eq!(revoked(&[]), "no sessions to revoke");
        let dir = tempfile::tempdir().unwrap();
        let creds = Credentials::open(dir.path()).unwrap();
        let client = Client { user_agent: "Firefox/140".into(), remote: "127.0.0.1".into() };
        let (secret, one) = creds.start_session(&Pepper::new([1; 32]), &client, 60).unwrap();
        let listed = table(&creds.sessions().unwrap());
        let lines: Vec<&str> = listed.lines().collect();
        assert!(lines[0].starts_with("ID") && lines[0].ends_with("BROWSER"), "{listed}");
        assert!(lines[1].starts_with(&one.id()) && lines[1].ends_with("127.0.0.1  Firefox/140"));
        assert!(!listed.contains(&secret.expose()));
        let said = revoked(std::slice::from_ref(&one));
        assert!(said.starts_with("revoked 1 session:\n") && said.contains(&one.id()), "{said}");
    }
}
