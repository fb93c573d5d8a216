//! A move's link plan: the new text of every note and canvas whose links a move changes, made
//! before the vault's write lock is taken and confirmed under it. A canvas takes part as a note
//! does, its links found and edited by `vault::canvas`.
//!
//! Reading and scanning every note of a vault is the long part of a move. Done under the write
//! lock, it made every other write to the vault wait behind it (a hostile note once held an
//! unrelated write for half a minute). So [`Plan::make`] runs unlocked and remembers what it
//! read: the file list and each note's content hash. [`Plan::confirm`] runs under the lock: it
//! lists the files again and re-reads every note, scanning again only the notes whose bytes
//! changed meanwhile, or every note when a file came or went (where a link resolves depends on
//! every path). What it hands on is what planning under the lock would have made; a writer
//! that changed a note between the two is not overwritten with a plan made from its old text.
//! The moved note's own outbound rewrite is planned the same way. Nothing here writes.

use super::canvas;
use super::links::{self, PathSet};
use super::ops::content_hash;
use super::path::{Reading, Suffixes, Target};
use super::{Vault, fs};

/// What a move will change in the links of the vault's notes.
pub(super) struct Plan {
    from: String,
    to: String,
    /// Every file of the vault when the plan was made, sorted.
    files: Vec<String>,
    before: PathSet,
    after: PathSet,
    /// Every note and canvas scanned for links to `from`.
    notes: Vec<Scanned>,
    /// The moved note's bytes when planned and its text with its own links rewritten.
    source: Option<(Vec<u8>, String)>,
}

/// One note as the plan read it.
struct Scanned {
    rel: String,
    /// Its content hash when read; `None` when it could not be read as UTF-8 text (then it is
    /// left alone, as it would be under the lock).
    hash: Option<String>,
    /// Its bytes and new text, when its links change.
    rewrite: Option<(Vec<u8>, String)>,
}

impl Plan {
    /// Plans a move of `from` to `to`: lists the vault's files and reads every note and canvas
    /// but `from` and the root `index.md` (generated, and rewritten by its own generator).
    pub(super) fn make(vault: &Vault, from: &str, to: &str) -> Plan {
        let files = vault.all_files();
        // The notes' aliases are part of where a link leads, and they move with their note.
        let before = super::aliases::path_set(&vault.root, &files);
        let after = before.moved(from, to);
        let mut plan = Plan {
            from: from.to_string(),
            to: to.to_string(),
            files: Vec::new(),
            before,
            after,
            notes: Vec::new(),
            source: None,
        };
        plan.notes = files
            .iter()
            .filter(|rel| (Suffixes::is_note(rel) || canvas::is_canvas(rel)) && *rel != from)
            .filter(|rel| !rel.eq_ignore_ascii_case("index.md"))
            .map(|rel| plan.scan(rel, fs::read(&vault.root.join(rel)).ok()))
            .collect();
        plan.files = files;
        // A document or attachment has no links of its own to rewrite. A canvas names files by
        // their vault paths, which do not change when it moves, but its text nodes' links are
        // a note's.
        if (Suffixes::is_note(from) || canvas::is_canvas(from))
            && let Ok(bytes) = fs::read(&vault.root.join(from))
            && let Ok(text) = std::str::from_utf8(&bytes)
        {
            plan.source = Some((bytes.clone(), plan.outbound(text)));
        }
        plan
    }

    /// The plan as it stands now: made again when the vault's files are not those it was
    /// made over, else with every note whose bytes changed since scanned again. Call it under
    /// the write lock.
    pub(super) fn confirm(mut self, vault: &Vault) -> Plan {
        let files = vault.all_files();
        // An alias written meanwhile changes where links lead, as a file that came would.
        if files != self.files
            || super::aliases::Aliases::read(&vault.root, &files) != *self.before.aliases()
        {
            return Plan::make(vault, &self.from, &self.to);
        }
        let notes = std::mem::take(&mut self.notes);
        self.notes = notes
            .into_iter()
            .map(|note| {
                let bytes = fs::read(&vault.root.join(&note.rel)).ok();
                if note.unchanged(bytes.as_deref()) { note } else { self.scan(&note.rel, bytes) }
            })
            .collect();
        self
    }

    /// How many notes' links change, and how many canvases'.
    pub(super) fn changed(&self) -> (usize, usize) {
        let changed = self.notes.iter().filter(|note| note.rewrite.is_some());
        let canvases = changed.clone().filter(|note| canvas::is_canvas(&note.rel)).count();
        (changed.count() - canvases, canvases)
    }

    /// The moved note's text (read under the lock) with its own links rewritten: as planned
    /// when it is the text the plan read.
    pub(super) fn moved_text(&self, text: &str) -> String {
        match &self.source {
            Some((bytes, new)) if bytes == text.as_bytes() => new.clone(),
            _ => self.outbound(text),
        }
    }

    /// Every note and canvas whose links change: its target, its bytes as read, and its new
    /// text.
    pub(super) fn into_rewrites(self, vault: &Vault) -> Vec<(Target, Vec<u8>, String)> {
        self.notes
            .into_iter()
            .filter_map(|note| {
                let (bytes, new) = note.rewrite?;
                let abs = vault.root.join(&note.rel);
                Some((Target { rel: note.rel, abs, reading: Reading::AsWritten }, bytes, new))
            })
            .collect()
    }

