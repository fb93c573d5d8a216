//! Index coverage: what of a vault is searchable, what is not, and why.
//!
//! [`coverage`] compares a vault on disk with the store's record of it: notes, documents and
//! chunks indexed; files that failed or yielded no text, with the reason the indexer recorded;
//! visible files the indexer skips by rule (grouped by rule); entries that are stale (changed,
//! added or deleted on disk since they were indexed, chunked under other settings, or waiting
//! for vectors); and the last build. It reads the store and walks the vault; it never writes and
//! never needs the embedding model, so `mdvault status` works when the model does not.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use super::IndexSettings;
use super::store::{FileKind, FileStatus, Store};
use crate::error::{ErrorCode, Result};
use crate::vault::Vault;

/// How many example paths a group of skipped files names.
const EXAMPLES: usize = 5;

/// What the last full pass over a vault did (`mdvault index`, or a server's background build).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct LastBuild {
    /// When it finished (UTC, RFC 3339).
    pub(crate) at: String,
    /// How long it took.
    pub(crate) seconds: f64,
    /// Files looked at.
    pub(crate) files_seen: usize,
    /// Files (re-)chunked.
    pub(crate) files_chunked: usize,
    /// Files removed from the index.
    pub(crate) files_removed: usize,
    /// Files that could not be indexed.
    pub(crate) failed: usize,
    /// Texts embedded.
    pub(crate) texts_embedded: usize,
}

impl LastBuild {
    /// The store key it is kept under.
    pub(crate) fn key(vault: &str) -> String {
        format!("last_build:{vault}")
    }
}

/// A file the indexer read but could not make fully searchable.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Problem {
    /// Vault-relative path.
    pub(crate) path: String,
    /// The recorded status: `failed`, `no_text`, `needs_ocr`, ...
    pub(crate) status: FileStatus,
    /// Why.
    pub(crate) detail: String,
}

/// Visible files one rule keeps out of the index.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Skipped {
    /// The rule, in words.
    pub(crate) reason: String,
    /// How many files.
    pub(crate) count: usize,
    /// A few of them.
    pub(crate) examples: Vec<String>,
}

/// An index entry out of step with the disk.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Stale {
    /// Vault-relative path.
    pub(crate) path: String,
    /// What is out of step.
    pub(crate) why: String,
}

/// One vault's coverage.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Coverage {
    /// The vault.
    pub(crate) vault: String,
    /// Notes indexed.
    pub(crate) notes: usize,
    /// Filed documents indexed.
    pub(crate) documents: usize,
    /// Chunks.
    pub(crate) chunks: u64,
    /// Chunks still waiting for a vector (found lexically only until they get one).
    pub(crate) chunks_without_vectors: u64,
    /// Files that failed or gave no text.
    pub(crate) problems: Vec<Problem>,
    /// Visible files skipped by rule.
    pub(crate) skipped: Vec<Skipped>,
    /// Entries out of step with the disk.
    pub(crate) stale: Vec<Stale>,
    /// The last full pass, if one finished since this store was made.
    pub(crate) last_build: Option<LastBuild>,
}

/// Which model the stored vectors come from, and which one the configuration names now.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct ModelState {
    /// The model the stored vectors were made with (`local:<folder>@<digest>`,
    /// `http:<model>@<dims>`, ...); None before the first build.
    pub(crate) index: Option<String>,
    /// The model the configuration names; None when it cannot be identified (the reason is in
    /// `problem`).
    pub(crate) configured: Option<String>,
    /// The two differ: the next start (or `mdvault index`) drops every vector and embeds all
    /// chunks again with the configured model.
    pub(crate) switch_pending: bool,
    /// Why the configured model could not be identified.
    pub(crate) problem: Option<String>,
}

impl ModelState {
    /// Compares the store's model record (`<id>#<dims>`) with the configured model's id.
    pub(crate) fn new(
        stored: Option<&str>,
        configured: std::result::Result<String, String>,
    ) -> Self {
        // The record is `<id>#<dims>`; an endpoint's model name may itself hold a `#`.
        let index = stored.map(|s| s.rsplit_once('#').map_or(s, |(id, _)| id).to_string());
        let (configured, problem) = match configured {
            Ok(id) => (Some(id), None),
            Err(e) => (None, Some(e)),
        };
        let switch_pending = matches!((&index, &configured), (Some(i), Some(c)) if i != c);
        ModelState { index, configured, switch_pending, problem }
    }
}

