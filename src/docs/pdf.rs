//! PDF text extraction: the text layer laid out into lines, paragraphs and headings, with OCR
//! for scans and `pdftotext` as a second opinion when the Rust parser fails.
//!
//! The parser is `pdf-extract` (over `lopdf`). It reports every glyph with its position and size;
//! [`layout`] turns those into Markdown: lines by baseline, paragraphs by vertical gaps, and
//! headings from font size (a line set clearly larger than the document's body text becomes a
//! `#`, `##` or `###` heading, larger sizes ranking higher). The parser can panic on malformed
//! files, so it runs on a worker thread under `catch_unwind` with a deadline.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

use pdf_extract::{MediaBox, OutputDev, OutputError, Transform};

use super::{Extraction, Extractor, Status, Verdict, assemble, escape_line, visible_chars};

/// One glyph as the parser placed it (PDF user space: y grows upwards).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Glyph {
    /// Left edge.
    pub(crate) x: f64,
    /// Baseline.
    pub(crate) y: f64,
    /// Font size after the text matrix (points).
    pub(crate) size: f64,
    /// Advance width (points).
    pub(crate) advance: f64,
    /// The characters it maps to (usually one).
    pub(crate) text: String,
}

/// Why the parser produced no glyphs.
enum ParseError {
    /// Encrypted with a password we do not have.
    Encrypted,
    /// Not a PDF we can read (the parser's reason).
    Unreadable(String),
}

/// Collects glyphs page by page.
#[derive(Default)]
struct Collector {
    pages: Vec<Vec<Glyph>>,
}

impl OutputDev for Collector {
    fn begin_page(
        &mut self,
        _: u32,
        _: &MediaBox,
        _: Option<(f64, f64, f64, f64)>,
    ) -> Result<(), OutputError> {
        self.pages.push(Vec::new());
        Ok(())
    }
    fn end_page(&mut self) -> Result<(), OutputError> {
        Ok(())
    }
    fn output_character(
        &mut self,
        trm: &Transform,
        width: f64,
        _spacing: f64,
        font_size: f64,
        text: &str,
    ) -> Result<(), OutputError> {
        // The size as drawn: the text matrix applied to a font_size square, as the side of a
        // square of the same area (so rotated and stretched text still gets a sensible size).
        let sx = font_size * (trm.m11 + trm.m21);
        let sy = font_size * (trm.m12 + trm.m22);
        let size = (sx * sy).abs().sqrt();
        let text: String = text.chars().filter(|c| !c.is_control() || *c == ' ').collect();
        if let Some(page) = self.pages.last_mut()
            && !text.is_empty()
            && size.is_finite()
            && size > 0.0
        {
            page.push(Glyph { x: trm.m31, y: trm.m32, size, advance: width * size, text });
        }
        Ok(())
    }
    fn begin_word(&mut self) -> Result<(), OutputError> {
        Ok(())
    }
    fn end_word(&mut self) -> Result<(), OutputError> {
        Ok(())
    }
    fn end_line(&mut self) -> Result<(), OutputError> {
        Ok(())
    }
}

/// Opens the PDF and collects every page's glyphs. May panic (malformed input).
fn parse(bytes: &[u8]) -> Result<Vec<Vec<Glyph>>, ParseError> {
    let mut doc = pdf_extract::Document::load_mem(bytes)
        .map_err(|e| ParseError::Unreadable(e.to_string()))?;
    if doc.is_encrypted() {
        // An empty user password is common ("owner-only" protection); anything else is not ours.
        if doc.decrypt("").is_err() {
            return Err(ParseError::Encrypted);
        }
    }
    let page_count = doc.get_pages().len();
    let mut collector = Collector::default();
    pdf_extract::output_doc(&doc, &mut collector)
        .map_err(|e| ParseError::Unreadable(format!("{e:?}")))?;
    // A page the parser skipped still counts, so page numbers stay right.
    collector.pages.resize(page_count.max(collector.pages.len()), Vec::new());
    Ok(collector.pages)
}

