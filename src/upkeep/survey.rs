//! Exact lookups over the files: `grep` (a literal string or a regular expression, line by
//! line, over the notes and the text extracted from filed documents) and `links` (a note's or
//! canvas's outgoing links, resolved or broken, and the notes and canvases that link to it).
//!
//! Both read the files on disk, not the search index, so they see the vault as it is now,
//! folders search leaves out included, and an answer of "none" is a proof of absence rather
//! than a ranking that missed. Links are found and resolved by `vault::links`, the same rules a
//! move rewrites by and the maintenance link check reports by. This module writes nothing.

use regex::{Regex, RegexBuilder};

use crate::error::{Error, ErrorCode, Result};
use crate::vault::aliases::Aliases;
use crate::vault::links::{self, PathSet};
use crate::vault::{DocumentText, Vault};

/// The most matching lines one grep answer carries; `offset` pages through the rest.
pub(crate) const GREP_MAX_LIMIT: usize = 200;

/// Lines per answer when the caller does not say.
pub(crate) const GREP_DEFAULT_LIMIT: usize = 50;

/// A matching line is cut to this many characters, so one minified line cannot flood a reply.
const LINE_CHARS: usize = 240;

/// The compiled size a pattern may grow to: generous for any hand-written pattern, and a
/// refusal rather than memory exhaustion for a pathological one.
const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// A grep request.
#[derive(Debug, Clone)]
pub(crate) struct GrepQuery {
    /// The literal text, or the pattern when `regex` is set.
    pub(crate) pattern: String,
    /// Read `pattern` as a regular expression (Rust `regex` syntax) instead of literally.
    pub(crate) regex: bool,
    /// Ignore case.
    pub(crate) ignore_case: bool,
    /// Only files under this folder (`""` for all).
    pub(crate) dir: String,
    /// At most this many lines (1 to [`GREP_MAX_LIMIT`]).
    pub(crate) limit: usize,
    /// Skip this many matching lines first (for the next page).
    pub(crate) offset: usize,
    /// The client's grant: a file it cannot see is never scanned.
    pub(crate) grant: crate::vault::grant::Grant,
}

/// One matching line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GrepHit {
    /// Vault-relative path.
    pub(crate) path: String,
    /// 1-based line (of the note, or of a document's extracted text).
    pub(crate) line: usize,
    /// The line, cut to [`LINE_CHARS`] characters.
    pub(crate) text: String,
    /// True when the line is from a filed document's extracted text.
    pub(crate) document: bool,
}

/// A grep answer: one page of matching lines and the count of all of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GrepReport {
    /// The pattern as given.
    pub(crate) pattern: String,
    /// Whether it was read as a regular expression.
    pub(crate) regex: bool,
    /// This page of matching lines, in path then line order.
    pub(crate) hits: Vec<GrepHit>,
    /// Every matching line in the files searched.
    pub(crate) total: usize,
    /// The files searched (notes, and documents with extracted text).
    pub(crate) files: usize,
    /// The offset this page starts at.
    pub(crate) offset: usize,
}

fn matcher(q: &GrepQuery) -> Result<Regex> {
    if q.pattern.is_empty() {
        return Err(Error::new(
            ErrorCode::InvalidRequest,
            "the pattern is empty; pass the text to find",
        ));
    }
    let source = if q.regex { q.pattern.clone() } else { regex::escape(&q.pattern) };
    RegexBuilder::new(&source)
        .case_insensitive(q.ignore_case)
        .size_limit(REGEX_SIZE_LIMIT)
        .build()
        .map_err(|e| {
            Error::new(
                ErrorCode::InvalidRequest,
                format!(
                    "`{}` is not a valid regular expression ({}); fix it, or leave regex off to \
                     search for the text literally",
                    q.pattern,
                    e.to_string().lines().last().unwrap_or("syntax error").trim()
                ),
            )
        })
}