/// What `mdvault status`, `GET /status` and `vault_status` report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// The embedding model of the index and of the configuration.
    pub(crate) model: ModelState,
    /// Coverage, one entry per vault.
    pub(crate) vaults: Vec<Coverage>,
    /// How far the pass the index's owner runs now is (the first build's, say); absent when
    /// no pass runs or no owner answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pass: Option<super::PassProgress>,
}

/// Compares `vault` on disk with the store's record of it.
pub(crate) fn coverage(store: &Store, settings: &IndexSettings, vault: &Vault) -> Result<Coverage> {
    let rows = store.files(vault.name())?;
    let (chunks, chunks_without_vectors) = store.vault_chunk_counts(vault.name())?;
    let fingerprint = settings.fingerprint();
    let mut out = Coverage {
        vault: vault.name().to_string(),
        notes: 0,
        documents: 0,
        chunks,
        chunks_without_vectors,
        problems: Vec::new(),
        skipped: Vec::new(),
        stale: Vec::new(),
        last_build: store
            .meta(&LastBuild::key(vault.name()))?
            .and_then(|v| serde_json::from_str(&v).ok()),
    };
    for r in &rows {
        // A document's verdict is `extracted` or `ocr` when it has text; a note's is `indexed`.
        // Anything else is a problem, and not counted as searchable.
        if !r.status.searchable() {
            out.problems.push(Problem {
                path: r.path.clone(),
                status: r.status,
                detail: r.detail.clone(),
            });
            continue;
        }
        match r.kind {
            FileKind::Note => out.notes += 1,
            FileKind::Document => out.documents += 1,
        }
    }

    let mut known: HashMap<&str, &super::store::FileRow> =
        rows.iter().map(|r| (r.path.as_str(), r)).collect();
    let mut skipped: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for stat in vault.scan() {
        let row = known.remove(stat.path.as_str());
        if let Some(reason) = settings.skip_reason(&stat.path) {
            if row.is_some() {
                out.stale.push(Stale {
                    path: stat.path.clone(),
                    why: format!("indexed, but now skipped ({reason})"),
                });
            }
            skipped.entry(reason).or_default().push(stat.path);
            continue;
        }
        // A file the indexer cannot open never gets a store row (nothing to record it under),
        // so without this it would pass for "not indexed yet" forever. Only files the store
        // does not match are probed; an indexed, unchanged file was readable when indexed.
        if row.is_none_or(|r| r.size != stat.size || r.mtime_ns != stat.mtime_ns)
            && let Err(e) = vault.probe(&stat.path)
        {
            // Names are listed lossily, so a name that is not UTF-8 cannot be opened by it.
            let detail = if stat.path.contains('\u{fffd}') {
                "its name is not valid UTF-8, so it cannot be opened by it; rename the file"
                    .to_string()
            } else {
                match e.code() {
                    // Gone between the walk and the probe (an editor's save): nothing to say.
                    ErrorCode::NotFound => continue,
                    ErrorCode::Unreadable => format!("{}; check its permissions", e.message()),
                    _ => format!("{}; rename the file", e.message()),
                }
            };
            if let Some(r) = row
                && r.status.searchable()
            {
                // Its old text is still searchable; count it once, as the problem it now is.
                match r.kind {
                    FileKind::Note => out.notes = out.notes.saturating_sub(1),
                    FileKind::Document => out.documents = out.documents.saturating_sub(1),
                }
            }
            out.problems.push(Problem { path: stat.path, status: FileStatus::Unreadable, detail });
            continue;
        }
        let why = match row {
            None => Some("on disk but not indexed yet".to_string()),
            Some(r) if r.size != stat.size || r.mtime_ns != stat.mtime_ns => {
                Some("changed on disk since it was indexed".to_string())
            }
            Some(r) if r.fingerprint != fingerprint => {
                Some("chunked under other chunking settings; the next pass re-chunks it".into())
            }
            Some(_) => None,
        };
        if let Some(why) = why {
            out.stale.push(Stale { path: stat.path, why });
        }
    }
    let mut gone: Vec<&str> = known.into_keys().collect();
    gone.sort_unstable();
    out.stale.extend(gone.into_iter().map(|p| Stale {
        path: p.to_string(),
        why: "deleted or moved on disk, still in the index".to_string(),
    }));
    out.skipped = skipped
        .into_iter()
        .map(|(reason, paths)| Skipped {
            reason,
            count: paths.len(),
            examples: paths.into_iter().take(EXAMPLES).collect(),
        })
        .collect();
    Ok(out)
}

