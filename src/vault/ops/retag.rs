//! Renaming (or merging) a tag across every note of a vault, as one journaled change: planned
//! without the write lock, confirmed under it, committed all or nothing, as a move is.
//!
//! `tag_rename` rewrites one note's text; this module walks the notes, keeps the plan honest
//! (a note written between the plan and the lock is read and rewritten again, never
//! overwritten with a plan made from its old text; a note that came or went makes the whole
//! plan again) and commits it through the journal: every new text staged and every original
//! kept aside, the record written, then the renames, so a crash mid-way is finished or undone
//! on the next start (`journal::Journal::recover`). Like a move's link rewrites, a tag's
//! rename does not bump timestamps: every byte but the tags' stays.

use std::collections::BTreeSet;

use crate::error::{Error, ErrorCode, Result};
use crate::vault::journal::{self, Record};
use crate::vault::tag_rename::{self, Retag};
use crate::vault::{Vault, census, fs};

use super::content_hash;

/// What a tag's rename changed (or, for a dry run, would change).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TagRenamed {
    /// The vault.
    pub(crate) vault: String,
    /// The tag renamed, as asked (no `#`).
    pub(crate) from: String,
    /// Its new name.
    pub(crate) to: String,
    /// Every changed note in path order, with how many tags were replaced in it.
    pub(crate) notes: Vec<(String, usize)>,
    /// How many notes were read.
    pub(crate) notes_scanned: usize,
    /// Nothing was written: the notes are what a rename would change.
    pub(crate) dry_run: bool,
}

impl TagRenamed {
    /// Every tag replaced, over all notes.
    pub(crate) fn replaced(&self) -> usize {
        self.notes.iter().map(|(_, n)| n).sum()
    }

    /// The reply as text, for the terminal and MCP: one line saying what happened, then
    /// each changed note.
    pub(crate) fn render(&self) -> String {
        let (from, to, scanned) = (&self.from, &self.to, self.notes_scanned);
        if self.notes.is_empty() {
            return format!(
                "No note of {scanned} carries #{from} or a tag nested under it; nothing changed. \
                 vault_tags lists the tags there are.\n"
            );
        }
        let verb = if self.dry_run { "Would rename" } else { "Renamed" };
        let mut out = format!(
            "{verb} #{from} to #{to} (nested tags with it): {} tag(s) in {} note(s) of {scanned}{}\n\n",
            self.replaced(),
            self.notes.len(),
            if self.dry_run { "; nothing written (dry run)" } else { "" }
        );
        for (path, n) in &self.notes {
            out.push_str(&format!("- {path} ({n})\n"));
        }
        out
    }
}

/// One note as the plan read it.
struct Scanned {
    rel: String,
    /// Its content hash when read; `None` when unreadable or not UTF-8 (then it is left
    /// alone, as it would be under the lock).
    hash: Option<String>,
    /// Its bytes, new text and count of replaced tags, when it carries the tag.
    rewrite: Option<(Vec<u8>, String, usize)>,
}

/// The rename's plan: every note's new text, and the file list it was made over.
struct Plan {
    generated: Generated,
    files: Vec<String>,
    notes: Vec<Scanned>,
}

impl Plan {
    /// Reads every note (the root `index.md` too unless `generated` says mdvault wrote it:
    /// the notes the tag listing reads) and plans its rewrite.
    fn make(vault: &Vault, retag: &Retag, generated: Generated) -> Plan {
        let files = vault.all_files();
        let counting = census::Counting::notes_everywhere();
        let mut notes = Vec::new();
        for rel in &files {
            let class = census::classify(rel, &counting);
            if !matches!(class, census::FileClass::Note | census::FileClass::RootIndex) {
                continue;
            }
            let bytes = fs::read(&vault.root.join(rel)).ok();
            let text = bytes.as_deref().and_then(|b| std::str::from_utf8(b).ok());
            if class == census::FileClass::RootIndex && text.is_some_and(generated) {
                continue;
            }
            notes.push(scan(rel, bytes, retag));
        }
        Plan { generated, files, notes }
    }