/// [`parse`] on a worker thread, with panics and overruns turned into errors.
fn parse_guarded(bytes: &[u8], ex: &Extractor) -> Result<Vec<Vec<Glyph>>, ParseError> {
    let (tx, rx) = mpsc::channel();
    let owned = bytes.to_vec();
    let spawned = std::thread::Builder::new().name("mdvault-pdf".into()).spawn(move || {
        let result = std::panic::catch_unwind(move || parse(&owned));
        let _ = tx.send(result);
    });
    if let Err(e) = spawned {
        return Err(ParseError::Unreadable(format!("no thread to parse on: {e}")));
    }
    match rx.recv_timeout(ex.timeout()) {
        Ok(Ok(result)) => result,
        Ok(Err(panic)) => {
            let why = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown".into());
            Err(ParseError::Unreadable(format!("the PDF parser gave up ({why})")))
        }
        // The thread is left to finish on its own; it holds only its copy of the bytes.
        Err(_) => Err(ParseError::Unreadable(format!(
            "parsing took longer than {} s",
            ex.timeout().as_secs()
        ))),
    }
}

/// Extracts a PDF.
pub(crate) fn extract(bytes: &[u8], ex: &Extractor) -> Extraction {
    let pages = match parse_guarded(bytes, ex) {
        Ok(pages) => pages,
        Err(ParseError::Encrypted) => {
            return Extraction::failed(
                0,
                "the PDF is password-protected; save an unprotected copy (for example \
                 `qpdf --decrypt --password=PASSWORD in.pdf out.pdf`) and file that instead",
            );
        }
        Err(ParseError::Unreadable(why)) => return fallback(bytes, ex, &why),
    };
    if pages.is_empty() {
        return Extraction::failed(0, "the PDF has no pages");
    }
    let page_count = pages.len() as u32;
    let texts = layout(&pages);
    finish(bytes, ex, page_count, texts, None)
}

/// The text layer is in hand (from the parser or `pdftotext`): decide between it and OCR.
fn finish(
    bytes: &[u8],
    ex: &Extractor,
    pages: u32,
    texts: Vec<String>,
    note: Option<String>,
) -> Extraction {
    let chars: usize = texts.iter().map(|t| visible_chars(t)).sum();
    let has_text_layer = chars >= super::MIN_CHARS_PER_PAGE * pages as usize;
    let verdict = |status, markdown: &str, detail: String| Verdict {
        status,
        pages,
        has_text_layer,
        extracted_chars: markdown.trim().chars().count(),
        detail,
    };
    if has_text_layer {
        let markdown = assemble(&texts);
        let status = if markdown.trim().is_empty() { Status::NoText } else { Status::Extracted };
        return Extraction {
            verdict: verdict(status, &markdown, note.unwrap_or_default()),
            markdown,
        };
    }
    let sparse = if chars == 0 {
        "it has no text layer".to_string()
    } else {
        format!(
            "its text layer is too thin to be the real text ({chars} characters on {pages} page(s))"
        )
    };
    if let Some(why) = ex.ocr_unavailable() {
        // Keep what little text there is searchable, and say what would find the rest.
        let markdown = assemble(&texts);
        let detail = format!("{sparse}, so it needs OCR, but {why}");
        return Extraction { verdict: verdict(Status::NeedsOcr, &markdown, detail), markdown };
    }
    match ocr(bytes, pages, ex) {
        Ok(ocr_pages) => {
            let markdown = assemble(&ocr_pages);
            if markdown.trim().is_empty() {
                let detail = format!("{sparse}, and OCR found no text on its {pages} page(s)");
                Extraction { verdict: verdict(Status::NoText, &markdown, detail), markdown }
            } else {
                let detail =
                    format!("{sparse}; the text was read by OCR ({})", ex.tools().language);
                Extraction { verdict: verdict(Status::Ocr, &markdown, detail), markdown }
            }
        }
        Err(why) => {
            let markdown = assemble(&texts);
            let detail = format!("{sparse}, and OCR failed: {why}");
            Extraction { verdict: verdict(Status::NeedsOcr, &markdown, detail), markdown }
        }
    }
}

/// The parser failed: let `pdftotext` try before calling the file unreadable.
fn fallback(bytes: &[u8], ex: &Extractor, why: &str) -> Extraction {
    let unreadable = || {
        Extraction::failed(
            0,
            format!("the file is not a readable PDF ({why}); check that it opens in a PDF viewer"),
        )
    };
    if ex.tools().pdftotext.is_none() {
        return unreadable();
    }
    let Ok(dir) = tempfile::tempdir() else { return unreadable() };
    let file = dir.path().join("document.pdf");
    if std::fs::write(&file, bytes).is_err() {
        return unreadable();
    }
    match ex.tools().pdftotext(&file, ex.timeout()) {
        Ok(pages) if !pages.is_empty() => {
            let texts: Vec<String> = pages.iter().map(|p| plain_page(p)).collect();
            let count = texts.len() as u32;
            finish(bytes, ex, count, texts, Some(format!("read by pdftotext because {why}")))
        }
        _ => unreadable(),
    }
}

