//! Moving a note, document, canvas or attachment, with the link rewrites it needs (in notes and
//! canvases): staged, journalled, committed all or nothing (`move_plan` makes the plan,
//! `journal` records it).

use std::collections::BTreeSet;

use crate::error::{Error, ErrorCode, Result};
use crate::vault::journal::{self, Record, Step};
use crate::vault::move_plan::Plan;
use crate::vault::path::{Access, Target};
use crate::vault::{Vault, attachment, canvas, frontmatter, fs};

use super::{Change, NO_BUMP, content_hash, now_timestamp, rel_string, utf8};

impl Vault {
    /// Moves a note, document, canvas or attachment, rewriting inbound links when
    /// `update_links` is set. Only a note's own bytes change (its links and timestamp); every
    /// other kind moves as it is.
    ///
    /// All or nothing: every new file is written to a staged temporary first; only when all of
    /// them are ready are they renamed into place, and a failure while committing restores
    /// what was already committed.
    pub fn move_file(
        &self,
        from_raw: &str,
        to_raw: &str,
        update_links: bool,
        expected: Option<&str>,
    ) -> Result<Change> {
        let from = self.gate(from_raw, Access::Move)?;
        let to = self.gate(to_raw, Access::Move)?;
        let (from_kind, to_kind) = (self.kind_of(&from.rel), self.kind_of(&to.rel));
        if from_kind != to_kind {
            return Err(Error::new(
                ErrorCode::KindChange,
                format!(
                    "moving {} to {} would turn a {from_kind} into a {to_kind}; keep the kind of \
                     file",
                    from.rel, to.rel,
                ),
            ));
        }
        // Only a note's bytes change in a move, and a canvas's when a text node's link must
        // (see below); every other kind keeps them.
        let (note, canvas) = (from_kind == "note", from_kind == "canvas");
        if from.rel == to.rel {
            return Err(Error::new(
                ErrorCode::InvalidRequest,
                format!("{} is already at that path; name a different destination", from.rel),
            ));
        }
        // Planned before the lock and confirmed under it: scanning every note is the long
        // part of a move, and other writes to the vault must not wait for it.
        let planned = update_links.then(|| Plan::make(self, &from.rel, &to.rel));
        let _guard = self.lock();
        let Some(source_bytes) = self.current(&from, expected)? else {
            return Err(Error::new(ErrorCode::NotFound, format!("{} does not exist", from.rel)));
        };
        if std::fs::symlink_metadata(&to.abs).is_ok() {
            return Err(Error::new(
                ErrorCode::AlreadyExists,
                format!("{} already exists; choose another destination or delete it first", to.rel),
            ));
        }
        let plan = planned.map(|plan| plan.confirm(self));

        let mut bumped = false;
        let moved_text = if note {
            // The moved note keeps its bytes: only link targets and the timestamp change.
            let mut new = utf8(&from, source_bytes.clone())?;
            if let Some(plan) = &plan {
                new = plan.moved_text(&new);
            }
            if let Some(stamped) =
                frontmatter::bump_key(&new, &self.timestamp_key, &now_timestamp())
            {
                new = stamped;
                bumped = true;
            }
            Some(new)
        } else if canvas && let Some(plan) = &plan {
            // A canvas has no timestamp; it is written only when a link of its own moved, and
            // is otherwise renamed as it is.
            let old = utf8(&from, source_bytes.clone())?;
            Some(plan.moved_text(&old)).filter(|new| *new != old)
        } else {
            None
        };
        let (links_changed, canvases_changed) = plan.as_ref().map_or((0, 0), Plan::changed);
        let rewrites = plan.map(|plan| plan.into_rewrites(self)).unwrap_or_default();

        // Folders made for the destination are taken away again (while empty) if the move
        // does not finish.
        let made = fs::create_parents(&to.abs).map_err(|e| Error::write_io(&to.rel, &e))?;
        let result =
            self.commit_move(&from, &to, &source_bytes, moved_text.as_deref(), &rewrites, &made);
        if result.is_err() {
            fs::remove_created_dirs(&made);
        }
        result?;

        let mut message = format!("moved {} to {}", from.rel, to.rel);
        if note && !bumped {
            message.push_str(NO_BUMP);
        }
        if update_links {
            message.push_str(&format!("; repointed links in {links_changed} note(s)"));
            if canvases_changed > 0 {
                message.push_str(&format!(" and {canvases_changed} canvas(es)"));
            }
        } else {
            message.push_str("; links NOT updated");
        }
        let message = from.reading.told(&from.rel, message);
        let mut change = self.change_at(&to, message);
        change.timestamp_bumped = bumped;
        change.links_rewritten = update_links.then_some(links_changed + canvases_changed);
        change.etag = match &moved_text {
            Some(t) => Some(content_hash(t.as_bytes())),
            None => Some(content_hash(&source_bytes)),
        };
        Ok(change)
    }