/// Every line under `q.dir` that matches, paged.
pub(crate) fn grep(vault: &Vault, docs: &dyn DocumentText, q: &GrepQuery) -> Result<GrepReport> {
    let re = matcher(q)?;
    let dir = vault.folder(&q.dir)?;
    let limit = q.limit.clamp(1, GREP_MAX_LIMIT);
    let mut hits = Vec::new();
    let mut total = 0;
    let mut files = 0;
    let mut scan = |path: &str, text: &str, document: bool| {
        files += 1;
        for (i, line) in text.lines().enumerate() {
            if !re.is_match(line) {
                continue;
            }
            if total >= q.offset && hits.len() < limit {
                let mut shown: String = line.chars().take(LINE_CHARS).collect();
                if shown.len() < line.len() {
                    shown.push('…');
                }
                hits.push(GrepHit { path: path.to_string(), line: i + 1, text: shown, document });
            }
            total += 1;
        }
    };
    // What the client cannot see is left out before counting and paging, so `limit` holds.
    for path in vault.all_files() {
        if !crate::index::under(&path, &dir) || !q.grant.can_read(&path) {
            continue;
        }
        if vault.is_document(&path) {
            let Ok(bytes) = vault.read_bytes(&path) else { continue };
            match docs.extraction(&path, &bytes) {
                Ok((_, extraction)) => scan(&path, &extraction.markdown, true),
                Err(e) => tracing::warn!("grep: no text for {path}: {e}"),
            }
        }
    }
    for (path, text) in super::notes(vault, &dir) {
        if !q.grant.can_read(&path) {
            continue;
        }
        scan(&path, &text, false);
    }
    hits.sort_by(|a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
    Ok(GrepReport {
        pattern: q.pattern.clone(),
        regex: q.regex,
        hits,
        total,
        files,
        offset: q.offset,
    })
}

/// One outgoing link of a note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Outgoing {
    /// 1-based line of the link.
    pub(crate) line: usize,
    /// The link target as written (without fragment or alias).
    pub(crate) target: String,
    /// The `#fragment`, if any.
    pub(crate) fragment: Option<String>,
    /// The vault path it resolves to; `None` for a broken link or a URL.
    pub(crate) resolved: Option<String>,
    /// A URL rather than a vault file.
    pub(crate) external: bool,
}

/// One note (or canvas) linking to the note asked about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Backlink {
    /// The linking note or canvas.
    pub(crate) from: String,
    /// 1-based line of the link in it.
    pub(crate) line: usize,
    /// The link as written.
    pub(crate) written: String,
}

/// A note's links both ways.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LinkReport {
    /// The note (or document) asked about, as the vault spells it.
    pub(crate) path: String,
    /// Its outgoing links, in order (empty for a document).
    pub(crate) outgoing: Vec<Outgoing>,
    /// The links to it from other notes and canvases (and itself), by path then line.
    pub(crate) backlinks: Vec<Backlink>,
}

/// The links of `rel` (an existing file's vault path) both ways.
pub(crate) fn links_of(vault: &Vault, rel: &str) -> Result<LinkReport> {
    let notes = super::notes(vault, "");
    let paths = PathSet::new(vault.all_files())
        .with_aliases(Aliases::from_notes(notes.iter().map(|(p, t)| (p.as_str(), t.as_str()))));
    // A canvas links as a note does (its file nodes and its text nodes' links), so a note
    // placed only on a canvas still has a backlink, and a canvas has outgoing links.
    let notes: Vec<(String, String)> = notes.into_iter().chain(super::canvases(vault)).collect();
    let mut outgoing = Vec::new();
    if let Some((_, text)) = notes.iter().find(|(p, _)| p == rel) {
        for link in links::links(text) {
            let external = link.is_external();
            let resolved =
                if external { None } else { links::resolve(&link.target, link.kind, rel, &paths) };
            outgoing.push(Outgoing {
                line: link.line,
                target: link.target,
                fragment: link.fragment,
                resolved,
                external,
            });
        }
    }
    let mut backlinks = Vec::new();
    for (from, text) in &notes {
        for link in links::links(text) {
            if link.is_external() {
                continue;
            }
            if links::resolve(&link.target, link.kind, from, &paths).as_deref() == Some(rel) {
                let written = text.get(link.span.clone()).unwrap_or("").replace('\n', " ");
                backlinks.push(Backlink { from: from.clone(), line: link.line, written });
            }
        }
    }
    backlinks.sort_by(|a, b| (&a.from, a.line).cmp(&(&b.from, b.line)));
    Ok(LinkReport { path: rel.to_string(), outgoing, backlinks })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(pattern: &str, regex: bool) -> GrepQuery {
        GrepQuery {
            pattern: pattern.into(),
            regex,
            ignore_case: false,
            dir: String::new(),
            limit: 10,
            offset: 0,
            grant: crate::vault::grant::Grant::owner(),
        }
    }

    #[test]
    fn a_literal_pattern_matches_its_regex_characters_literally() {
        let re = matcher(&query("1.2 (bar)", false)).unwrap();
        assert!(re.is_match("Pressure 1.2 (bar)."));
        assert!(!re.is_match("Pressure 1x2 bar"));
        let re = matcher(&query(r"0\d{3} \d{6}", true)).unwrap();
        assert!(re.is_match("call 0161 496000"));
    }

    #[test]
    fn a_bad_or_empty_pattern_is_an_invalid_request_that_says_what_to_do() {
        let err = matcher(&query("(unclosed", true)).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidRequest);
        assert!(err.message().contains("leave regex off"), "{}", err.message());
        assert_eq!(matcher(&query("", false)).unwrap_err().code(), ErrorCode::InvalidRequest);
    }
}