/// `pdftotext -layout` output as Markdown-safe prose: trailing spaces gone, runs of blank lines
/// squeezed, column padding collapsed.
fn plain_page(page: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    for line in page.lines() {
        let line = line.split_whitespace().collect::<Vec<_>>().join(" ");
        if line.is_empty() && out.last().is_none_or(|l| l.is_empty()) {
            continue;
        }
        out.push(escape_line(&line));
    }
    out.join("\n").trim().to_string()
}

/// OCR of every page (rendered and read by the system tools), one page per core at a time.
/// Public for the benchmark, which times OCR on pages of known text.
pub(crate) fn ocr(bytes: &[u8], pages: u32, ex: &Extractor) -> Result<Vec<String>, String> {
    let dir = tempfile::tempdir().map_err(|e| format!("no temporary folder: {e}"))?;
    let file = dir.path().join("document.pdf");
    std::fs::write(&file, bytes).map_err(|e| format!("cannot stage the PDF: {e}"))?;
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).min(pages as usize);
    let next = AtomicUsize::new(0);
    let mut results: Vec<Option<Result<String, String>>> = vec![None; pages as usize];
    let done: Vec<(usize, Result<String, String>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers.max(1))
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= pages as usize {
                            break;
                        }
                        let text =
                            ex.tools().ocr_page(&file, i as u32 + 1, dir.path(), ex.timeout());
                        mine.push((i, text));
                    }
                    mine
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap_or_default()).collect()
    });
    for (i, r) in done {
        results[i] = Some(r);
    }
    let mut texts = Vec::with_capacity(pages as usize);
    for (i, r) in results.into_iter().enumerate() {
        match r {
            Some(Ok(text)) => texts.push(plain_page(&text)),
            Some(Err(e)) => return Err(format!("page {}: {e}", i + 1)),
            None => return Err(format!("page {} was not processed", i + 1)),
        }
    }
    Ok(texts)
}

/// A plain PDF of A4 pages, one per entry of `pages`, each line set in Helvetica 11 pt: a
/// document of known text for the benchmark and tests. Characters outside Latin-1 are dropped.
pub(crate) fn sample(pages: &[Vec<String>]) -> Vec<u8> {
    use pdf_extract::{Document, Object, Stream, dictionary};
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font = doc.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
        "Encoding" => "WinAnsiEncoding",
    });
    let resources = doc.add_object(dictionary! { "Font" => dictionary! { "F1" => font } });
    let mut kids: Vec<Object> = Vec::new();
    for lines in pages {
        let mut ops = b"BT /F1 11 Tf 14 TL 72 770 Td\n".to_vec();
        for line in lines {
            // `T*` and `Tj` rather than the `'` shorthand, which not every parser knows.
            ops.extend(b"T* (");
            for c in line.chars() {
                match c {
                    '(' | ')' | '\\' => ops.extend([b'\\', c as u8]),
                    c if (c as u32) < 256 && !c.is_control() => ops.push(c as u32 as u8),
                    _ => {}
                }
            }
            ops.extend(b") Tj\n");
        }
        ops.extend(b"ET");
        let content = doc.add_object(Stream::new(dictionary! {}, ops));
        let page = doc.add_object(dictionary! {
            "Type" => "Page",
            "Parent" => pages_id,
            "Contents" => content,
            "MediaBox" => vec![0.into(), 0.into(), 595.into(), 842.into()],
        });
        kids.push(page.into());
    }
    let count = kids.len() as i64;
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages", "Kids" => kids, "Count" => count, "Resources" => resources,
        }),
    );
    let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog);
    let mut out = Vec::new();
    doc.save_to(&mut out).expect("writing to memory cannot fail");
    out
}

/// A line of text on a page.
#[derive(Debug, Clone)]
struct Line {
    y: f64,
    size: f64,
    text: String,
}

/// Rounds a size to half points, so 11.0 and 10.98 count as one size.
fn size_key(size: f64) -> i64 {
    (size * 2.0).round() as i64
}

