//! A client's rights, decided once: which vaults it reaches, which folders inside them it may
//! see (an allow list and a deny list), whether it may write, and which MCP tools it may call.
//!
//! The front door resolves one [`Grant`] per request from the credential presented (the API
//! key is the owner, [`Grant::owner`], with every right; a static token is its client's grant,
//! kept in `auth.db`) and carries it down in the request's `service::Target`, where it composes
//! with the URL's scopes: a grant narrows, and `/v/<name>/` or `/mcp/only/<path>` can narrow
//! further, never widen.
//!
//! The path rule is one function, [`Grant::can_read`], over a vault-relative path as the gate
//! normalises it: readable iff allowed (no allow list, or under one of its folders) and not
//! denied (under none of the deny list's folders). Folders match whole segments and in any
//! case, so `Private/` hides `private/x.md` too (a case-insensitive disk would serve the same
//! file under both spellings). A denied path is invisible, not merely unwritable: reads answer
//! `not_found` and listings and searches leave it out, so a client learns nothing of it.
//! Every refusal of a right the client lacks is `not_granted` and names the right.

use serde::{Deserialize, Serialize};

use crate::error::{Error, ErrorCode, Result};
use crate::vault::path::normalize;

/// The name of the owner's client: whoever presents the API key.
pub(crate) const OWNER: &str = "owner";

/// What one client may do. The default is the owner's grant: every right.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Grant {
    /// The client's name, as refusals and listings name it.
    pub(crate) client: String,
    /// The vaults it reaches, the first its default; empty is every vault.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) vaults: Vec<String>,
    /// The folders it may see, vault-relative without slashes; empty is the whole vault.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) allow: Vec<String>,
    /// The folders it may never see, even under an allowed one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) deny: Vec<String>,
    /// Whether it may only read.
    #[serde(default)]
    pub(crate) read_only: bool,
    /// The MCP tools it may call; empty is every tool.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) tools: Vec<String>,
}

impl Default for Grant {
    fn default() -> Grant {
        Grant::owner()
    }
}

/// Whether `rel` is `folder` or lies under it, comparing whole segments in any case.
fn under(rel: &str, folder: &str) -> bool {
    let (rel, folder) = (rel.to_lowercase(), folder.to_lowercase());
    folder.is_empty()
        || rel == folder
        || rel.strip_prefix(&folder).is_some_and(|rest| rest.starts_with('/'))
}

/// A folder as a grant keeps it: normalised by the gate's own rule, without slashes.
pub(crate) fn folder(raw: &str) -> Result<String> {
    let parts = normalize(raw)?;
    if parts.is_empty() {
        return Err(Error::new(
            ErrorCode::InvalidPath,
            format!(
                "'{raw}' is the vault root; name a folder inside it (leave --allow out to allow \
                 the whole vault)"
            ),
        ));
    }
    Ok(parts.join("/"))
}

impl Grant {
    /// Every right: the API key's client.
    pub(crate) fn owner() -> Grant {
        Grant {
            client: OWNER.to_string(),
            vaults: Vec::new(),
            allow: Vec::new(),
            deny: Vec::new(),
            read_only: false,
            tools: Vec::new(),
        }
    }

    /// Whether every path of a vault it reaches is visible to it.
    pub(crate) fn sees_everything(&self) -> bool {
        self.allow.is_empty() && self.deny.is_empty()
    }

    /// The refusal of a right this client lacks, naming it.
    pub(crate) fn refused(&self, right: String) -> Error {
        Error::new(
            ErrorCode::NotGranted,
            format!(
                "the client '{}' was not granted {right}; ask the owner for a token that has it \
                 (`mdvault token create`), or do without",
                self.client
            ),
        )
    }

    /// Whether it reaches the vault `name`.
    pub(crate) fn reaches(&self, name: &str) -> bool {
        self.vaults.is_empty() || self.vaults.iter().any(|v| v == name)
    }

    /// Refuses a vault it does not reach, naming the ones it does.
    pub(crate) fn check_vault(&self, name: &str) -> Result<()> {
        if self.reaches(name) {
            return Ok(());
        }
        Err(self
            .refused(format!("the vault '{name}' (it reaches only {})", self.vaults.join(", "))))
    }

    /// The vault a request that names none means for this client: its first vault, when it
    /// is limited to some; `None` leaves the configured default.
    pub(crate) fn default_vault(&self) -> Option<&str> {
        self.vaults.first().map(String::as_str)
    }

    /// Whether the vault-relative path `rel` (as the gate normalises it) is visible.
    pub(crate) fn can_read(&self, rel: &str) -> bool {
        // The owner's grant (no folders named) reads everything: the dense scan asks this of
        // every row beside the vectors file, so it answers before touching the path.
        if self.allow.is_empty() && self.deny.is_empty() {
            return true;
        }
        let rel = rel.trim_matches('/');
        let allowed = self.allow.is_empty() || self.allow.iter().any(|a| under(rel, a));
        allowed && !self.deny.iter().any(|d| under(rel, d))
    }