/// A plain-text report: the model, then one block per vault (the CLI prints it, MCP returns
/// it).
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    let m = &report.model;
    match (&m.index, &m.configured) {
        (Some(i), Some(c)) if m.switch_pending => out.push_str(&format!(
            "model     SWITCH PENDING: the index's vectors come from {i}, the configuration \
             names {c}; restart the server (or run `mdvault index` when none runs) to embed \
             every chunk again\n"
        )),
        (Some(i), _) => out.push_str(&format!("model     {i}\n")),
        (None, Some(c)) => out.push_str(&format!("model     {c} (no vectors made yet)\n")),
        (None, None) => {}
    }
    if let Some(p) = &m.problem {
        out.push_str(&format!("          the configured model cannot be identified: {p}\n"));
    }
    if let Some(p) = &report.pass {
        out.push_str(&format!("indexing  {}\n", p.describe()));
    }
    for c in &report.vaults {
        let plural =
            |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        out.push_str(&format!("{}\n", c.vault));
        let vectors = if c.chunks_without_vectors == 0 {
            "all with vectors".to_string()
        } else {
            format!(
                "{} still waiting for vectors (found by exact words only until then)",
                c.chunks_without_vectors
            )
        };
        out.push_str(&format!(
            "  indexed   {}, {}, {} chunks ({vectors})\n",
            plural(c.notes, "note", "notes"),
            plural(c.documents, "document", "documents"),
            c.chunks
        ));
        match &c.last_build {
            Some(b) => out.push_str(&format!(
                "  last build {} in {:.1} s: {} files seen, {} re-chunked, {} removed, {} failed, \
                 {} texts embedded\n",
                b.at,
                b.seconds,
                b.files_seen,
                b.files_chunked,
                b.files_removed,
                b.failed,
                b.texts_embedded
            )),
            None => out.push_str("  last build none recorded yet; run `mdvault index`\n"),
        }
        if c.problems.is_empty() {
            out.push_str("  problems  none\n");
        } else {
            out.push_str(&format!("  problems  {}\n", c.problems.len()));
            for p in &c.problems {
                let detail =
                    if p.detail.is_empty() { String::new() } else { format!(": {}", p.detail) };
                out.push_str(&format!("    {} [{}]{detail}\n", p.path, p.status.as_str()));
            }
        }
        let skipped: usize = c.skipped.iter().map(|s| s.count).sum();
        if skipped == 0 {
            out.push_str("  skipped   none\n");
        } else {
            out.push_str(&format!("  skipped   {}\n", plural(skipped, "file", "files")));
            for s in &c.skipped {
                let more = if s.count > s.examples.len() { ", ..." } else { "" };
                out.push_str(&format!(
                    "    {:>4}  {} ({}{more})\n",
                    s.count,
                    s.reason,
                    s.examples.join(", ")
                ));
            }
        }
        if c.stale.is_empty() {
            out.push_str("  stale     none: the index matches the disk\n");
        } else {
            out.push_str(&format!(
                "  stale     {} (a running server catches up by itself; otherwise run \
                 `mdvault index`)\n",
                plural(c.stale.len(), "entry", "entries")
            ));
            for s in c.stale.iter().take(20) {
                out.push_str(&format!("    {}: {}\n", s.path, s.why));
            }
            if c.stale.len() > 20 {
                out.push_str(&format!("    ... and {} more\n", c.stale.len() - 20));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::VaultSettings;
    use crate::embed::Embedder;
    use crate::embed::hashing::HashingEmbedder;
    use crate::index::{Index, Silent};

    fn settings(exclude: &[&str]) -> IndexSettings {
        IndexSettings::for_tests(exclude)
    }

    fn vault(dir: &std::path::Path) -> Vault {
        let vs = VaultSettings {
            doc_suffixes: vec![".pdf".into()],
            doc_files_dir: "Files".into(),
            doc_ocr: false,
            doc_max_bytes: 1 << 20,
            timestamp_key: "timestamp".into(),
        };
        Vault::open("v", dir, &vs).unwrap()
    }

    #[test]
    fn coverage_counts_skips_problems_and_stale_entries() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let write = |rel: &str, text: &[u8]| {
            let p = root.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        write("A.md", b"# A\n\nAlpha.\n");
        write("B.md", b"# B\n\nBeta.\n");
        write("Bad.md", b"\xff\xfe not text");
        write("Reports/R.md", b"# R\n");
        write("img/photo.png", b"png");
        write("index.md", b"# generated\n");
        let data = tempfile::tempdir().unwrap();
        let s = settings(&["Reports"]);
        let index = Index::open(
            data.path(),
            vec!["v".into()],
            s.clone(),
            std::sync::Arc::new(Embedder::Hashing(HashingEmbedder::new(16))),
        )
        .unwrap();
        let v = vault(root);
        index.sync(&v, crate::index::Pass::Changed, &Silent).unwrap();

        let c = coverage(index.store(), &s, &v).unwrap();
        assert_eq!((c.notes, c.documents), (2, 0), "the failed note is a problem, not indexed");
        assert_eq!(c.chunks_without_vectors, 0);
        assert!(c.chunks >= 2);
        assert_eq!(c.problems.len(), 1, "{c:?}");
        assert_eq!(
            (c.problems[0].path.as_str(), c.problems[0].status.as_str()),
            ("Bad.md", "failed")
        );
        let reasons: Vec<(&str, usize)> =
            c.skipped.iter().map(|s| (s.reason.as_str(), s.count)).collect();
        assert_eq!(reasons.len(), 3, "{reasons:?}");
        assert!(c.skipped.iter().any(|s| s.reason.contains("search.exclude_dirs")
            && s.examples == ["Reports/R.md"]));
        assert!(c.skipped.iter().any(|s| s.reason.contains(".png")));
        assert!(c.skipped.iter().any(|s| s.reason.contains("generated")));
        assert!(c.stale.is_empty(), "{:?}", c.stale);
        let built = c.last_build.expect("a sync records itself");
        assert_eq!((built.files_seen, built.failed), (3, 1));

        // Change, add and delete behind the index's back.
        std::thread::sleep(std::time::Duration::from_millis(20));
        write("A.md", b"# A\n\nAlpha, edited at length.\n");
        write("C.md", b"# C\n");
        std::fs::remove_file(root.join("B.md")).unwrap();
        let c = coverage(index.store(), &s, &v).unwrap();
        let stale: Vec<(&str, &str)> =
            c.stale.iter().map(|s| (s.path.as_str(), s.why.as_str())).collect();
        assert_eq!(stale.len(), 3, "{stale:?}");
        assert!(stale[0].0 == "A.md" && stale[0].1.contains("changed"));
        assert!(stale[1].0 == "C.md" && stale[1].1.contains("not indexed yet"));
        assert!(stale[2].0 == "B.md" && stale[2].1.contains("deleted"));
        index.sync(&v, crate::index::Pass::Changed, &Silent).unwrap();
        assert!(coverage(index.store(), &s, &v).unwrap().stale.is_empty());

        // A file nobody can open by its listed name is a problem with a reason, not a file
        // waiting for its first pass (and the pass does not change that).
        use std::os::unix::ffi::OsStrExt;
        std::fs::write(root.join(std::ffi::OsStr::from_bytes(b"Odd \xff name.md")), b"# O\n")
            .unwrap();
        let report = index.sync(&v, crate::index::Pass::Changed, &Silent).unwrap();
        assert_eq!(report.failed.len(), 1, "{:?}", report.failed);
        let c = coverage(index.store(), &s, &v).unwrap();
        assert!(c.stale.is_empty(), "{:?}", c.stale);
        let odd = c.problems.iter().find(|p| p.status == FileStatus::Unreadable).expect("reported");
        assert!(odd.path.starts_with("Odd ") && odd.detail.contains("rename"), "{odd:?}");
        std::fs::remove_file(root.join(std::ffi::OsStr::from_bytes(b"Odd \xff name.md"))).unwrap();
        // A backslash is part of a name here, and no vault path can hold one.
        write("Back\\slash.md", b"# B\n");
        let c = coverage(index.store(), &s, &v).unwrap();
        let odd = c.problems.iter().find(|p| p.status == FileStatus::Unreadable).expect("reported");
        assert_eq!(odd.path, "Back\\slash.md");
        assert!(odd.detail.contains("backslash") && odd.detail.contains("rename"), "{odd:?}");
        std::fs::remove_file(root.join("Back\\slash.md")).unwrap();

        // A folder excluded after it was indexed is stale until the next pass drops it.
        write("Notes/N.md", b"# N\n");
        index.sync(&v, crate::index::Pass::Changed, &Silent).unwrap();
        let later = settings(&["Reports", "Notes"]);
        let c = coverage(index.store(), &later, &v).unwrap();
        assert_eq!(c.stale.len(), 1, "{:?}", c.stale);
        assert!(c.stale[0].why.starts_with("indexed, but now skipped (in Notes/"), "{:?}", c.stale);
    }
}
