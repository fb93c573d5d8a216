//! Clients and their tokens as rows of `auth.db`: a client is a name with a [`Grant`] (which
//! vaults, folders, read or read-write, which tools); a token is a secret that lets the client
//! in, of which only the peppered hash is kept.
//!
//! A static token (`mdvault token create`) is one client with one token that never expires.
//! An OAuth client (`oauth.rs`) is a row of kind `oauth` made at the owner's consent; its
//! access tokens are further rows of `tokens` with an expiry, checked by the same
//! [`Credentials::client_of`].
//!
//! A revocation marks the client revoked and deletes its tokens (and an OAuth client's codes
//! and refresh tokens) in one transaction. Nothing is
//! cached: every check reads the file, so a token revoked by another process (the CLI beside a
//! running server) is refused from that process's commit on. A revoked client's name may be
//! given to a new client; the old row goes.

use rusqlite::{OptionalExtension, params};

use super::{Credentials, Pepper, Secret, failed, now};
use crate::error::{Error, ErrorCode, Result};
use crate::vault::grant::{Grant, OWNER};

/// The longest client name.
const NAME_CHARS: usize = 64;

/// What kind of client a row is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A static token for a script, made with `mdvault token create`.
    Token,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Token => "token",
        }
    }
}

/// A client as listed: never its secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Client {
    /// Its name; the grant's `client` is the same.
    pub(crate) name: String,
    /// `token`, or `oauth` for one made at an OAuth consent.
    pub(crate) kind: String,
    /// An OAuth client's application (its registered client_id).
    pub(crate) app: Option<String>,
    /// Unix seconds of its making.
    pub(crate) created: i64,
    /// Unix seconds of its revocation, if revoked.
    pub(crate) revoked: Option<i64>,
    /// What it may do.
    pub(crate) grant: Grant,
}

/// A client's name: 1 to [`NAME_CHARS`] letters, digits, `.`, `_` or `-`, and not the owner's.
pub(super) fn check_name(name: &str) -> Result<()> {
    let fine = !name.is_empty()
        && name.chars().count() <= NAME_CHARS
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if !fine {
        return Err(Error::new(
            ErrorCode::InvalidRequest,
            format!(
                "'{name}' is not a client name; use 1 to {NAME_CHARS} letters, digits, '.', '_' \
                 or '-', such as phone or backup-script"
            ),
        ));
    }
    if name.eq_ignore_ascii_case(OWNER) {
        return Err(Error::new(
            ErrorCode::InvalidRequest,
            format!(
                "'{OWNER}' is the API key's client, which has every right; choose another name"
            ),
        ));
    }
    Ok(())
}

fn client_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<(Client, String)> {
    let text: String = r.get(4)?;
    let client = Client {
        name: r.get(0)?,
        kind: r.get(1)?,
        created: r.get(2)?,
        revoked: r.get(3)?,
        app: r.get(5)?,
        grant: Grant::owner(),
    };
    Ok((client, text))
}

/// A stored grant read back; a row that does not parse is the file's failure, not a grant.
fn grant_of(path: &std::path::Path, name: &str, text: &str) -> Result<Grant> {
    let mut grant: Grant = serde_json::from_str(text)
        .map_err(|e| failed(path, format!("the grant of client '{name}' does not read: {e}")))?;
    grant.client = name.to_string();
    Ok(grant)
}