    /// The second half of a move. Stage: the destination's bytes, every rewritten note's new
    /// text, and a kept original of every file the move replaces or removes, all as hidden
    /// temporaries, flushed with their folders. Record: the plan in the journal, flushed.
    /// Commit: destination first (never clobbering), then the rewritten notes, then the source
    /// goes. A failure undoes the committed steps from the kept originals, with the same code
    /// that settles a move whose process died (`journal::settle`).
    fn commit_move(
        &self,
        from: &Target,
        to: &Target,
        source_bytes: &[u8],
        moved_text: Option<&str>,
        rewrites: &[(Target, Vec<u8>, String)],
        made: &[std::path::PathBuf],
    ) -> Result<()> {
        // Every temporary is removed if we return before the record is written. Their names
        // carry the journal's tag, so that only a process of this data directory sweeps them.
        let tag = self.journal.as_ref().map(|j| j.tag());
        let tag = tag.as_deref();
        let mut temps: Vec<tempfile::TempPath> = Vec::new();
        let mut steps = Vec::new();
        let dest = match moved_text {
            Some(t) => fs::Staged::for_journal(&to.abs, t.as_bytes(), tag),
            // A document keeps its bytes: its staged copy is a second name of the source.
            None => fs::link_aside(&from.abs, &to.abs, tag),
        }
        .map_err(|e| Error::write_io(&to.rel, &e))?;
        let new_hash = content_hash(moved_text.map_or(source_bytes, str::as_bytes));
        steps.push(Step {
            path: to.rel.clone(),
            old: None,
            new: Some(new_hash),
            staged: Some(self.rel_of(&dest)),
            kept: None,
        });
        temps.push(dest);
        for (target, original, new) in rewrites {
            let (step, pair) = self.stage_rewrite(&target.rel, &target.abs, original, new, tag)?;
            steps.push(step);
            temps.extend(pair);
        }
        let kept_source = fs::link_aside(&from.abs, &from.abs, tag)
            .map_err(|e| Error::write_io(&from.rel, &e))?;
        steps.push(Step {
            path: from.rel.clone(),
            old: Some(content_hash(source_bytes)),
            new: None,
            staged: None,
            kept: Some(self.rel_of(&kept_source)),
        });
        temps.push(kept_source);

        // The temporaries' names must be on disk before a record that names them is.
        let mut flushed = BTreeSet::new();
        for temp in &temps {
            if flushed.insert(temp.parent().map(std::path::Path::to_path_buf)) {
                fs::sync_dir(temp).map_err(|e| Error::write_io(&to.rel, &e))?;
            }
        }
        let made = made.iter().map(|m| self.rel_of(m)).collect();
        let record = Record::new(&self.name, &self.root, &from.rel, &to.rel, made, steps);
        if crashes_at(0) {
            // As if killed: the temporaries stay behind, with no record naming them.
            temps.into_iter().for_each(|t| drop(t.keep()));
            return Err(simulated_crash());
        }
        let open = match &self.journal {
            Some(journal) => Some(
                journal
                    .begin(&record)
                    .map_err(|e| Error::write_io("the journal record of this move", &e))?,
            ),
            None => None,
        };
        // From here on the record names every temporary; they are removed by path.
        temps.into_iter().for_each(|t| drop(t.keep()));

        for (i, step) in record.steps.iter().enumerate() {
            if crashes_at(1 + i) {
                return Err(simulated_crash());
            }
            let result = if injected_failure(i) {
                Err(std::io::Error::other("injected failure"))
            } else {
                journal::forward(&self.root, step)
            };
            if let Err(e) = result {
                let left = journal::roll_back(&self.root, &record);
                journal::clean_up(&self.root, &record);
                for file in &left {
                    tracing::warn!("vault {}: undoing a failed move: {file}", self.name);
                }
                self.finish_record(open);
                return Err(self.step_failed(&record, i, &e));
            }
        }
        if crashes_at(1 + record.steps.len()) {
            return Err(simulated_crash());
        }
        self.finish_record(open);
        if crashes_at(2 + record.steps.len()) {
            return Err(simulated_crash());
        }
        journal::clean_up(&self.root, &record);
        Ok(())
    }

