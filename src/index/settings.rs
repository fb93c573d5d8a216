//! The index's settings, taken from the configuration once: chunk sizes, the embed-text prefix,
//! the documents' folder and extraction, and which files count ([`Counting`] from
//! `vault::census`, with `search.exclude_dirs` as the folders left out). The chunker
//! fingerprint, which re-chunks a file whose output would change, is derived here.
//!
//! What this module does not decide: which files count (`vault::census::classify` does; this
//! only words its answer for `status`).

use sha2::{Digest, Sha256};

use super::chunker::{self, ChunkConfig};
use crate::config::Config;
use crate::docs::ExtractSettings;
use crate::vault::census::{self, Counting, FileClass};

/// The settings the index needs, taken from the configuration once.
#[derive(Debug, Clone)]
pub struct IndexSettings {
    /// Chunk sizes.
    pub(crate) chunking: ChunkConfig,
    /// Which files are indexed: notes and documents outside hidden, excluded and generated
    /// places (`search.exclude_dirs` are the excluded folders).
    pub(crate) counting: Counting,
    /// Prefix of every embed text.
    pub(crate) document_prefix: String,
    /// Document suffixes (lowercase, with the dot) whose extracted text is indexed.
    pub(crate) doc_suffixes: Vec<String>,
    /// The folder name documents are filed in (a document's description is its owner).
    pub(crate) files_dir: String,
    /// How documents are extracted.
    pub(crate) extract: ExtractSettings,
}

impl IndexSettings {
    /// The index settings of a configuration.
    pub(crate) fn from_config(config: &Config) -> IndexSettings {
        IndexSettings {
            chunking: ChunkConfig {
                target_tokens: config.chunking.target_tokens,
                overlap_tokens: config.chunking.overlap_tokens,
                min_tokens: config.chunking.min_tokens,
            },
            counting: Counting::new(&config.vault.doc_suffixes, &config.search.exclude_dirs),
            document_prefix: config.embedding.document_prefix.clone(),
            doc_suffixes: config.vault.doc_suffixes.clone(),
            files_dir: config.vault.doc_files_dir.clone(),
            extract: ExtractSettings { ocr: config.vault.doc_ocr, ..ExtractSettings::default() },
        }
    }

    /// A digest of everything that changes chunk output: when it differs from a file's, the
    /// file is re-chunked even if its bytes did not change.
    pub(crate) fn fingerprint(&self) -> String {
        let c = &self.chunking;
        let text = format!(
            "chunker={} target={} overlap={} min={} prefix={:?} files={:?}",
            chunker::CHUNKER_VERSION,
            c.target_tokens,
            c.overlap_tokens,
            c.min_tokens,
            self.document_prefix,
            self.files_dir
        );
        hex(&Sha256::digest(text.as_bytes()))[..16].to_string()
    }

    /// The document suffix `rel` ends with, if any.
    #[cfg(test)]
    pub(crate) fn document_suffix(&self, rel: &str) -> Option<&str> {
        suffix_of(&self.doc_suffixes, rel)
    }

    /// What `rel` is to the indexer (see `vault::census::classify`).
    pub(crate) fn class(&self, rel: &str) -> FileClass {
        census::classify(rel, &self.counting)
    }

    /// True for a vault path that is indexed: a note or an allowlisted document outside
    /// hidden, excluded and generated places.
    pub(crate) fn is_indexed(&self, rel: &str) -> bool {
        self.class(rel).counts()
    }

    /// Why the indexer leaves `rel` out, in words (one phrase per rule, so `status` can group
    /// files by it); `None` when it is indexed.
    pub(crate) fn skip_reason(&self, rel: &str) -> Option<String> {
        Some(match self.class(rel) {
            FileClass::Note | FileClass::Document | FileClass::Canvas => return None,
            FileClass::Other(Some(e)) => {
                format!("neither a note (.md) nor a document suffix in vault.doc_suffixes (.{e})")
            }
            FileClass::Other(None) => "neither a note (.md) nor a document (no suffix)".to_string(),
            FileClass::RootIndex => "the generated index.md at the root".to_string(),
            FileClass::Hidden => "inside a hidden folder".to_string(),
            FileClass::Dependencies => "inside node_modules".to_string(),
            FileClass::Excluded(d) => format!("in {d}/, listed in search.exclude_dirs"),
        })
    }
}

/// The suffix of `suffixes` (lowercase, with the dot) that `rel` ends with, if any.
pub(super) fn suffix_of<'a>(suffixes: &'a [String], rel: &str) -> Option<&'a str> {
    let lower = rel.to_ascii_lowercase();
    suffixes.iter().find(|s| lower.ends_with(s.as_str())).map(String::as_str)
}

/// Lowercase hex of some bytes.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
impl IndexSettings {
    /// Default chunking, no prefix, `.pdf` documents filed in `Files`, these folders excluded.
    pub(crate) fn for_tests(exclude: &[&str]) -> IndexSettings {
        let exclude: Vec<String> = exclude.iter().map(|d| d.to_string()).collect();
        let doc_suffixes = vec![".pdf".to_string()];
        IndexSettings {
            chunking: ChunkConfig::DEFAULT,
            counting: Counting::new(&doc_suffixes, &exclude),
            document_prefix: String::new(),
            doc_suffixes,
            files_dir: "Files".into(),
            extract: ExtractSettings::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_takes_what_the_census_counts_and_words_why_it_leaves_the_rest_out() {
        let s = IndexSettings::for_tests(&["Workflows", "Reports/Daily"]);
        assert!(s.is_indexed("Home/Boiler.md"));
        assert!(!s.is_indexed("Workflows/x.md"));
        assert!(!s.is_indexed("workflows/Sub/x.md"));
        assert!(s.is_indexed("Workflows Archive/x.md"));
        assert!(s.is_indexed("Reports/Weekly/x.md"));
        assert!(!s.is_indexed("Reports/Daily/x.md"));
        assert!(!s.is_indexed("index.md"));
        assert!(s.is_indexed("Sub/index.md"));
        assert!(!s.is_indexed("a/node_modules/x.md"));
        assert!(!s.is_indexed(".trash/x.md"));
        assert!(s.is_indexed("Home/Files/scan.PDF"));
        assert!(!s.is_indexed("Workflows/Files/scan.pdf"));
        assert!(!s.is_indexed("Home/photo.png"));
        assert!(s.is_indexed("Boards/Plan.canvas"));
        assert_eq!(s.document_suffix("a/B.Pdf"), Some(".pdf"));
        let why = |rel| s.skip_reason(rel).unwrap_or_default();
        assert_eq!(why("Workflows/x.md"), "in Workflows/, listed in search.exclude_dirs");
        assert_eq!(why("index.md"), "the generated index.md at the root");
        assert_eq!(why("a/node_modules/x.md"), "inside node_modules");
        assert_eq!(why(".trash/x.md"), "inside a hidden folder");
        assert!(why("Home/photo.png").contains("(.png)"));
        assert!(why("Home/README").contains("no suffix"));
        assert_eq!(s.skip_reason("Home/Boiler.md"), None);
    }

    #[test]
    fn the_fingerprint_follows_chunk_settings() {
        let a = IndexSettings::for_tests(&[]);
        let mut b = IndexSettings::for_tests(&[]);
        assert_eq!(a.fingerprint(), b.fingerprint());
        b.chunking.target_tokens = 300;
        assert_ne!(a.fingerprint(), b.fingerprint());
        let mut c = IndexSettings::for_tests(&[]);
        c.document_prefix = "search_document: ".into();
        assert_ne!(a.fingerprint(), c.fingerprint());
    }
}