    /// Reads `rel`'s links as `bytes` has them.
    fn scan(&self, rel: &str, bytes: Option<Vec<u8>>) -> Scanned {
        let Some(text) = bytes.as_deref().and_then(|b| std::str::from_utf8(b).ok()) else {
            return Scanned { rel: rel.to_string(), hash: None, rewrite: None };
        };
        let rewrite =
            if canvas::is_canvas(rel) { canvas::rewrite_inbound } else { links::rewrite_inbound };
        let (new, n) = rewrite(text, rel, &self.from, &self.to, &self.before, &self.after);
        Scanned {
            rel: rel.to_string(),
            hash: Some(content_hash(text.as_bytes())),
            rewrite: (n > 0).then(|| (text.as_bytes().to_vec(), new)),
        }
    }

    /// The moved note's text with its relative links and self-links pointing where they
    /// should from `to` (a canvas's: those of its text nodes).
    fn outbound(&self, text: &str) -> String {
        let rewrite = if canvas::is_canvas(&self.from) {
            canvas::rewrite_outbound
        } else {
            links::rewrite_outbound
        };
        rewrite(text, &self.from, &self.to, &self.before, &self.after).0
    }
}

impl Scanned {
    /// Whether `bytes` (the note now; `None` when unreadable) are what the plan read.
    fn unchanged(&self, bytes: Option<&[u8]>) -> bool {
        match (bytes, &self.rewrite) {
            (None, _) => self.hash.is_none(),
            (Some(now), Some((read, _))) => now == read.as_slice(),
            (Some(now), None) => self.hash.as_deref() == Some(content_hash(now).as_str()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::VaultSettings;

    fn vault(root: &std::path::Path) -> Vault {
        let settings = VaultSettings {
            doc_suffixes: vec![".pdf".into()],
            doc_files_dir: "Files".into(),
            doc_ocr: false,
            doc_max_bytes: 0,
            timestamp_key: "timestamp".into(),
        };
        std::fs::write(root.join("Target.md"), "# Target\n[[Other]]\n").unwrap();
        std::fs::write(root.join("Linker.md"), "see [t](Target.md)\n").unwrap();
        std::fs::write(root.join("Other.md"), "plain\n").unwrap();
        Vault::open("t", root, &settings).unwrap()
    }

    /// Each rewritten note and its new text.
    fn rewrites(plan: Plan, vault: &Vault) -> Vec<(String, String)> {
        plan.into_rewrites(vault).into_iter().map(|(t, _, new)| (t.rel, new)).collect()
    }

    #[test]
    fn a_plan_is_made_while_another_writer_holds_the_lock() {
        let dir = tempfile::tempdir().unwrap();
        let vault = vault(dir.path());
        let guard = vault.lock();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::scope(|s| {
            s.spawn(|| tx.send(Plan::make(&vault, "Target.md", "Moved/Renamed.md")).unwrap());
            // Planning never waits for the lock: it ends while the guard is still held.
            let plan = rx.recv_timeout(std::time::Duration::from_secs(30)).expect("a plan");
            drop(guard);
            let plan = plan.confirm(&vault);
            assert_eq!(plan.changed(), (1, 0));
            assert_eq!(
                rewrites(plan, &vault),
                [("Linker.md".to_string(), "see [t](Moved/Renamed.md)\n".to_string())]
            );
        });
    }

    #[test]
    fn a_note_written_after_the_plan_is_planned_again_from_its_new_text() {
        let dir = tempfile::tempdir().unwrap();
        let vault = vault(dir.path());
        let plan = Plan::make(&vault, "Target.md", "Moved/Renamed.md");
        // Written between the plan and the lock: one linking note changed, one that did not
        // link now does.
        std::fs::write(dir.path().join("Linker.md"), "now [a](Target.md) [b](Target.md)\n")
            .unwrap();
        std::fs::write(dir.path().join("Other.md"), "[t](Target.md)\n").unwrap();
        let plan = plan.confirm(&vault);
        assert_eq!(
            rewrites(plan, &vault),
            [
                (
                    "Linker.md".to_string(),
                    "now [a](Moved/Renamed.md) [b](Moved/Renamed.md)\n".into()
                ),
                ("Other.md".to_string(), "[t](Moved/Renamed.md)\n".into()),
            ]
        );
    }

    #[test]
    fn a_file_that_came_after_the_plan_makes_it_again_and_the_moved_text_is_reread() {
        let dir = tempfile::tempdir().unwrap();
        let vault = vault(dir.path());
        let plan = Plan::make(&vault, "Target.md", "Moved/Renamed.md");
        std::fs::write(dir.path().join("New.md"), "[n](Target.md)\n").unwrap();
        let plan = plan.confirm(&vault);
        // Not the text the plan read: its self-link is found again, and follows the new name.
        assert_eq!(plan.moved_text("see [[Target]]\n"), "see [[Renamed]]\n");
        let rewritten: Vec<String> = rewrites(plan, &vault).into_iter().map(|(r, _)| r).collect();
        assert_eq!(rewritten, ["Linker.md", "New.md"]);
    }
}
