//! Which files of a vault count: the one rule for what is a note, what is a document, what is
//! a canvas (Obsidian's `.canvas`, read by `vault::canvas`), and what is left out (hidden entries, `node_modules`, configured exclusions, the root `index.md`).
//!
//! [`classify`] answers for one vault-relative path by its text alone, with the [`Counting`]
//! its caller was configured with, and says why a path is left out as a [`FileClass`], so the
//! indexer, upkeep's note walk, the generated `index.md` and the watcher decide alike and
//! differ only where their settings do (search excludes `search.exclude_dirs`, the page
//! `index.exclude_dirs`, upkeep nothing). What is on disk is the walkers' part: a walk that
//! counts files never follows a symbolic link, takes only regular files, and prunes entries
//! by [`hidden`] (the indexer's and upkeep's `Vault::scan` and `Vault::all_files`, `list`,
//! the watcher's folder expansion).
//!
//! What this module does not do: read files. Whether a root `index.md` is the generated page
//! or a hand-written note depends on its text, which only its reader knows
//! (`upkeep::indexmd::generated`).

use super::canvas;
use super::path::Suffixes;

/// The generated page's name, at the vault root (matched case-insensitively).
pub(crate) const ROOT_INDEX: &str = "index.md";

/// The folder of installed JavaScript packages, which a vault synced with a plugin's sources
/// can hold: thousands of files that are nobody's notes.
const DEPENDENCIES: &str = "node_modules";

/// What a caller counts files by: the document suffixes and the folders it leaves out,
/// decided from the configuration once and handed down.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Counting {
    suffixes: Suffixes,
    /// Root-relative folders left out, trimmed of slashes (compared case-insensitively, as
    /// whole segments).
    exclude: Vec<String>,
}

impl Counting {
    /// Counting with these document suffixes (lowercase, with the dot) and leaving out these
    /// root-relative folders.
    pub(crate) fn new(doc_suffixes: &[String], exclude: &[String]) -> Counting {
        Counting {
            suffixes: Suffixes { documents: doc_suffixes.to_vec() },
            exclude: exclude
                .iter()
                .map(|d| d.trim_matches('/').to_string())
                .filter(|d| !d.is_empty())
                .collect(),
        }
    }

    /// Counting notes only, everywhere a note can be (upkeep's walk: its checks and queries
    /// answer for the folders search leaves out).
    pub(crate) fn notes_everywhere() -> Counting {
        Counting::new(&[], &[])
    }

    /// The folders left out, as configured (trimmed of slashes).
    pub(crate) fn excluded(&self) -> &[String] {
        &self.exclude
    }
}

/// What a vault path is to a caller that counts files. Only [`FileClass::Note`] and
/// [`FileClass::Document`] count; each other variant says why not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FileClass {
    /// A `.md` file (case-insensitive).
    Note,
    /// A file with one of the configured document suffixes.
    Document,
    /// An Obsidian canvas (`.canvas`, case-insensitive): counted everywhere a document is,
    /// whatever the configured document suffixes, since its text needs no extractor.
    Canvas,
    /// The root `index.md`: the generated page's place. Never indexed or listed on the page;
    /// upkeep reads a hand-written one as a note.
    RootIndex,
    /// Neither a note nor a document: the lowercase extension, if the name has one.
    Other(Option<String>),
    /// Has a component starting with `.`: Obsidian's settings, `.trash`, `.scripts`, our own
    /// temporaries.
    Hidden,
    /// Inside a `node_modules` folder.
    Dependencies,
    /// Under this excluded folder, as configured.
    Excluded(String),
}

impl FileClass {
    /// True for a note, a document or a canvas.
    pub(crate) fn counts(&self) -> bool {
        matches!(self, FileClass::Note | FileClass::Document | FileClass::Canvas)
    }
}

