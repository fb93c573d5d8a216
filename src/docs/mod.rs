//! Filed documents: a document's bytes in, its text as Markdown and an extraction verdict out.
//!
//! What it owns: which suffixes have an extractor ([`has_extractor`]), PDF text extraction
//! with headings kept where the PDF shows them ([`pdf`]), the OCR fallback through the system's
//! `pdftoppm` and `tesseract`, and the `pdftotext` fallback when the Rust parser gives up
//! ([`tools`]), and the verdict that says which of those happened ([`Verdict`]).
//!
//! What it does not do: read or write vault files, decide where a document may be filed, cache
//! results (the index store caches by content hash), or chunk the Markdown. It knows nothing of
//! vaults, HTTP or MCP: callers hand it bytes.

pub(crate) mod pdf;
pub(crate) mod tools;

use std::time::Duration;

/// The suffixes with an extractor. A configured document suffix outside this list is a
/// configuration error at start, not a file that silently never gets searched.
pub(crate) const SUFFIXES: &[&str] = &[".pdf"];

/// Bumped whenever extraction output changes, so cached results from an older build are
/// re-extracted instead of served.
pub(crate) const VERSION: u32 = 1;

/// Whether `suffix` (lowercase, with its dot) has an extractor.
pub(crate) fn has_extractor(suffix: &str) -> bool {
    SUFFIXES.contains(&suffix)
}

/// A page counts as having a text layer when the document averages this many characters
/// (whitespace excluded) per page; below it, the page set is treated as a scan.
pub(crate) const MIN_CHARS_PER_PAGE: usize = 50;

/// What extraction made of a document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Text came from the PDF's text layer.
    Extracted,
    /// Text came from OCR of the rendered pages.
    Ocr,
    /// The document was read (and OCR'd if it had no text layer) but holds no text.
    NoText,
    /// The document has no text layer and OCR is off or not installed.
    NeedsOcr,
    /// The document could not be read at all (encrypted, corrupt, no pages).
    Failed,
}

impl Status {
    /// The wire name: `extracted`, `ocr`, `no_text`, `needs_ocr` or `failed`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Status::Extracted => "extracted",
            Status::Ocr => "ocr",
            Status::NoText => "no_text",
            Status::NeedsOcr => "needs_ocr",
            Status::Failed => "failed",
        }
    }

    /// The inverse of [`Status::as_str`].
    pub(crate) fn parse(s: &str) -> Option<Status> {
        [Status::Extracted, Status::Ocr, Status::NoText, Status::NeedsOcr, Status::Failed]
            .into_iter()
            .find(|st| st.as_str() == s)
    }
}

/// The extraction verdict reported for every document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// What happened.
    pub status: Status,
    /// Pages in the document (0 when it could not be opened).
    pub(crate) pages: u32,
    /// Whether the text layer averages at least [`MIN_CHARS_PER_PAGE`] characters a page.
    pub(crate) has_text_layer: bool,
    /// Characters of extracted Markdown (trimmed); the document is searchable iff this is > 0.
    pub(crate) extracted_chars: usize,
    /// Why, in a sentence, when the status is not plain `extracted`.
    pub(crate) detail: String,
}

/// A verdict and the Markdown it describes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extraction {
    /// The verdict.
    pub(crate) verdict: Verdict,
    /// The document's text as Markdown: headings where the PDF had them, else `## Page N`
    /// sections. Empty when nothing was extracted.
    pub(crate) markdown: String,
}

impl Extraction {
    fn failed(pages: u32, detail: impl Into<String>) -> Extraction {
        Extraction {
            verdict: Verdict {
                status: Status::Failed,
                pages,
                has_text_layer: false,
                extracted_chars: 0,
                detail: detail.into(),
            },
            markdown: String::new(),
        }
    }
}

/// How extraction behaves.
#[derive(Debug, Clone)]
pub struct ExtractSettings {
    /// Whether pages without a text layer may be OCR'd (`vault.doc_ocr`).
    pub(crate) ocr: bool,
    /// How long one parse, render or OCR step may take before it is abandoned.
    pub(crate) timeout: Duration,
}

impl Default for ExtractSettings {
    fn default() -> Self {
        ExtractSettings { ocr: true, timeout: Duration::from_secs(120) }
    }
}

/// Extracts documents. Cheap to clone. The system tools are looked up on first use (finding
/// Tesseract's languages runs it), so a process that never meets a document never pays for it.
#[derive(Debug, Clone)]
pub struct Extractor {
    settings: ExtractSettings,
    tools: std::sync::OnceLock<tools::Tools>,
}