impl Credentials {
    /// Makes a client with this grant (its name is `grant.client`) and its first token, which
    /// is returned once and never stored. A live client of that name is refused; a revoked one
    /// is replaced.
    pub(crate) fn create_client(
        &self,
        pepper: &Pepper,
        grant: &Grant,
        kind: Kind,
    ) -> Result<(Secret, Client)> {
        check_name(&grant.client)?;
        let secret = Secret::random()?;
        let hash = secret.hash(pepper);
        let created = now();
        let text = serde_json::to_string(grant)
            .map_err(|e| failed(&self.path, format!("a grant would not write: {e}")))?;
        let mut conn = self.lock();
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| failed(&self.path, e))?;
        make_room(&tx, &self.path, &grant.client)?;
        tx.execute(
            "INSERT INTO clients (name, kind, created, revoked, grant_json)
                     VALUES (?1, ?2, ?3, NULL, ?4)",
            params![grant.client, kind.as_str(), created, text],
        )
        .and_then(|_| {
            tx.execute(
                "INSERT INTO tokens (hash, client, created, expires) VALUES (?1, ?2, ?3, NULL)",
                params![hash.0.as_slice(), grant.client, created],
            )
        })
        .map_err(|e| failed(&self.path, e))?;
        tx.commit().map_err(|e| failed(&self.path, e))?;
        let client = Client {
            name: grant.client.clone(),
            kind: kind.as_str().to_string(),
            app: None,
            created,
            revoked: None,
            grant: grant.clone(),
        };
        Ok((secret, client))
    }

    /// The grant of the live client a presented token lets in, if any: the token must be
    /// stored (under this pepper), unexpired, and its client not revoked.
    pub(crate) fn client_of(&self, pepper: &Pepper, presented: &str) -> Result<Option<Grant>> {
        let Some(secret) = Secret::parse(presented.trim()) else { return Ok(None) };
        let hash = secret.hash(pepper);
        // Found by the hash's first 8 bytes and compared whole in constant time, as a session
        // is (`sessions::check_session` says why).
        let (first, next) = hash.lookup_range();
        let conn = self.lock();
        let mut stmt = conn
            .prepare_cached(
                "SELECT t.hash, c.name, c.grant_json FROM tokens t JOIN clients c ON c.name = t.client
                 WHERE t.hash >= ?1 AND (?2 IS NULL OR t.hash < ?2)
                   AND c.revoked IS NULL AND (t.expires IS NULL OR t.expires > ?3)",
            )
            .map_err(|e| failed(&self.path, e))?;
        let rows = stmt
            .query_map(params![first, next, now()], |r| {
                Ok((r.get::<_, Vec<u8>>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?))
            })
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
            .map_err(|e| failed(&self.path, e))?;
        match rows.into_iter().find(|(h, _, _)| hash.same(h)) {
            Some((_, name, text)) => grant_of(&self.path, &name, &text).map(Some),
            None => Ok(None),
        }
    }

    /// Every client, live ones first, then by name.
    pub(crate) fn clients(&self) -> Result<Vec<Client>> {
        let conn = self.lock();
        let mut stmt = conn
            .prepare(
                "SELECT name, kind, created, revoked, grant_json, app FROM clients
                 ORDER BY revoked IS NOT NULL, name",
            )
            .map_err(|e| failed(&self.path, e))?;
        let rows = stmt
            .query_map([], client_from_row)
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
            .map_err(|e| failed(&self.path, e))?;
        rows.into_iter()
            .map(|(mut c, text)| {
                c.grant = grant_of(&self.path, &c.name, &text)?;
                Ok(c)
            })
            .collect()
    }

    /// Revokes the live client `name`: marks it revoked and deletes its tokens, so none of
    /// them lets it in again. Returns it as it now stands.
    pub(crate) fn revoke_client(&self, name: &str) -> Result<Client> {
        let live: Vec<Client> =
            self.clients()?.into_iter().filter(|c| c.revoked.is_none()).collect();
        let Some(mut client) = live.iter().find(|c| c.name == name).cloned() else {
            let names: Vec<&str> = live.iter().map(|c| c.name.as_str()).collect();
            return Err(Error::new(
                ErrorCode::NotFound,
                format!(
                    "no live client is named '{name}'; the live ones are: {} (`mdvault token \
                     list` shows them)",
                    if names.is_empty() { "(none)".to_string() } else { names.join(", ") }
                ),
            ));
        };
        let when = now();
        let mut conn = self.lock();
        let tx = conn.transaction().map_err(|e| failed(&self.path, e))?;
        revoke_in(&tx, &self.path, name, when)?;
        tx.commit().map_err(|e| failed(&self.path, e))?;
        client.revoked = Some(when);
        Ok(client)
    }
}

/// Frees the name `name` for a new client inside `tx`: a live client of that name is refused;
/// a revoked one goes, with whatever of it is left.
pub(super) fn make_room(
    tx: &rusqlite::Transaction<'_>,
    path: &std::path::Path,
    name: &str,
) -> Result<()> {
    let existing: Option<Option<i64>> = tx
        .query_row("SELECT revoked FROM clients WHERE name = ?1", [name], |r| r.get(0))
        .optional()
        .map_err(|e| failed(path, e))?;
    if existing == Some(None) {
        return Err(Error::new(
            ErrorCode::AlreadyExists,
            format!(
                "a client named '{name}' exists already; choose another name, or revoke it \
                 first (`mdvault token revoke {name}`)"
            ),
        ));
    }
    for sql in [
        "DELETE FROM tokens WHERE client = ?1",
        "DELETE FROM refresh_tokens WHERE client = ?1",
        "DELETE FROM oauth_codes WHERE client = ?1",
        "DELETE FROM clients WHERE name = ?1",
    ] {
        tx.execute(sql, [name]).map_err(|e| failed(path, e))?;
    }
    Ok(())
}

