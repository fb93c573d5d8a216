//! Writes of a whole note or of its frontmatter: create or overwrite, append, a new body,
//! frontmatter keys, entries and lists, literal replaces, and folder creation.

use serde_json::Value;

use crate::error::{Error, ErrorCode, Result};
use crate::vault::edit::{self};
use crate::vault::path::Access;
use crate::vault::{Vault, frontmatter, fs, literal, text};

use super::{Change, Lookup, NO_BUMP, Reach, content_hash, utf8};

impl Vault {
    /// Creates a note, or replaces it when `overwrite` is set.
    pub fn write(
        &self,
        raw: &str,
        content: &str,
        overwrite: bool,
        expected: Option<&str>,
    ) -> Result<Change> {
        let target = self.note_target(raw, "written as a note")?;
        let _guard = self.lock();
        let existing = self.current(&target, expected)?;
        if existing.is_some() && !overwrite {
            return Err(Error::new(
                ErrorCode::AlreadyExists,
                format!(
                    "{} already exists; pass overwrite to replace it, or patch or append to it",
                    target.rel
                ),
            ));
        }
        // An overwrite is new content, normalised like a new note's, but the file keeps its
        // convention: a CRLF note stays CRLF and a BOM stays.
        let style = existing.as_deref().map_or(text::Style::NEW, text::Style::of);
        let old = existing.as_deref().map(String::from_utf8_lossy).unwrap_or_default();
        let w = self.write_note(&target, &old, &style.note(content), true)?;
        let verb = if existing.is_some() { "overwrote" } else { "created" };
        Ok(self.finish(&target, format!("{verb} {}", target.rel), w))
    }

    /// Appends to a note; creates it when missing and `create_if_missing` is set.
    pub fn append(
        &self,
        raw: &str,
        content: &str,
        create_if_missing: bool,
        expected: Option<&str>,
    ) -> Result<Change> {
        // An append that may create names a place: another spelling of that place is still
        // the caller's note, but a note of that name elsewhere is not (a new name is a new
        // name), so only an append to an existing note finds it by name.
        let target = if create_if_missing {
            match self.forgiving(raw, Access::WriteFile, Reach::Spelling) {
                Ok(Lookup::Found(found)) => self.refuse_document(found, "appended to")?,
                _ => self.note_target(raw, "appended to")?,
            }
        } else {
            self.existing_note(raw, "appended to").map_err(|e| match e.code() {
                ErrorCode::NotFound => Error::new(
                    ErrorCode::NotFound,
                    format!("{}; or pass create_if_missing to create it", e.message()),
                ),
                _ => e,
            })?
        };
        let _guard = self.lock();
        match self.current(&target, expected)? {
            Some(bytes) => {
                let old = utf8(&target, bytes)?;
                let new = edit::append(&old, content);
                let w = self.write_note(&target, &old, &new, true)?;
                Ok(self.finish(&target, format!("appended to {}", target.rel), w))
            }
            None if create_if_missing => {
                let w = self.write_note(&target, "", &text::normalize(content), true)?;
                Ok(self.finish(
                    &target,
                    format!("created {} with the supplied content", target.rel),
                    w,
                ))
            }
            None => Err(Error::new(
                ErrorCode::NotFound,
                format!("{} does not exist; pass create_if_missing to create it", target.rel),
            )),
        }
    }

    /// Replaces the body, keeping the frontmatter block byte for byte.
    pub fn set_body(&self, raw: &str, content: &str, expected: Option<&str>) -> Result<Change> {
        let target = self.existing_note(raw, "given a new body")?;
        let _guard = self.lock();
        let old = self.existing_text(&target, expected)?;
        let new = edit::set_body(&old, content);
        let w = self.write_note(&target, &old, &new, true)?;
        Ok(self.finish(&target, format!("replaced the body of {}", target.rel), w))
    }

    /// Sets a frontmatter key (`value`), or removes it (`value` None).
    pub fn set_frontmatter(
        &self,
        raw: &str,
        key: &str,
        value: Option<&Value>,
        expected: Option<&str>,
    ) -> Result<Change> {
        let target = self.existing_note(raw, "given frontmatter")?;
        let _guard = self.lock();
        let old = self.existing_text(&target, expected)?;
        let new = match value {
            Some(v) => frontmatter::set(&old, key, v)?,
            None => frontmatter::delete(&old, key)?,
        };
        if value.is_none() && new == old {
            let mut change = self.change_at(
                &target,
                format!("'{key}' is not set in {}; nothing changed", target.rel),
            );
            change.etag = Some(content_hash(old.as_bytes()));
            return Ok(change);
        }
        // Setting `timestamp` itself must not be overwritten by the automatic bump.
        let bump = key != self.timestamp_key;
        let mut w = self.write_note(&target, &old, &new, bump)?;
        w.bumped = w.bumped || !bump;
        let message = match value {
            Some(_) => format!("set '{key}' in {}", target.rel),
            None => format!("removed '{key}' in {}", target.rel),
        };
        let mut change = self.finish(&target, message, w);
        if !bump {
            change.message = change.message.replace(NO_BUMP, "");
        }
        Ok(change)
    }

