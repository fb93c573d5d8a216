//! Watching vault folders: file events become lists of changed vault paths.
//!
//! Each vault root is watched recursively (inotify on Linux). Events are debounced per path:
//! a path fires once nothing has happened to it for the debounce time, so a burst of saves from
//! an editor is one re-index. A folder that appears (created, or moved in from outside) is
//! expanded into every file beneath it, because a moved-in folder brings files that produced no
//! event of their own. Hidden paths (temporary files of our atomic writes among them) are
//! ignored, by the vault census's rule (`vault::census::hidden`); every other path is reported,
//! and the callback's consumers classify it.
//!
//! This module only reports paths; what to do with them (re-index, refresh index.md) is the
//! caller's callback. A periodic reconcile pass elsewhere catches anything the OS dropped.

use std::path::{Path, PathBuf};
use std::time::Duration;

use notify_debouncer_full::notify::{RecommendedWatcher, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, Debouncer, RecommendedCache, new_debouncer};

use crate::error::{Error, ErrorCode, Result};
use crate::vault::census;

/// Keeps the watches alive; dropping it stops them.
pub struct Watcher {
    _debouncers: Vec<Debouncer<RecommendedWatcher, RecommendedCache>>,
}

impl std::fmt::Debug for Watcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Watcher")
    }
}

/// Calls `on_change(vault, paths)` with vault-relative paths that changed, after `debounce` of
/// quiet per path. `roots` pairs vault names with canonical root folders.
pub(crate) fn watch<F>(
    roots: &[(String, PathBuf)],
    debounce: Duration,
    on_change: F,
) -> Result<Watcher>
where
    F: Fn(&str, Vec<String>) + Send + Sync + Clone + 'static,
{
    let mut debouncers = Vec::new();
    for (name, root) in roots {
        let (name, root_c) = (name.clone(), root.clone());
        let callback = on_change.clone();
        let mut debouncer =
            new_debouncer(debounce, None, move |result: DebounceEventResult| match result {
                Ok(events) => {
                    let mut paths = Vec::new();
                    // Opening or reading a file (the indexer itself does, on every build)
                    // changes nothing; only creations, writes, renames and removals count.
                    for event in events.iter().filter(|e| !e.event.kind.is_access()) {
                        for p in &event.event.paths {
                            collect(&root_c, p, &mut paths);
                        }
                    }
                    paths.sort();
                    paths.dedup();
                    if !paths.is_empty() {
                        callback(&name, paths);
                    }
                }
                Err(errors) => {
                    for e in errors {
                        tracing::warn!("file watcher: {e}");
                    }
                }
            })
            .map_err(|e| watch_error(root, &e))?;
        debouncer.watch(root, RecursiveMode::Recursive).map_err(|e| watch_error(root, &e))?;
        debouncers.push(debouncer);
    }
    Ok(Watcher { _debouncers: debouncers })
}

fn watch_error(root: &Path, e: &dyn std::fmt::Display) -> Error {
    Error::new(
        ErrorCode::InternalError,
        format!(
            "cannot watch {}: {e}; on Linux raise fs.inotify.max_user_watches \
             (sysctl fs.inotify.max_user_watches=524288)",
            root.display()
        ),
    )
}

/// Adds the vault-relative form of `abs` (or, for a folder, of every file beneath it).
fn collect(root: &Path, abs: &Path, out: &mut Vec<String>) {
    let Ok(rel) = abs.strip_prefix(root) else { return };
    let rel = rel.to_string_lossy().replace('\\', "/");
    if rel.is_empty() || census::hidden_path(&rel) {
        return;
    }
    match std::fs::symlink_metadata(abs) {
        Ok(meta) if meta.is_dir() => {
            let walker = walkdir::WalkDir::new(abs)
                .follow_links(false)
                .into_iter()
                .filter_entry(|e| !census::hidden(&e.file_name().to_string_lossy()));
            for entry in walker.flatten().filter(|e| e.file_type().is_file()) {
                if let Ok(r) = entry.path().strip_prefix(root) {
                    out.push(r.to_string_lossy().replace('\\', "/"));
                }
            }
            // The folder itself too: if it was emptied or renamed, files under its old name go.
            out.push(rel);
        }
        _ => out.push(rel),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_expand_to_their_files_and_hidden_paths_are_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("In/Deep")).unwrap();
        std::fs::write(root.join("In/a.md"), "a").unwrap();
        std::fs::write(root.join("In/Deep/b.md"), "b").unwrap();
        std::fs::write(root.join("In/.hidden.md"), "h").unwrap();
        let mut out = Vec::new();
        collect(root, &root.join("In"), &mut out);
        collect(root, &root.join(".mdvault-x.tmp"), &mut out);
        collect(root, &root.join("Gone.md"), &mut out);
        out.sort();
        assert_eq!(out, ["Gone.md", "In", "In/Deep/b.md", "In/a.md"]);
    }

    #[test]
    fn a_real_edit_is_reported_once_after_the_debounce() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let (tx, rx) = std::sync::mpsc::channel::<(String, Vec<String>)>();
        let tx = std::sync::Arc::new(std::sync::Mutex::new(tx));
        let _w =
            watch(&[("v".into(), root.clone())], Duration::from_millis(200), move |v, paths| {
                let _ = tx.lock().unwrap().send((v.to_string(), paths));
            })
            .unwrap();
        std::thread::sleep(Duration::from_millis(100));
        for n in 0..3 {
            std::fs::write(root.join("note.md"), format!("edit {n}")).unwrap();
        }
        let (vault, paths) = rx.recv_timeout(Duration::from_secs(5)).unwrap();
        assert_eq!(vault, "v");
        assert_eq!(paths, ["note.md"]);
        // Reading is not a change.
        assert_eq!(std::fs::read_to_string(root.join("note.md")).unwrap(), "edit 2");
        assert!(rx.recv_timeout(Duration::from_millis(800)).is_err());
    }
}