    /// What kind of file a move keeps: a note, a document, a canvas, or an attachment of one
    /// media type (a `.png` renamed `.jpg` would be served as what it is not).
    fn kind_of(&self, rel: &str) -> String {
        if let Some(kind) = attachment::kind_of(rel) {
            format!("{} attachment", kind.media_type)
        } else if canvas::is_canvas(rel) {
            "canvas".to_string()
        } else if self.suffixes.is_document(rel) {
            "document".to_string()
        } else {
            "note".to_string()
        }
    }

    /// One file a journaled change rewrites (a move's link rewrite, a tag rename): its new
    /// text staged and its original kept aside, both hidden temporaries beside it, and the
    /// journal step naming them. The move and the tag rename both stage this way.
    pub(super) fn stage_rewrite(
        &self,
        rel: &str,
        abs: &std::path::Path,
        original: &[u8],
        new: &str,
        tag: Option<&str>,
    ) -> Result<(Step, [tempfile::TempPath; 2])> {
        let staged = fs::Staged::for_journal(abs, new.as_bytes(), tag)
            .map_err(|e| Error::write_io(rel, &e))?;
        let kept = fs::link_aside(abs, abs, tag).map_err(|e| Error::write_io(rel, &e))?;
        let step = Step {
            path: rel.to_string(),
            old: Some(content_hash(original)),
            new: Some(content_hash(new.as_bytes())),
            staged: Some(self.rel_of(&staged)),
            kept: Some(self.rel_of(&kept)),
        };
        Ok((step, [staged, kept]))
    }

    /// A temporary's vault-relative path (temporaries always sit beside their target).
    pub(super) fn rel_of(&self, abs: &std::path::Path) -> String {
        rel_string(abs.strip_prefix(&self.root).unwrap_or(abs))
    }

    /// Removes a settled journal record (a move's, a tag rename's). Left behind, it would only
    /// be settled again (to the state it is already in) on the next start.
    pub(super) fn finish_record(&self, open: Option<journal::Open>) {
        if let Some(Err(e)) = open.map(journal::Open::finish) {
            tracing::warn!("vault {}: cannot remove a settled journal record: {e}", self.name);
        }
    }

    /// The refusal for a move whose step `i` failed and was undone.
    fn step_failed(&self, record: &Record, i: usize, e: &std::io::Error) -> Error {
        let step = &record.steps[i];
        if i == 0 {
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                return Error::new(
                    ErrorCode::AlreadyExists,
                    format!("{} appeared while moving; nothing changed", step.path),
                );
            }
            return Error::write_io(&step.path, e);
        }
        if i + 1 == record.steps.len() {
            return Error::write_io(&step.path, e);
        }
        Error::new(
            ErrorCode::Conflict,
            format!(
                "could not update the links in {} ({e}); the move was undone, nothing changed. Try again",
                step.path
            ),
        )
    }
}