/// Revokes the client `name` inside `tx`, at `when`: marked revoked, and every token, code and
/// refresh token of it deleted, so none lets it in again.
pub(super) fn revoke_in(
    tx: &rusqlite::Transaction<'_>,
    path: &std::path::Path,
    name: &str,
    when: i64,
) -> Result<()> {
    tx.execute(
        "UPDATE clients SET revoked = ?2 WHERE name = ?1 AND revoked IS NULL",
        params![name, when],
    )
    .map_err(|e| failed(path, e))?;
    for sql in [
        "DELETE FROM tokens WHERE client = ?1",
        "DELETE FROM refresh_tokens WHERE client = ?1",
        "DELETE FROM oauth_codes WHERE client = ?1",
    ] {
        tx.execute(sql, [name]).map_err(|e| failed(path, e))?;
    }
    Ok(())
}

/// What is stored of a token: its hash (for tests that look for the secret in the file).
#[cfg(test)]
fn stored(creds: &Credentials) -> Vec<super::Hash> {
    let conn = creds.lock();
    let mut stmt = conn.prepare("SELECT hash FROM tokens").unwrap();
    stmt.query_map([], |r| r.get::<_, Vec<u8>>(0))
        .unwrap()
        .map(|h| super::Hash(h.unwrap().try_into().unwrap()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pepper() -> Pepper {
        Pepper::new([9; 32])
    }

    fn grant(name: &str) -> Grant {
        Grant {
            client: name.into(),
            vaults: vec!["work".into()],
            allow: vec!["Inbox".into()],
            deny: vec!["Private".into()],
            read_only: true,
            tools: vec!["vault_read".into()],
        }
    }

    #[test]
    fn a_token_lets_its_client_in_with_its_grant_until_revoked() {
        let dir = tempfile::tempdir().unwrap();
        let creds = Credentials::open(dir.path()).unwrap();
        let (secret, client) =
            creds.create_client(&pepper(), &grant("phone"), Kind::Token).unwrap();
        assert_eq!(client.grant, grant("phone"));
        let text = secret.expose();
        assert_eq!(creds.client_of(&pepper(), &text).unwrap(), Some(grant("phone")));
        assert_eq!(creds.client_of(&Pepper::new([1; 32]), &text).unwrap(), None);
        assert_eq!(creds.client_of(&pepper(), "not a token").unwrap(), None);
        assert_eq!(stored(&creds), vec![secret.hash(&pepper())]);
        // Another process's connection sees the revocation at its next check.
        let other = Credentials::open(dir.path()).unwrap();
        let revoked = other.revoke_client("phone").unwrap();
        assert!(revoked.revoked.is_some());
        assert_eq!(creds.client_of(&pepper(), &text).unwrap(), None);
        assert!(stored(&creds).is_empty());
        let listed = creds.clients().unwrap();
        assert_eq!(listed.len(), 1);
        assert!(listed[0].revoked.is_some() && listed[0].grant == grant("phone"));
    }

    #[test]
    fn a_live_name_is_refused_and_a_revoked_one_is_free_again() {
        let dir = tempfile::tempdir().unwrap();
        let creds = Credentials::open(dir.path()).unwrap();
        creds.create_client(&pepper(), &grant("phone"), Kind::Token).unwrap();
        let Err(e) = creds.create_client(&pepper(), &grant("phone"), Kind::Token) else {
            panic!("a second live client of one name was made")
        };
        assert_eq!(e.code(), ErrorCode::AlreadyExists);
        assert!(e.message().contains("mdvault token revoke phone"), "{e}");
        creds.revoke_client("phone").unwrap();
        let (again, _) = creds.create_client(&pepper(), &grant("phone"), Kind::Token).unwrap();
        assert!(creds.client_of(&pepper(), &again.expose()).unwrap().is_some());
        assert_eq!(creds.clients().unwrap().len(), 1);
    }

    #[test]
    fn revoking_an_unknown_client_names_the_live_ones() {
        let dir = tempfile::tempdir().unwrap();
        let creds = Credentials::open(dir.path()).unwrap();
        creds.create_client(&pepper(), &grant("phone"), Kind::Token).unwrap();
        let e = creds.revoke_client("laptop").unwrap_err();
        assert_eq!(e.code(), ErrorCode::NotFound);
        assert!(e.message().contains("'laptop'") && e.message().contains("phone"), "{e}");
        creds.revoke_client("phone").unwrap();
        assert_eq!(creds.revoke_client("phone").unwrap_err().code(), ErrorCode::NotFound);
    }

    #[test]
    fn a_client_name_is_short_plain_and_not_the_owners() {
        for bad in ["", "has space", "owner", "OWNER", &"x".repeat(65), "a/b"] {
            assert_eq!(check_name(bad).unwrap_err().code(), ErrorCode::InvalidRequest, "{bad}");
        }
        for good in ["phone", "backup-script", "ci.bot_2"] {
            assert!(check_name(good).is_ok(), "{good}");
        }
    }
}