/// What `rel` (vault-relative, `/`-separated) is under `counting`.
///
/// The kind is decided first, then the place, in the order `mdvault status` groups skipped
/// files by: a `.png` in an excluded folder is shown as "not a note", the more basic reason.
pub(crate) fn classify(rel: &str, counting: &Counting) -> FileClass {
    let kind = if Suffixes::is_note(rel) {
        FileClass::Note
    } else if counting.suffixes.is_document(rel) {
        FileClass::Document
    } else if canvas::is_canvas(rel) {
        FileClass::Canvas
    } else {
        let name = rel.rsplit('/').next().unwrap_or(rel);
        let ext = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
        return FileClass::Other(ext.filter(|e| !e.is_empty()));
    };
    if rel.eq_ignore_ascii_case(ROOT_INDEX) {
        return FileClass::RootIndex;
    }
    let parts = || rel.split('/');
    if parts().any(hidden) {
        return FileClass::Hidden;
    }
    if parts().any(|p| p.eq_ignore_ascii_case(DEPENDENCIES)) {
        return FileClass::Dependencies;
    }
    match counting.exclude.iter().find(|d| under(rel, d)) {
        Some(d) => FileClass::Excluded(d.clone()),
        None => kind,
    }
}

/// True for a file or folder name that is hidden (starts with `.`): no walk that counts files
/// enters or lists it, and the watcher reports nothing beneath it.
pub(crate) fn hidden(name: &str) -> bool {
    name.starts_with('.')
}

/// True when a vault-relative path has a hidden component.
pub(crate) fn hidden_path(rel: &str) -> bool {
    rel.split('/').any(hidden)
}

/// True when a walk for counted files need not enter the folder (or look at the file) named
/// `name`: nothing beneath a hidden entry or `node_modules` counts.
pub(crate) fn barren(name: &str) -> bool {
    hidden(name) || name.eq_ignore_ascii_case(DEPENDENCIES)
}