    /// The plan as it stands now, made again when a file came or went, else with each note
    /// whose bytes changed read again. Call it under the write lock.
    fn confirm(self, vault: &Vault, retag: &Retag) -> Plan {
        if vault.all_files() != self.files {
            return Plan::make(vault, retag, self.generated);
        }
        let notes = self
            .notes
            .into_iter()
            .map(|note| {
                let bytes = fs::read(&vault.root.join(&note.rel)).ok();
                if note.unchanged(bytes.as_deref()) { note } else { scan(&note.rel, bytes, retag) }
            })
            .collect();
        Plan { generated: self.generated, files: self.files, notes }
    }

    /// The reply this plan makes.
    fn reply(&self, vault: &Vault, retag: &Retag, dry_run: bool) -> TagRenamed {
        let notes = self
            .notes
            .iter()
            .filter_map(|n| n.rewrite.as_ref().map(|(_, _, count)| (n.rel.clone(), *count)))
            .collect();
        TagRenamed {
            vault: vault.name.clone(),
            from: retag.from().to_string(),
            to: retag.to().to_string(),
            notes,
            notes_scanned: self.notes.len(),
            dry_run,
        }
    }
}

/// Which root `index.md` a rename leaves alone: the one mdvault generates (its text repeats
/// the notes' descriptions and its generator rewrites it). The rule is upkeep's
/// (`upkeep::indexmd::generated`), handed down by the caller.
pub(crate) type Generated = fn(&str) -> bool;

/// Reads `rel`'s tags as `bytes` has them.
fn scan(rel: &str, bytes: Option<Vec<u8>>, retag: &Retag) -> Scanned {
    let Some(text) = bytes.as_deref().and_then(|b| std::str::from_utf8(b).ok()) else {
        return Scanned { rel: rel.to_string(), hash: None, rewrite: None };
    };
    Scanned {
        rel: rel.to_string(),
        hash: Some(content_hash(text.as_bytes())),
        rewrite: tag_rename::rename(text, retag)
            .map(|(new, count)| (text.as_bytes().to_vec(), new, count)),
    }
}

impl Scanned {
    /// Whether `bytes` (the note now; `None` when unreadable) are what the plan read.
    fn unchanged(&self, bytes: Option<&[u8]>) -> bool {
        match (bytes, &self.rewrite) {
            (None, _) => self.hash.is_none(),
            (Some(now), Some((read, _, _))) => now == read.as_slice(),
            (Some(now), None) => self.hash.as_deref() == Some(content_hash(now).as_str()),
        }
    }
}

impl Vault {
    /// Renames the tag `retag.from()` (and every tag nested under it) to `retag.to()` in
    /// every note, inline and in the frontmatter; onto a tag that exists, it merges them.
    /// With `dry_run`, says what it would change and writes nothing.
    pub(crate) fn rename_tag(
        &self,
        retag: &Retag,
        dry_run: bool,
        generated: Generated,
    ) -> Result<TagRenamed> {
        // Planned before the lock and confirmed under it: reading every note is the long
        // part, and other writes to the vault must not wait for it.
        let plan = Plan::make(self, retag, generated);
        if dry_run {
            return Ok(plan.reply(self, retag, true));
        }
        let _guard = self.lock();
        let plan = plan.confirm(self, retag);
        let reply = plan.reply(self, retag, false);
        let rewrites: Vec<(String, Vec<u8>, String)> = plan
            .notes
            .into_iter()
            .filter_map(|n| n.rewrite.map(|(bytes, new, _)| (n.rel, bytes, new)))
            .filter(|(_, bytes, new)| bytes != new.as_bytes())
            .collect();
        if !rewrites.is_empty() {
            self.commit_retag(retag, &rewrites)?;
        }
        Ok(reply)
    }