impl Extractor {
    /// An extractor using the system tools on `PATH` (looked up when first needed).
    pub fn new(settings: ExtractSettings) -> Extractor {
        Extractor { settings, tools: std::sync::OnceLock::new() }
    }

    /// An extractor with the given tools (tests).
    #[cfg(test)]
    pub(crate) fn with_tools(settings: ExtractSettings, tools: tools::Tools) -> Extractor {
        Extractor { settings, tools: std::sync::OnceLock::from(tools) }
    }

    /// The tools in use.
    pub(crate) fn tools(&self) -> &tools::Tools {
        self.tools.get_or_init(tools::Tools::detect)
    }

    /// Identifies what this extractor can do, for the cache key: a result made without OCR
    /// must not be served once OCR becomes available, and the reverse.
    pub(crate) fn signature(&self) -> String {
        let ocr = if self.ocr_unavailable().is_none() { "ocr" } else { "no-ocr" };
        let text = if self.tools().pdftotext.is_some() { "+pdftotext" } else { "" };
        format!("v{VERSION}/{ocr}{text}")
    }

    /// Why OCR cannot run, or `None` when it can.
    pub(crate) fn ocr_unavailable(&self) -> Option<String> {
        if !self.settings.ocr {
            return Some("OCR is turned off (`vault.doc_ocr: false`)".into());
        }
        self.tools().ocr_missing()
    }

    /// Extracts a document whose file name ends in `suffix` (lowercase, with its dot).
    pub fn extract(&self, suffix: &str, bytes: &[u8]) -> Extraction {
        match suffix {
            ".pdf" => pdf::extract(bytes, self),
            other => Extraction::failed(0, format!("no extractor for `{other}` documents")),
        }
    }

    fn timeout(&self) -> Duration {
        self.settings.timeout
    }
}

/// Assembles per-page text into the document's Markdown. When no line anywhere is a Markdown
/// heading, every non-empty page becomes a `## Page N` section so that search results can cite
/// pages; otherwise the pages are joined and the headings give the structure.
pub(crate) fn assemble(pages: &[String]) -> String {
    let trimmed: Vec<&str> = pages.iter().map(|p| p.trim()).collect();
    let has_heading = trimmed.iter().any(|p| p.lines().any(is_heading_line));
    let mut out = String::new();
    for (n, page) in trimmed.iter().enumerate() {
        if page.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        if !has_heading {
            out.push_str(&format!("## Page {}\n\n", n + 1));
        }
        out.push_str(page);
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out
}

fn is_heading_line(line: &str) -> bool {
    let hashes = line.bytes().take_while(|&b| b == b'#').count();
    (1..=6).contains(&hashes) && line[hashes..].starts_with(' ')
}

/// Escapes a line of extracted prose so Markdown does not read it as a heading: a PDF line
/// that happens to start with `#` is text, not structure.
pub(crate) fn escape_line(line: &str) -> String {
    if line.starts_with('#') { format!("\\{line}") } else { line.to_string() }
}

/// Counts characters that are not whitespace.
pub(crate) fn visible_chars(s: &str) -> usize {
    s.chars().filter(|c| !c.is_whitespace()).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_without_headings_become_page_sections() {
        let md = assemble(&["first page\n".into(), "  \n".into(), "third".into()]);
        assert_eq!(md, "## Page 1\n\nfirst page\n\n## Page 3\n\nthird\n");
    }

    #[test]
    fn a_heading_anywhere_keeps_the_pages_as_they_are() {
        let md = assemble(&["# Title\n\nbody".into(), "more".into()]);
        assert_eq!(md, "# Title\n\nbody\n\nmore\n");
        assert_eq!(assemble(&[String::new()]), "");
    }

    #[test]
    fn only_real_heading_syntax_counts() {
        assert!(is_heading_line("## Costs"));
        assert!(!is_heading_line("#hashtag"));
        assert!(!is_heading_line("####### seven"));
        assert_eq!(escape_line("# not a heading"), "\\# not a heading");
        assert_eq!(escape_line("plain"), "plain");
    }

    #[test]
    fn statuses_round_trip_and_suffixes_are_declared() {
        for s in ["extracted", "ocr", "no_text", "needs_ocr", "failed"] {
            assert_eq!(Status::parse(s).unwrap().as_str(), s);
        }
        assert!(has_extractor(".pdf"));
        assert!(!has_extractor(".docx"));
    }
}