/// True when `rel` lies under folder `dir` (case-insensitive, whole segments; `""` is the root,
/// under which everything lies).
pub(crate) fn under(rel: &str, dir: &str) -> bool {
    let dir = dir.trim_matches('/');
    if dir.is_empty() {
        return true;
    }
    rel.len() > dir.len()
        && rel.is_char_boundary(dir.len())
        && rel[..dir.len()].eq_ignore_ascii_case(dir)
        && rel.as_bytes()[dir.len()] == b'/'
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counting(exclude: &[&str]) -> Counting {
        let exclude: Vec<String> = exclude.iter().map(|d| d.to_string()).collect();
        Counting::new(&[".pdf".to_string()], &exclude)
    }

    #[test]
    fn notes_and_documents_count_by_suffix_in_any_case() {
        let c = counting(&[]);
        assert_eq!(classify("Home/Boiler.md", &c), FileClass::Note);
        assert_eq!(classify("Home/Boiler.MD", &c), FileClass::Note);
        assert_eq!(classify("Home/Files/scan.PDF", &c), FileClass::Document);
        assert_eq!(classify("Home/photo.png", &c), FileClass::Other(Some("png".into())));
        assert_eq!(classify("Home/README", &c), FileClass::Other(None));
        assert_eq!(classify("Home/trailing.", &c), FileClass::Other(None));
        assert!(classify("a.md", &c).counts() && classify("b.pdf", &c).counts());
    }

    #[test]
    fn a_canvas_counts_whatever_the_document_suffixes_and_is_left_out_where_a_note_would_be() {
        for c in [counting(&["Workflows"]), Counting::notes_everywhere()] {
            assert_eq!(classify("Boards/Plan.canvas", &c), FileClass::Canvas);
            assert_eq!(classify("Boards/Plan.CANVAS", &c), FileClass::Canvas);
            assert!(classify("Plan.canvas", &c).counts());
            assert_eq!(classify(".trash/Plan.canvas", &c), FileClass::Hidden);
            assert_eq!(classify("x/node_modules/Plan.canvas", &c), FileClass::Dependencies);
        }
        assert_eq!(
            classify("Workflows/Plan.canvas", &counting(&["Workflows"])),
            FileClass::Excluded("Workflows".into())
        );
        assert_eq!(
            classify("Plan.canvas.bak", &counting(&[])),
            FileClass::Other(Some("bak".into()))
        );
    }

    #[test]
    fn a_document_suffix_counts_only_when_configured() {
        assert_eq!(
            classify("scan.pdf", &Counting::notes_everywhere()),
            FileClass::Other(Some("pdf".into()))
        );
    }

    #[test]
    fn the_root_index_md_is_its_own_class_and_a_nested_one_is_a_note() {
        let c = counting(&[]);
        assert_eq!(classify("index.md", &c), FileClass::RootIndex);
        assert_eq!(classify("INDEX.md", &c), FileClass::RootIndex);
        assert_eq!(classify("Sub/index.md", &c), FileClass::Note);
        assert!(!FileClass::RootIndex.counts());
    }

    #[test]
    fn hidden_components_and_node_modules_anywhere_leave_a_file_out() {
        let c = counting(&[]);
        assert_eq!(classify(".trash/x.md", &c), FileClass::Hidden);
        assert_eq!(classify(".obsidian/plugins/a/notes.md", &c), FileClass::Hidden);
        assert_eq!(classify("A/.mdvault-1-x.tmp.md", &c), FileClass::Hidden);
        assert_eq!(classify("a/node_modules/x.md", &c), FileClass::Dependencies);
        assert_eq!(classify("a/Node_Modules/b/x.pdf", &c), FileClass::Dependencies);
        assert_eq!(classify("a/node_modules2/x.md", &c), FileClass::Note);
    }

    #[test]
    fn exclusions_are_root_relative_case_insensitive_whole_segments() {
        let c = counting(&["Workflows", "/Reports/Daily/", ""]);
        assert_eq!(c.excluded(), ["Workflows", "Reports/Daily"], "slashes trimmed, empty dropped");
        assert_eq!(classify("Workflows/x.md", &c), FileClass::Excluded("Workflows".into()));
        assert_eq!(classify("workflows/Sub/x.md", &c), FileClass::Excluded("Workflows".into()));
        assert_eq!(
            classify("Workflows/Files/scan.pdf", &c),
            FileClass::Excluded("Workflows".into())
        );
        assert_eq!(classify("Workflows Archive/x.md", &c), FileClass::Note);
        assert_eq!(classify("Reports/Weekly/x.md", &c), FileClass::Note);
        assert_eq!(classify("Reports/Daily/x.md", &c), FileClass::Excluded("Reports/Daily".into()));
        assert_eq!(classify("Sub/Workflows/x.md", &c), FileClass::Note, "root-relative only");
    }

    #[test]
    fn the_kind_is_reported_before_the_place() {
        let c = counting(&["Workflows"]);
        assert_eq!(classify("Workflows/photo.png", &c), FileClass::Other(Some("png".into())));
        assert_eq!(classify(".obsidian/app.json", &c), FileClass::Other(Some("json".into())));
    }

    #[test]
    fn hidden_names_and_barren_folders_are_told_apart() {
        assert!(hidden(".git") && hidden(".mdvault-1-x.tmp") && !hidden("notes.md"));
        assert!(hidden_path("In/.hidden.md") && hidden_path(".trash") && !hidden_path("In/a.md"));
        assert!(barren(".obsidian") && barren("node_modules") && barren("NODE_MODULES"));
        assert!(!barren("Files") && !barren("node_modules_old"));
    }

    #[test]
    fn under_means_strictly_beneath_a_folder_and_the_root_holds_everything() {
        assert!(under("a/b.md", "a") && under("a/b.md", "A/") && under("x.md", ""));
        assert!(!under("a", "a") && !under("ab/c.md", "a") && !under("a.md", "a"));
    }
}