    /// Stages every note's new text and keeps every original aside (hidden temporaries,
    /// flushed with their folders), records the plan in the journal (flushed), then renames
    /// each new text into place. A failure undoes what was committed, with the code that
    /// settles a record whose process died (`journal::roll_back`).
    fn commit_retag(&self, retag: &Retag, rewrites: &[(String, Vec<u8>, String)]) -> Result<()> {
        let tag = self.journal.as_ref().map(|j| j.tag());
        let tag = tag.as_deref();
        // Every temporary is removed if we return before the record is written.
        let mut temps: Vec<tempfile::TempPath> = Vec::new();
        let mut steps = Vec::new();
        for (rel, original, new) in rewrites {
            let (step, pair) = self.stage_rewrite(rel, &self.root.join(rel), original, new, tag)?;
            steps.push(step);
            temps.extend(pair);
        }
        // The temporaries' names must be on disk before a record that names them is.
        let mut flushed = BTreeSet::new();
        for temp in &temps {
            if flushed.insert(temp.parent().map(std::path::Path::to_path_buf)) {
                fs::sync_dir(temp).map_err(|e| Error::write_io(&rewrites[0].0, &e))?;
            }
        }
        let record = Record::retag(&self.name, &self.root, retag.from(), retag.to(), steps);
        if crashes_at(0) {
            // As if killed: the temporaries stay behind, with no record naming them.
            temps.into_iter().for_each(|t| drop(t.keep()));
            return Err(simulated_crash());
        }
        let open = match &self.journal {
            Some(journal) => Some(
                journal
                    .begin(&record)
                    .map_err(|e| Error::write_io("the journal record of this rename", &e))?,
            ),
            None => None,
        };
        // From here on the record names every temporary; they are removed by path.
        temps.into_iter().for_each(|t| drop(t.keep()));
        for (i, step) in record.steps.iter().enumerate() {
            if crashes_at(1 + i) {
                return Err(simulated_crash());
            }
            if let Err(e) = journal::forward(&self.root, step) {
                for file in journal::roll_back(&self.root, &record) {
                    tracing::warn!("vault {}: undoing a failed tag rename: {file}", self.name);
                }
                journal::clean_up(&self.root, &record);
                self.finish_record(open);
                return Err(Error::new(
                    ErrorCode::Conflict,
                    format!(
                        "could not rename the tag in {} ({e}); the rename was undone, nothing \
                         changed. Try again",
                        step.path
                    ),
                ));
            }
        }
        if crashes_at(1 + record.steps.len()) {
            return Err(simulated_crash());
        }
        self.finish_record(open);
        journal::clean_up(&self.root, &record);
        Ok(())
    }
}