#[cfg(test)]
thread_local! {
    /// Test hook: fail step n of a move's commit (0 the destination, then the rewritten notes,
    /// last the source's removal), as a full disk or a lost permission would.
    static FAIL_STEP_AT: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
    /// Test hook: stop a move dead at point n, as SIGKILL would: 0 after staging, 1 + k after
    /// the record and k committed steps, then after the record's removal.
    static CRASH_AT: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

fn injected_failure(i: usize) -> bool {
    #[cfg(test)]
    {
        FAIL_STEP_AT.with(|f| f.get() == Some(i))
    }
    #[cfg(not(test))]
    {
        let _ = i;
        false
    }
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

    /// A target note and four notes linking to it (each in two syntaxes).
    fn linked_vault(root: &std::path::Path, target: &str) {
        std::fs::write(root.join("Target.md"), target).unwrap();
        for n in 0..4 {
            std::fs::write(
                root.join(format!("L{n}.md")),
                format!("[[Target]] and [t](Target.md) {n}\n"),
            )
            .unwrap();
        }
    }

    fn has_temporaries(root: &std::path::Path) -> bool {
        snapshot(root).iter().any(|(rel, _)| rel.contains(".mdvault-"))
    }

    fn write(root: &std::path::Path, rel: &str, text: &str) {
        let abs = root.join(rel);
        std::fs::create_dir_all(abs.parent().unwrap()).unwrap();
        std::fs::write(abs, text).unwrap();
    }

    fn read(root: &std::path::Path, rel: &str) -> String {
        std::fs::read_to_string(root.join(rel)).unwrap()
    }

    const BOARD: &str = "{\"nodes\":[\n\t{\"id\":\"a\",\"type\":\"file\",\"file\":\"img/a.png\",\"x\":0,\"y\":0},\n\t\
        {\"id\":\"b\",\"type\":\"text\",\"text\":\"[[Target]] ![](img/a.png)\",\"x\":0,\"y\":9},\n\t\
        {\"id\":\"c\",\"type\":\"file\",\"file\":\"Target.md\",\"x\":9,\"y\":0}\n]}\n";

    #[test]
    fn a_note_move_repoints_the_canvases_that_name_it_and_journals_them_like_notes() {
        let dir = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "Target.md", "# Target\n");
        write(root, "img/a.png", "png");
        write(root, "Boards/Plan.canvas", BOARD);
        let vault = Vault::open("t", root, &settings()).unwrap().with_journal(data.path());
        // Every step fails in turn and leaves nothing changed, the canvas's step among them.
        let before = snapshot(root);
        for at in 0..3 {
            FAIL_STEP_AT.with(|f| f.set(Some(at)));
            assert!(vault.move_file("Target.md", "Sub/Renamed.md", true, None).is_err());
            assert_eq!(snapshot(root), before, "failure at step {at} left changes");
        }
        FAIL_STEP_AT.with(|f| f.set(None));
        let change = vault.move_file("Target.md", "Sub/Renamed.md", true, None).unwrap();
        assert_eq!(change.links_rewritten, Some(1));
        assert!(change.message.contains("0 note(s) and 1 canvas(es)"), "{}", change.message);
        assert_eq!(
            read(root, "Boards/Plan.canvas"),
            BOARD
                .replace("[[Target]]", "[[Renamed]]")
                .replace("\"file\":\"Target.md\"", "\"file\":\"Sub/Renamed.md\"")
        );
    }

    #[test]
    fn an_attachment_moves_with_every_link_and_embed_to_it_and_its_bytes_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "img/a.png", "\u{89}PNG bytes");
        write(root, "Notes/Deep.md", "![[a.png]] ![](../img/a.png) [p](<../img/a.png>)\n");
        write(root, "Top.md", "![[img/a.png|300]] ![](img/a.png)\n");
        write(root, "Boards/Plan.canvas", BOARD);
        write(root, "Target.md", "# Target\n");
        let vault = Vault::open("t", root, &settings()).unwrap();
        let change = vault.move_file("img/a.png", "assets/a.png", true, None).unwrap();
        assert_eq!(change.links_rewritten, Some(3));
        assert!(!root.join("img/a.png").exists());
        assert_eq!(std::fs::read(root.join("assets/a.png")).unwrap(), "\u{89}PNG bytes".as_bytes());
        // A bare name still finds the only a.png; a path names its new place.
        assert_eq!(
            read(root, "Notes/Deep.md"),
            "![[a.png]] ![](../assets/a.png) [p](<../assets/a.png>)\n"
        );
        assert_eq!(read(root, "Top.md"), "![[assets/a.png|300]] ![](assets/a.png)\n");
        assert_eq!(
            read(root, "Boards/Plan.canvas"),
            BOARD.replace("img/a.png", "assets/a.png"),
            "the file node and the text node's embed"
        );
    }

    #[test]
    fn a_bare_attachment_name_gains_a_path_when_the_move_makes_it_ambiguous() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "img/a.png", "one");
        write(root, "other/a.png", "two");
        write(root, "img/Note.md", "![[a.png]]\n");
        let vault = Vault::open("t", root, &settings()).unwrap();
        vault.move_file("img/a.png", "assets/a.png", true, None).unwrap();
        assert_eq!(read(root, "img/Note.md"), "![[assets/a.png]]\n");
    }

    #[test]
    fn a_moved_note_keeps_its_relative_links_to_attachments() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "img/a.png", "png");
        write(root, "Notes/N.md", "![](../img/a.png) ![[a.png]]\n");
        let vault = Vault::open("t", root, &settings()).unwrap();
        vault.move_file("Notes/N.md", "Deep/er/N.md", true, None).unwrap();
        assert_eq!(read(root, "Deep/er/N.md"), "![](../../img/a.png) ![[a.png]]\n");
    }

    #[test]
    fn a_moved_canvas_keeps_its_text_nodes_relative_links_and_is_else_renamed_byte_for_byte() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "B/n.md", "# N\n");
        let canvas = r#"{"nodes":[
  {"id":"1","type":"text","text":"See [n](../B/n.md) and [[n]]","x":0,"y":0,"width":9,"height":9},
  {"id":"2","type":"file","file":"B/n.md","x":20,"y":0,"width":9,"height":9}
],"edges":[]}"#;
        write(root, "A/plan.canvas", canvas);
        let plain = r#"{"nodes":[{"id":"1","type":"text","text":"[[n]]","x":0,"y":0,"width":9,"height":9}]}"#;
        write(root, "A/plain.canvas", plain);
        let vault = Vault::open("t", root, &settings()).unwrap();

        let change = vault.move_file("A/plan.canvas", "C/D/plan.canvas", true, None).unwrap();
        let moved = read(root, "C/D/plan.canvas");
        // Only the relative link changed: the file node's vault path and the wikilink still
        // lead to B/n.md, and the JSON around them is as Obsidian wrote it.
        assert_eq!(moved, canvas.replace("../B/n.md", "../../B/n.md"));
        assert!(!change.message.contains("timestamp"), "{}", change.message);
        assert_eq!(change.etag.as_deref(), Some(content_hash(moved.as_bytes()).as_str()));

        vault.move_file("A/plain.canvas", "C/plain.canvas", true, None).unwrap();
        assert_eq!(read(root, "C/plain.canvas"), plain);
        // Without link updates, its bytes go as they are.
        vault.move_file("C/D/plan.canvas", "plan.canvas", false, None).unwrap();
        assert_eq!(read(root, "plan.canvas"), moved);
    }

    #[test]
    fn a_move_keeps_the_kind_of_file_and_an_attachment_is_still_never_written() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "a.png", "png");
        write(root, "Plan.canvas", "{}");
        write(root, "N.md", "x\n");
        let vault = Vault::open("t", root, &settings()).unwrap();
        for (from, to) in [
            ("a.png", "a.jpg"),
            ("a.png", "a.md"),
            ("Plan.canvas", "Plan.md"),
            ("N.md", "N.canvas"),
        ] {
            let err = vault.move_file(from, to, true, None).unwrap_err();
            assert_eq!(err.code(), ErrorCode::KindChange, "{from} -> {to}: {}", err.message());
        }
        let err = vault.delete("a.png", None).unwrap_err();
        assert_eq!(err.code(), ErrorCode::AttachmentReadOnly);
        let moved = vault.move_file("Plan.canvas", "Boards/Plan.canvas", true, None).unwrap();
        assert_eq!(read(root, "Boards/Plan.canvas"), "{}", "a canvas moves as it is");
        assert!(moved.message.contains("0 note(s)"), "{}", moved.message);
    }

    #[test]
    fn a_move_that_fails_while_committing_leaves_nothing_changed() {
        let dir = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let root = dir.path();
        linked_vault(root, "---\ntimestamp: 2020-01-01T00:00:00Z\n---\nbody\n");
        let vault = Vault::open("t", root, &settings()).unwrap().with_journal(data.path());
        let before = snapshot(root);
        // Step 0 is the destination, 1 to 4 the linking notes, 5 the source's removal.
        for at in 0..6 {
            FAIL_STEP_AT.with(|f| f.set(Some(at)));
            let err = vault.move_file("Target.md", "Sub/Renamed.md", true, None).unwrap_err();
            if (1..5).contains(&at) {
                assert_eq!(err.code(), ErrorCode::Conflict);
                assert!(err.message().contains("undone"));
            } else {
                assert_eq!(err.code(), ErrorCode::InternalError, "{}", err.message());
            }
            assert_eq!(snapshot(root), before, "failure at step {at} left changes");
            assert_eq!(std::fs::read_dir(data.path().join("journal")).unwrap().count(), 0);
        }
        FAIL_STEP_AT.with(|f| f.set(None));
        let change = vault.move_file("Target.md", "Sub/Renamed.md", true, None).unwrap();
        assert_eq!(change.links_rewritten, Some(4));
        assert_eq!(
            std::fs::read_to_string(root.join("L0.md")).unwrap(),
            "[[Renamed]] and [t](Sub/Renamed.md) 0\n"
        );
        assert_eq!(std::fs::read_dir(data.path().join("journal")).unwrap().count(), 0);
        assert!(!has_temporaries(root));
    }

    #[test]
    fn a_move_killed_at_any_point_is_settled_on_the_next_start_to_all_old_or_all_new() {
        // No frontmatter, so no timestamp: the finished state is the same byte for byte
        // whenever it is reached.
        let target = "# Target\n\nsee [a](L0.md)\n";
        // Staging, before each of the 6 steps, before and after the record's removal.
        killed_at_every_point(&|root| linked_vault(root, target), "Target.md", "Sub/Renamed.md", 9);
    }

    #[test]
    fn an_attachment_move_repointing_a_canvas_killed_at_any_point_is_all_old_or_all_new() {
        let setup = |root: &std::path::Path| {
            write(root, "img/a.png", "png");
            write(root, "Boards/Plan.canvas", BOARD);
            write(root, "Target.md", "![](img/a.png)\n");
        };
        // Staging, the destination, the canvas, the note, the source, the record's removal.
        killed_at_every_point(&setup, "img/a.png", "assets/a.png", 7);
    }

    /// Kills a move of `from` to `to` in a vault `setup` makes at every point it offers (there
    /// are `points`), and checks that the next start leaves it wholly undone or wholly done.
    fn killed_at_every_point(
        setup: &dyn Fn(&std::path::Path),
        from: &str,
        to: &str,
        points: usize,
    ) {
        let expected = tempfile::tempdir().unwrap();
        setup(expected.path());
        let plain = Vault::open("t", expected.path(), &settings()).unwrap();
        let before_all = snapshot(expected.path());
        plain.move_file(from, to, true, None).unwrap();
        let after_all = snapshot(expected.path());
        let notes = |snap: &[(String, Vec<u8>)]| -> Vec<(String, Vec<u8>)> {
            // Files (every name here has a suffix), not folders or temporaries.
            let file = |r: &str| r.rsplit('/').next().is_some_and(|n| n.contains('.'));
            snap.iter().filter(|(r, _)| file(r) && !r.contains(".mdvault-")).cloned().collect()
        };
        let (before, after) = (notes(&before_all), notes(&after_all));

        let mut finished = BTreeSet::new();
        for point in 0.. {
            let dir = tempfile::tempdir().unwrap();
            let data = tempfile::tempdir().unwrap();
            let root = dir.path().canonicalize().unwrap();
            setup(&root);
            let vault = std::sync::Arc::new(
                Vault::open("t", &root, &settings()).unwrap().with_journal(data.path()),
            );
            CRASH_AT.with(|f| f.set(Some(point)));
            let result = vault.move_file(from, to, true, None);
            CRASH_AT.with(|f| f.set(None));
            if result.is_ok() {
                // The hook did not fire: every point of the move has been visited.
                assert_eq!(point, points, "the move stopped offering crash points at {point}");
                break;
            }
            assert!(has_temporaries(&root), "a crash at {point} left no temporaries to sweep");

            // The next start: settle the journal, then sweep, with the crashed writer (this
            // very process) counted as dead and everything older than the new start.
            let journal = journal::Journal::new(data.path());
            let protected = journal.recover(std::slice::from_ref(&vault));
            let dead = |_: u32| false;
            let started = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
            let tag = journal.tag();
            let sweep = crate::vault::sweep::Sweep {
                started,
                protected: &protected,
                alive: &dead,
                journal: Some(&tag),
            };
            crate::vault::sweep::sweep_vault(&root, &sweep);

            let full = snapshot(&root);
            let now = notes(&full);
            assert!(
                now == before || now == after,
                "a crash at point {point} left a mix: {:?}",
                full.iter().map(|(r, _)| r).collect::<Vec<_>>()
            );
            assert!(!has_temporaries(&root), "temporaries left after a crash at {point}");
            if point > 0 {
                // With a record, even the destination's new folder goes when undone. Without
                // one (killed while staging) an empty new folder may stay.
                assert!(full == before_all || full == after_all, "folders differ at {point}");
            }
            let records = std::fs::read_dir(journal.dir()).map_or(0, Iterator::count);
            assert_eq!(records, 0, "a record is left after a crash at {point}");
            finished.insert(now == after);
        }
        assert_eq!(finished.len(), 2, "crashes should end both undone and finished");
    }

    #[test]
    fn a_move_whose_staged_copy_vanished_before_the_restart_is_undone_whole() {
        let dir = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        linked_vault(&root, "# Target\n");
        let before = snapshot(&root);
        let vault = std::sync::Arc::new(
            Vault::open("t", &root, &settings()).unwrap().with_journal(data.path()),
        );
        // Killed after the destination and two linking notes were committed.
        CRASH_AT.with(|f| f.set(Some(4)));
        assert!(vault.move_file("Target.md", "Sub/Renamed.md", true, None).is_err());
        CRASH_AT.with(|f| f.set(None));
        // Someone cleans up hidden files by hand before the restart: the staged text of a
        // note not yet committed is gone, so the move cannot be finished.
        let record = std::fs::read_dir(data.path().join("journal")).unwrap().next().unwrap();
        let record: journal::Record =
            serde_json::from_slice(&std::fs::read(record.unwrap().path()).unwrap()).unwrap();
        let pending = &record.steps[3];
        std::fs::remove_file(root.join(pending.staged.as_ref().unwrap())).unwrap();

        let journal = journal::Journal::new(data.path());
        journal.recover(std::slice::from_ref(&vault));
        journal::clean_up(&root, &record);
        assert_eq!(snapshot(&root), before, "the move was not undone whole");
    }
}