    /// Whether a folder is worth showing in a listing: visible itself, or on the way to an
    /// allowed folder (the root, and `Work` for an allowed `Work/Inbox`), and not denied.
    pub(crate) fn can_list(&self, rel: &str) -> bool {
        let rel = rel.trim_matches('/');
        if self.deny.iter().any(|d| under(rel, d)) {
            return false;
        }
        self.can_read(rel) || self.allow.iter().any(|a| under(a, rel))
    }

    /// Whether a folder holds one the grant denies (so a recursive delete of it may not run).
    pub(crate) fn holds_denied(&self, rel: &str) -> bool {
        self.deny.iter().any(|d| under(d, rel))
    }

    /// Whether a caller's raw path names something visible: normalised by the gate's rule
    /// first, so no spelling of a denied path slips by. A path the gate would refuse is
    /// passed through for the gate to refuse with its own words. (The front door reads a path
    /// with `Vault::vault_path`, which is this normalisation after `unroot`.)
    #[cfg(test)]
    pub(crate) fn can_read_raw(&self, raw: &str) -> bool {
        match normalize(raw) {
            Ok(parts) => self.can_read(&parts.join("/")),
            Err(_) => true,
        }
    }

    /// Refuses a write when it may only read.
    pub(crate) fn check_write(&self) -> Result<()> {
        if self.read_only {
            return Err(self.refused("writes (its token is read-only)".to_string()));
        }
        Ok(())
    }

    /// Refuses a re-index to a client that may only read (a build costs the machine minutes of
    /// work that only writing to the vault should need) or sees only some folders (its report
    /// counts the files of the whole vault).
    pub(crate) fn check_reindex(&self) -> Result<()> {
        if self.read_only {
            return Err(self.refused("a re-index (its token is read-only)".to_string()));
        }
        self.check_sees_all("a re-index")
    }

    /// Refuses a survey the front door cannot narrow to the folders it sees (a vault's own
    /// scripts answer for the whole vault) when it cannot see the whole vault.
    pub(crate) fn check_sees_all(&self, what: &str) -> Result<()> {
        if self.sees_everything() {
            return Ok(());
        }
        Err(self
            .refused(format!("the whole vault, which {what} reads (it sees only some folders)")))
    }

    /// Refuses a change that may touch notes anywhere in a vault (a tag's rename, a move's
    /// link rewrites) when it cannot see the whole vault.
    pub(crate) fn check_whole_vault(&self, what: &str) -> Result<()> {
        self.check_write()?;
        if self.sees_everything() {
            return Ok(());
        }
        Err(self.refused(format!(
            "the whole vault, which {what} may change (it sees only some folders)"
        )))
    }

    /// Whether it may call the MCP tool `name`.
    pub(crate) fn may_call(&self, name: &str) -> bool {
        self.tools.is_empty() || self.tools.iter().any(|t| t == name)
    }

    /// Refuses a tool it was not granted, naming the ones it was.
    pub(crate) fn check_tool(&self, name: &str) -> Result<()> {
        if self.may_call(name) {
            return Ok(());
        }
        Err(self.refused(format!("the tool {name} (it may call {})", self.tools.join(", "))))
    }

    /// What `mdvault token list` says of its rights, in one line.
    pub(crate) fn describe(&self) -> String {
        let mut out = vec![if self.read_only { "read-only" } else { "read-write" }.to_string()];
        let list = |items: &[String]| items.join(",");
        out.push(if self.vaults.is_empty() {
            "every vault".to_string()
        } else {
            format!("vaults {}", list(&self.vaults))
        });
        if !self.allow.is_empty() {
            out.push(format!("allow {}", list(&self.allow)));
        }
        if !self.deny.is_empty() {
            out.push(format!("deny {}", list(&self.deny)));
        }
        if !self.tools.is_empty() {
            out.push(format!("tools {}", list(&self.tools)));
        }
        out.join("; ")
    }
}