#[cfg(test)]
thread_local! {
    /// Test hook: stop a rename dead at point n, as SIGKILL would: 0 after staging, 1 + k
    /// after the record and k committed notes, then before the record's removal.
    static CRASH_AT: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

fn crashes_at(point: usize) -> bool {
    #[cfg(test)]
    {
        CRASH_AT.with(|f| f.get() == Some(point))
    }
    #[cfg(not(test))]
    {
        let _ = point;
        false
    }
}

fn simulated_crash() -> Error {
    Error::new(ErrorCode::InternalError, "simulated crash (a test hook)")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vault::ops::tests::{settings, snapshot};

    /// Four notes carrying `#old` in different places, and one that does not.
    fn tagged_vault(root: &std::path::Path) {
        std::fs::write(root.join("A.md"), "---\ntags: [old, b]\n---\n#old/x here\n").unwrap();
        std::fs::write(root.join("B.md"), "text #Old\r\n").unwrap();
        std::fs::create_dir_all(root.join("Sub")).unwrap();
        std::fs::write(root.join("Sub/C.md"), "---\ntags:\n  - old\n  - new\n---\n").unwrap();
        std::fs::write(root.join("Sub/D.md"), "`#old` is code, #old is not\n").unwrap();
        std::fs::write(root.join("Plain.md"), "#older\n").unwrap();
    }

    /// No root `index.md` is generated here.
    fn none(_: &str) -> bool {
        false
    }

    fn has_temporaries(root: &std::path::Path) -> bool {
        snapshot(root).iter().any(|(rel, _)| rel.contains(".mdvault-"))
    }

    #[test]
    fn a_rename_rewrites_every_note_and_replies_with_each_and_its_count() {
        let dir = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        tagged_vault(dir.path());
        let vault = Vault::open("t", dir.path(), &settings()).unwrap().with_journal(data.path());
        let retag = Retag::new("old", "new").unwrap();
        let before = snapshot(dir.path());
        let dry = vault.rename_tag(&retag, true, none).unwrap();
        assert_eq!(snapshot(dir.path()), before, "a dry run wrote");
        let done = vault.rename_tag(&retag, false, none).unwrap();
        let want = [("A.md", 2), ("B.md", 1), ("Sub/C.md", 1), ("Sub/D.md", 1)];
        assert_eq!(done.notes, want.map(|(p, n)| (p.to_string(), n)));
        assert_eq!((dry.notes, dry.dry_run, done.notes_scanned), (done.notes.clone(), true, 5));
        let read = |rel: &str| std::fs::read_to_string(dir.path().join(rel)).unwrap();
        assert_eq!(read("A.md"), "---\ntags: [new, b]\n---\n#new/x here\n");
        assert_eq!(read("B.md"), "text #new\r\n");
        assert_eq!(read("Sub/C.md"), "---\ntags:\n  - new\n---\n");
        assert_eq!(read("Sub/D.md"), "`#old` is code, #new is not\n");
        assert_eq!(read("Plain.md"), "#older\n");
        assert!(!has_temporaries(dir.path()));
        assert_eq!(std::fs::read_dir(data.path().join("journal")).unwrap().count(), 0);
        assert!(done.render().starts_with(
            "Renamed #old to #new (nested tags with it): 5 tag(s) in 4 note(s) of 5\n"
        ));
        assert!(
            vault.rename_tag(&retag, false, none).unwrap().render().starts_with("No note of 5")
        );
    }

    #[test]
    fn a_note_written_between_the_plan_and_the_lock_is_renamed_from_its_new_text() {
        let dir = tempfile::tempdir().unwrap();
        tagged_vault(dir.path());
        let vault = Vault::open("t", dir.path(), &settings()).unwrap();
        let retag = Retag::new("old", "new").unwrap();
        let plan = Plan::make(&vault, &retag, none);
        std::fs::write(dir.path().join("B.md"), "rewritten #old #old\n").unwrap();
        std::fs::write(dir.path().join("Plain.md"), "now #old\n").unwrap();
        let plan = plan.confirm(&vault, &retag);
        let reply = plan.reply(&vault, &retag, false);
        assert!(reply.notes.contains(&("B.md".to_string(), 2)), "{:?}", reply.notes);
        assert!(reply.notes.contains(&("Plain.md".to_string(), 1)), "{:?}", reply.notes);
        let new: Vec<String> =
            plan.notes.into_iter().filter_map(|n| n.rewrite.map(|r| r.1)).collect();
        assert!(new.contains(&"rewritten #new #new\n".to_string()), "{new:?}");
    }

    #[test]
    fn a_rename_killed_at_any_point_is_settled_on_the_next_start_to_all_old_or_all_new() {
        let expected = tempfile::tempdir().unwrap();
        tagged_vault(expected.path());
        let plain = Vault::open("t", expected.path(), &settings()).unwrap();
        let before = snapshot(expected.path());
        plain.rename_tag(&Retag::new("old", "new").unwrap(), false, none).unwrap();
        let after = snapshot(expected.path());

        let mut finished = BTreeSet::new();
        for point in 0.. {
            let dir = tempfile::tempdir().unwrap();
            let data = tempfile::tempdir().unwrap();
            let root = dir.path().canonicalize().unwrap();
            tagged_vault(&root);
            let vault = std::sync::Arc::new(
                Vault::open("t", &root, &settings()).unwrap().with_journal(data.path()),
            );
            CRASH_AT.with(|f| f.set(Some(point)));
            let result = vault.rename_tag(&Retag::new("old", "new").unwrap(), false, none);
            CRASH_AT.with(|f| f.set(None));
            if result.is_ok() {
                // Staging, before each of the 4 notes, before the record's removal.
                assert_eq!(point, 6, "the rename stopped offering crash points at {point}");
                break;
            }
            let journal = journal::Journal::new(data.path());
            let protected = journal.recover(std::slice::from_ref(&vault));
            let dead = |_: u32| false;
            let tag = journal.tag();
            let sweep = crate::vault::sweep::Sweep {
                started: std::time::SystemTime::now() + std::time::Duration::from_secs(5),
                protected: &protected,
                alive: &dead,
                journal: Some(&tag),
            };
            crate::vault::sweep::sweep_vault(&root, &sweep);
            let now = snapshot(&root);
            assert!(now == before || now == after, "a crash at point {point} left a mix");
            assert!(!has_temporaries(&root), "temporaries left after a crash at {point}");
            let records = std::fs::read_dir(journal.dir()).map_or(0, Iterator::count);
            assert_eq!(records, 0, "a record is left after a crash at {point}");
            finished.insert(now == after);
        }
        assert_eq!(finished.len(), 2, "crashes should end both undone and finished");
    }
}