/// Groups a page's glyphs into lines, in the order the PDF draws them.
fn lines(glyphs: &[Glyph]) -> Vec<Line> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut sizes: HashMap<i64, usize> = HashMap::new();
    let mut base = f64::NAN;
    let mut end = f64::NAN;
    let mut flush = |text: &mut String, sizes: &mut HashMap<i64, usize>, base: f64| {
        let t = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if !t.is_empty() {
            // The line's size is the one most of its characters use.
            let size =
                sizes.iter().max_by_key(|(k, n)| (**n, **k)).map_or(0.0, |(k, _)| *k as f64 / 2.0);
            out.push(Line { y: base, size, text: t });
        }
        text.clear();
        sizes.clear();
    };
    for g in glyphs {
        let new_line = base.is_nan()
            || (g.y - base).abs() > 0.4 * g.size
            // Jumping well back to the left on the same baseline starts another column's line.
            || g.x < end - 2.0 * g.size;
        if new_line {
            flush(&mut text, &mut sizes, base);
            base = g.y;
        } else if g.x > end + 0.15 * g.size && !text.ends_with(' ') && !g.text.starts_with(' ') {
            text.push(' ');
        }
        text.push_str(&g.text);
        *sizes.entry(size_key(g.size)).or_default() += visible_chars(&g.text);
        end = g.x + g.advance;
    }
    flush(&mut text, &mut sizes, base);
    out
}