    /// Renames a frontmatter key, keeping its value lines byte for byte
    /// (`frontmatter::rename`); a name the block already has is refused with `key_exists`.
    pub(crate) fn rename_frontmatter_key(
        &self,
        raw: &str,
        key: &str,
        new: &str,
        expected: Option<&str>,
    ) -> Result<Change> {
        let target = self.existing_note(raw, "given frontmatter")?;
        let _guard = self.lock();
        let old = self.existing_text(&target, expected)?;
        let text = frontmatter::rename(&old, key, new.trim())?;
        let bump = key != self.timestamp_key && new.trim() != self.timestamp_key;
        let w = self.write_note(&target, &old, &text, bump)?;
        let message = format!("renamed '{key}' to '{}' in {}", new.trim(), target.rel);
        Ok(self.finish(&target, message, w))
    }

    /// Puts new frontmatter entries before, after or in place of the existing key `anchor`
    /// (`frontmatter::insert`); a key the block already has is refused with `key_exists`.
    pub(crate) fn frontmatter_entries(
        &self,
        raw: &str,
        anchor: &str,
        place: frontmatter::Place,
        entries: &[(String, Value)],
        expected: Option<&str>,
    ) -> Result<Change> {
        let target = self.existing_note(raw, "given frontmatter")?;
        let _guard = self.lock();
        let old = self.existing_text(&target, expected)?;
        let text = frontmatter::insert(&old, anchor, place, entries)?;
        // Writing the timestamp key itself must not be overwritten by the automatic bump.
        let bump = !entries.iter().any(|(k, _)| *k == self.timestamp_key);
        let w = self.write_note(&target, &old, &text, bump)?;
        let keys: Vec<&str> = entries.iter().map(|(k, _)| k.as_str()).collect();
        let verb = match place {
            frontmatter::Place::Before => "before",
            frontmatter::Place::After => "after",
            frontmatter::Place::Instead => "in place of",
        };
        let message = format!("set '{}' {verb} '{anchor}' in {}", keys.join("', '"), target.rel);
        Ok(self.finish(&target, message, w))
    }

    /// Adds items to, and removes items from, a frontmatter list (`tags`), keeping the other
    /// items and their order. A missing key starts empty and a plain value counts as a list of
    /// one; an item already there is not added twice. Nothing changes (and nothing is written)
    /// when every item to add is there and none to remove is.
    pub fn edit_list(
        &self,
        raw: &str,
        key: &str,
        add: &[Value],
        remove: &[Value],
        expected: Option<&str>,
    ) -> Result<Change> {
        let target = self.existing_note(raw, "given frontmatter")?;
        let _guard = self.lock();
        let old = self.existing_text(&target, expected)?;
        let mut items: Vec<Value> = match frontmatter::parse(&old).get(key) {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => items.clone(),
            Some(other) => vec![other.clone()],
        };
        let before = items.clone();
        items.retain(|item| !remove.contains(item));
        for item in add {
            if !items.contains(item) {
                items.push(item.clone());
            }
        }
        let shown = |vs: &[Value]| {
            vs.iter()
                .map(|v| v.as_str().map_or_else(|| v.to_string(), |s| format!("'{s}'")))
                .collect::<Vec<_>>()
                .join(", ")
        };
        if items == before {
            let mut change = self.change_at(
                &target,
                format!("'{key}' in {} already reads {}; nothing changed", target.rel, {
                    if items.is_empty() { "empty".to_string() } else { shown(&items) }
                }),
            );
            change.etag = Some(content_hash(old.as_bytes()));
            return Ok(change);
        }
        let new = frontmatter::set(&old, key, &Value::Array(items.clone()))?;
        let w = self.write_note(&target, &old, &new, key != "timestamp")?;
        let message = format!("'{key}' in {} is now [{}]", target.rel, shown(&items));
        Ok(self.finish(&target, message, w))
    }

    /// Replaces literal text; `count` is the number of occurrences the caller expects.
    pub fn replace_text(
        &self,
        raw: &str,
        find: &str,
        replace: &str,
        section: Option<&str>,
        count: usize,
        expected: Option<&str>,
    ) -> Result<Change> {
        let target = self.existing_note(raw, "edited as text")?;
        let _guard = self.lock();
        let old = self.existing_text(&target, expected)?;
        let section = section.map(str::trim).filter(|s| !s.is_empty());
        let (new, n) = literal::replace_text(&old, &target.rel, find, replace, section, count)?;
        let w = self.write_note(&target, &old, &new, true)?;
        let noun = if n == 1 { "occurrence" } else { "occurrences" };
        Ok(self.finish(&target, format!("replaced {n} {noun} of the text in {}", target.rel), w))
    }

    /// Creates a folder and any missing parents.
    pub fn create_folder(&self, raw: &str) -> Result<Change> {
        let target = self.gate(raw, Access::Folder)?;
        let _guard = self.lock();
        if target.abs.exists() && !target.abs.is_dir() {
            return Err(Error::new(
                ErrorCode::AlreadyExists,
                format!("{} exists and is a file; choose another folder name", target.rel),
            ));
        }
        let parts: Vec<String> = target.rel.split('/').map(String::from).collect();
        let created = fs::create_dirs(&self.root, &parts).map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists | std::io::ErrorKind::NotADirectory => Error::new(
                ErrorCode::AlreadyExists,
                format!(
                    "a file stands where a folder of {} should be; rename it first",
                    target.rel
                ),
            ),
            _ => Error::write_io(&target.rel, &e),
        })?;
        let message = if created.is_empty() {
            format!("{} already exists; nothing was created", target.rel)
        } else {
            format!("created folder(s): {}", created.join(", "))
        };
        let mut change = self.change_at(&target, message);
        change.folders_created = created;
        Ok(change)
    }
}