/// The "not there" a denied path answers with: the same words a missing one gets, so a client
/// cannot tell the two apart.
pub(crate) fn invisible(raw: &str) -> Error {
    Error::new(
        ErrorCode::NotFound,
        format!("no note or folder at '{}'; vault_list shows what is there", raw.trim()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn limited() -> Grant {
        Grant {
            client: "inbox".into(),
            allow: vec!["Inbox".into(), "Work/Shared".into()],
            deny: vec!["Private".into(), "Inbox/Secret".into()],
            ..Grant::owner()
        }
    }

    #[test]
    fn the_owner_reads_writes_and_calls_everything() {
        let g = Grant::owner();
        assert!(g == Grant::default() && g.can_read("Private/x.md") && g.reaches("any"));
        assert!(g.check_write().is_ok() && g.may_call("vault_delete"));
        assert_eq!(g.default_vault(), None);
    }

    #[test]
    fn a_path_is_readable_when_allowed_and_not_denied_by_whole_segments_in_any_case() {
        let g = limited();
        assert!(g.can_read("Inbox/a.md") && g.can_read("inbox/a.md") && g.can_read("Inbox"));
        assert!(g.can_read("Work/Shared/b.md"));
        assert!(!g.can_read("Work/b.md") && !g.can_read("Inboxes/a.md"));
        assert!(!g.can_read("Inbox/Secret/a.md") && !g.can_read("inbox/secret"));
        assert!(!g.can_read("Private/x.md") && !g.can_read("a.md"));
        let deny_only = Grant { deny: vec!["Private".into()], ..Grant::owner() };
        assert!(deny_only.can_read("a.md") && deny_only.can_read("Privateer/a.md"));
        assert!(!deny_only.can_read("PRIVATE/a.md"));
    }

    #[test]
    fn a_listing_shows_the_folders_on_the_way_to_an_allowed_one() {
        let g = limited();
        assert!(g.can_list("") && g.can_list("Work") && g.can_list("Inbox"));
        assert!(!g.can_list("Private") && !g.can_list("Other") && !g.can_list("Inbox/Secret"));
    }

    #[test]
    fn refusals_name_the_missing_right_with_not_granted() {
        let g = Grant {
            client: "phone".into(),
            vaults: vec!["work".into()],
            read_only: true,
            tools: vec!["vault_read".into()],
            ..Grant::owner()
        };
        let e = g.check_write().unwrap_err();
        assert_eq!(e.code(), ErrorCode::NotGranted);
        assert!(e.message().contains("'phone'") && e.message().contains("read-only"), "{e}");
        let e = g.check_vault("home").unwrap_err();
        assert!(e.message().contains("vault 'home'") && e.message().contains("work"), "{e}");
        let e = g.check_tool("vault_search").unwrap_err();
        assert!(e.message().contains("vault_search") && e.message().contains("vault_read"));
        assert_eq!(g.default_vault(), Some("work"));
        let folders = Grant { deny: vec!["P".into()], ..Grant::owner() };
        assert!(folders.check_whole_vault("a tag's rename").is_err());
    }

    #[test]
    fn a_grant_keeps_its_folders_normalised_and_refuses_the_root() {
        assert_eq!(folder("/Inbox/").unwrap(), "Inbox");
        assert_eq!(folder("./Work//Shared/").unwrap(), "Work/Shared");
        assert_eq!(folder("/").unwrap_err().code(), ErrorCode::InvalidPath);
        assert_eq!(folder("../x").unwrap_err().code(), ErrorCode::InvalidPath);
    }

    #[test]
    fn a_grant_reads_back_from_its_stored_json() {
        let g = limited();
        let text = serde_json::to_string(&g).unwrap();
        assert_eq!(serde_json::from_str::<Grant>(&text).unwrap(), g);
        let owner: Grant = serde_json::from_str(r#"{"client":"owner"}"#).unwrap();
        assert_eq!(owner, Grant::owner());
    }

    /// A segment the gate accepts (no dot first, no slash or backslash).
    fn segment() -> impl Strategy<Value = String> {
        "[A-Za-z0-9_-]{1,6}"
    }

    /// Spellings of the same path the gate reads alike: leading and trailing slashes, `./`
    /// segments, doubled slashes, `x/../` detours and surrounding spaces.
    fn spelling(parts: Vec<String>, noise: Vec<u8>) -> String {
        let mut out = String::new();
        if noise.first().is_some_and(|n| n % 2 == 0) {
            out.push_str(" /");
        }
        for (i, p) in parts.iter().enumerate() {
            match noise.get(i + 1).copied().unwrap_or(0) % 4 {
                1 => out.push_str("./"),
                2 => out.push_str("zz/../"),
                3 => out.push('/'),
                _ => {}
            }
            out.push_str(p);
            out.push('/');
        }
        if noise.last().is_none_or(|n| n % 3 != 0) {
            out.pop();
        }
        out
    }

    proptest! {
        #[test]
        fn a_path_is_readable_iff_allowed_and_not_denied_in_every_spelling(
            parts in proptest::collection::vec(
                prop_oneof![Just("Inbox".to_string()), Just("Private".to_string()),
                            Just("Secret".to_string()), segment()],
                1..5),
            noise in proptest::collection::vec(any::<u8>(), 1..8),
        ) {
            let g = Grant {
                allow: vec!["Inbox".into()],
                deny: vec!["Private".into(), "Inbox/Secret".into()],
                ..Grant::owner()
            };
            let canonical = parts.join("/");
            let lower = canonical.to_lowercase();
            let expected = (lower == "inbox" || lower.starts_with("inbox/"))
                && !(lower == "inbox/secret" || lower.starts_with("inbox/secret/"))
                && !(lower == "private" || lower.starts_with("private/"));
            prop_assert_eq!(g.can_read(&canonical), expected);
            let raw = spelling(parts, noise);
            prop_assert_eq!(g.can_read_raw(&raw), expected, "{}", raw);
        }
    }
}