/// Every page's glyphs as Markdown, with headings decided across the whole document.
pub(crate) fn layout(pages: &[Vec<Glyph>]) -> Vec<String> {
    let pages: Vec<Vec<Line>> = pages.iter().map(|g| lines(g)).collect();
    // The body size is the one most characters are set in.
    let mut by_size: HashMap<i64, usize> = HashMap::new();
    for line in pages.iter().flatten() {
        *by_size.entry(size_key(line.size)).or_default() += visible_chars(&line.text);
    }
    let body =
        by_size.iter().max_by_key(|(k, n)| (**n, -**k)).map_or(0.0, |(k, _)| *k as f64 / 2.0);
    let is_heading = |l: &Line| {
        l.size >= body * 1.15
            && l.text.chars().any(char::is_alphabetic)
            && l.text.chars().count() <= 120
            && l.text.split_whitespace().count() <= 15
    };
    // Larger heading sizes rank higher: the largest is `#`, the next `##`, the rest `###`.
    let mut heading_sizes: Vec<i64> =
        pages.iter().flatten().filter(|l| is_heading(l)).map(|l| size_key(l.size)).collect();
    heading_sizes.sort_unstable_by(|a, b| b.cmp(a));
    heading_sizes.dedup();
    let level = |l: &Line| {
        heading_sizes.iter().position(|s| *s == size_key(l.size)).map_or(3, |i| i + 1).min(3)
    };

    pages
        .iter()
        .map(|lines| {
            let mut out = String::new();
            let mut prev: Option<(&Line, bool)> = None;
            for line in lines {
                let heading = is_heading(line);
                match prev {
                    // A heading wrapped onto a second line: one heading.
                    Some((p, true))
                        if heading
                            && size_key(p.size) == size_key(line.size)
                            && (p.y - line.y) > 0.0
                            && (p.y - line.y) < 1.6 * line.size =>
                    {
                        out.push(' ');
                        out.push_str(&line.text);
                        prev = Some((line, true));
                        continue;
                    }
                    Some((p, was_heading)) => {
                        let gap = p.y - line.y;
                        let para = heading
                            || was_heading
                            || gap < 0.0
                            || gap > 1.5 * p.size.max(line.size);
                        out.push_str(if para { "\n\n" } else { "\n" });
                    }
                    None => {}
                }
                if heading {
                    out.push_str(&"#".repeat(level(line)));
                    out.push(' ');
                    out.push_str(&line.text);
                } else {
                    out.push_str(&escape_line(&line.text));
                }
                prev = Some((line, heading));
            }
            out
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Glyphs for `text` on one baseline, 0.5 em per character, spaces as gaps.
    fn run(text: &str, x: f64, y: f64, size: f64) -> Vec<Glyph> {
        let mut out = Vec::new();
        let mut at = x;
        for c in text.chars() {
            if c != ' ' {
                out.push(Glyph { x: at, y, size, advance: 0.5 * size, text: c.to_string() });
            }
            at += 0.5 * size;
        }
        out
    }

    #[test]
    fn glyphs_become_lines_with_spaces_from_gaps() {
        let mut g = run("Account number: LK-5093-7261", 72.0, 700.0, 11.0);
        g.extend(run("Start date: 1 December 2026", 72.0, 686.0, 11.0));
        let ls = lines(&g);
        assert_eq!(ls.len(), 2);
        assert_eq!(ls[0].text, "Account number: LK-5093-7261");
        assert_eq!(ls[1].text, "Start date: 1 December 2026");
        assert_eq!(ls[0].size, 11.0);
    }

    #[test]
    fn larger_lines_become_ranked_headings_and_gaps_paragraphs() {
        let mut p1 = run("House Handbook", 72.0, 760.0, 22.0);
        p1.extend(run("Intro text for the sitter.", 72.0, 730.0, 11.0));
        p1.extend(run("Keys and the gate", 72.0, 690.0, 16.0));
        p1.extend(run("The key hangs on a hook.", 72.0, 665.0, 11.0));
        p1.extend(run("It is brass.", 72.0, 651.0, 11.0));
        p1.extend(run("A new paragraph.", 72.0, 620.0, 11.0));
        let p2 = run("Bins go out on Tuesday.", 72.0, 760.0, 11.0);
        let md = layout(&[p1, p2]);
        assert_eq!(
            md[0],
            "# House Handbook\n\nIntro text for the sitter.\n\n## Keys and the gate\n\n\
             The key hangs on a hook.\nIt is brass.\n\nA new paragraph."
        );
        assert_eq!(md[1], "Bins go out on Tuesday.");
    }

    #[test]
    fn uniform_text_has_no_headings_and_hash_lines_are_escaped() {
        let mut g = run("# 12 is the plot", 72.0, 700.0, 11.0);
        g.extend(run("A Short Line", 72.0, 686.0, 11.0));
        let md = layout(&[g]);
        assert_eq!(md[0], "\\# 12 is the plot\nA Short Line");
    }

    #[test]
    fn a_wrapped_heading_stays_one_heading() {
        let mut g = run("A very long title that", 72.0, 760.0, 20.0);
        g.extend(run("wraps onto two lines", 72.0, 738.0, 20.0));
        g.extend(run("Body text set in the usual size, long enough", 72.0, 700.0, 11.0));
        g.extend(run("to outweigh the title's characters.", 72.0, 686.0, 11.0));
        let md = layout(&[g]);
        assert!(
            md[0].starts_with("# A very long title that wraps onto two lines\n\nBody"),
            "{}",
            md[0]
        );
    }

    #[test]
    fn a_generated_pdf_reads_back() {
        let pages = vec![
            vec!["Invoice (copy) 4471".to_string(), "Total due: 99.50 EUR".to_string()],
            vec!["Second page, café".to_string()],
        ];
        let bytes = sample(&pages);
        let ex = crate::docs::Extractor::with_tools(Default::default(), Default::default());
        let e = extract(&bytes, &ex);
        assert_eq!(e.verdict.pages, 2);
        // Too few characters for a text layer: reported as needing OCR, text kept.
        assert_eq!(e.verdict.status, crate::docs::Status::NeedsOcr);
        assert!(e.markdown.contains("Invoice (copy) 4471\nTotal due: 99.50 EUR"), "{}", e.markdown);
        assert!(e.markdown.contains("## Page 2\n\nSecond page, café"), "{}", e.markdown);
    }

    #[test]
    fn pdftotext_pages_are_tidied() {
        assert_eq!(plain_page("  Name:     Ada  \n\n\n\n# 4 items\n"), "Name: Ada\n\n\\# 4 items");
    }
}

/// Extraction of the committed fixture PDFs (`tests/fixtures/documents`, made by its
/// `make_pdfs.py`). OCR cases need `tesseract` and `pdftoppm` on PATH, which the test script
/// installs; they fail, naming the packages, rather than skip when the tools are missing.
#[cfg(test)]
mod fixtures {
    use super::super::{ExtractSettings, Extractor, Status, tools::Tools};
    use std::time::Duration;

    fn fixture(name: &str) -> Vec<u8> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/documents")
            .join(name);
        std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    fn with_ocr() -> Extractor {
        let ex = Extractor::new(ExtractSettings::default());
        if let Some(why) = ex.ocr_unavailable() {
            panic!(
                "these tests need OCR tools: {why} (apt-get install tesseract-ocr poppler-utils)"
            );
        }
        ex
    }

    fn without_tools() -> Extractor {
        Extractor::with_tools(
            ExtractSettings { ocr: true, timeout: Duration::from_secs(60) },
            Tools::default(),
        )
    }

    #[test]
    fn a_text_pdf_is_extracted_with_page_sections() {
        let e = without_tools().extract(".pdf", &fixture("contract.pdf"));
        assert_eq!(e.verdict.status, Status::Extracted, "{:?}", e.verdict);
        assert_eq!(e.verdict.pages, 1);
        assert!(e.verdict.has_text_layer);
        assert!(e.markdown.starts_with("## Page 1\n\n"), "{}", e.markdown);
        for fact in [
            "Account number: LK-5093-7261",
            "Supply address: 9 Linnet Row, Wexcombe QF6 2TN",
            "Fixed until: 30 November 2028",
            "21 days' notice",
        ] {
            assert!(
                e.markdown.replace('\n', " ").contains(fact),
                "{fact} missing from:\n{}",
                e.markdown
            );
        }
        assert_eq!(e.verdict.extracted_chars, e.markdown.trim().chars().count());
    }

    #[test]
    fn headings_come_from_font_sizes() {
        let e = without_tools().extract(".pdf", &fixture("handbook.pdf"));
        assert_eq!(e.verdict.status, Status::Extracted);
        assert_eq!(e.verdict.pages, 3);
        let headings: Vec<&str> = e.markdown.lines().filter(|l| l.starts_with('#')).collect();
        assert_eq!(
            headings,
            [
                "# Linnet Row House Handbook",
                "## Keys and the side gate",
                "## Feeding Pepper the tortoise",
                "## Heating and hot water",
                "## Bins and recycling",
                "## Washing machine quirks",
                "## Emergency contacts",
            ]
        );
        assert!(!e.markdown.contains("## Page"));
        assert!(e.markdown.contains("Garnet Pipeworks"));
    }

    #[test]
    fn each_page_of_a_plain_pdf_is_its_own_section() {
        let e = without_tools().extract(".pdf", &fixture("two-pages.pdf"));
        let p2 = e.markdown.find("## Page 2").expect("page 2 section");
        assert!(e.markdown[..p2].contains("plot"), "{}", e.markdown);
        assert!(e.markdown[p2..].replace('\n', " ").contains("seed swap"), "{}", e.markdown);
    }

    #[test]
    fn encrypted_and_corrupt_files_fail_with_a_reason() {
        let ex = without_tools();
        let enc = ex.extract(".pdf", &fixture("encrypted.pdf"));
        assert_eq!(enc.verdict.status, Status::Failed);
        assert!(enc.verdict.detail.contains("password-protected"), "{}", enc.verdict.detail);
        assert_eq!(enc.markdown, "");
        let bad = ex.extract(".pdf", &fixture("corrupt.pdf"));
        assert_eq!(bad.verdict.status, Status::Failed);
        assert!(bad.verdict.detail.contains("not a readable PDF"), "{}", bad.verdict.detail);
        let also = with_ocr().extract(".pdf", &fixture("corrupt.pdf"));
        assert_eq!(also.verdict.status, Status::Failed, "pdftotext must not rescue garbage");
        let empty = ex.extract(".pdf", b"");
        assert_eq!(empty.verdict.status, Status::Failed);
    }

    #[test]
    fn a_scan_without_ocr_tools_needs_ocr() {
        let e = without_tools().extract(".pdf", &fixture("scan.pdf"));
        assert_eq!(e.verdict.status, Status::NeedsOcr);
        assert!(!e.verdict.has_text_layer);
        assert_eq!(e.verdict.extracted_chars, 0);
        assert!(e.verdict.detail.contains("tesseract"), "{}", e.verdict.detail);
        let off =
            Extractor::new(super::super::ExtractSettings { ocr: false, ..Default::default() });
        let e = off.extract(".pdf", &fixture("scan.pdf"));
        assert_eq!(e.verdict.status, Status::NeedsOcr);
        assert!(e.verdict.detail.contains("doc_ocr"), "{}", e.verdict.detail);
    }

    #[test]
    fn a_scan_is_read_by_ocr_and_a_blank_page_has_no_text() {
        let ex = with_ocr();
        let e = ex.extract(".pdf", &fixture("scan.pdf"));
        assert_eq!(e.verdict.status, Status::Ocr, "{:?}", e.verdict);
        assert!(e.markdown.contains("QZ-58213"), "{}", e.markdown);
        assert!(e.markdown.starts_with("## Page 1"));
        let blank = ex.extract(".pdf", &fixture("blank.pdf"));
        assert_eq!(blank.verdict.status, Status::NoText, "{:?}", blank.verdict);
        assert_eq!(blank.verdict.extracted_chars, 0);
        assert_eq!(blank.markdown, "");
        assert!(blank.verdict.detail.contains("OCR found no text"));
    }
}
