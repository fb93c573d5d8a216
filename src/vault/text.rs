//! Text normalisation applied to every note mdvault writes.
//!
//! Notes are stored as UTF-8 with LF line endings, no byte-order mark and exactly one trailing
//! newline. Every writer passes its output through [`normalize`], so edits never leave a note
//! half in one convention and half in another. Reads never normalise: a caller sees the bytes
//! on disk.

/// The UTF-8 byte-order mark.
pub const BOM: char = '\u{feff}';

/// Removes a BOM, turns CRLF and lone CR into LF, and collapses trailing newlines to one.
/// Empty (or all-newline) text stays empty.
pub fn normalize(text: &str) -> String {
    let text = text.strip_prefix(BOM).unwrap_or(text);
    let mut out = String::with_capacity(text.len() + 1);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\r' {
            if chars.peek() == Some(&'\n') {
                chars.next();
            }
            out.push('\n');
        } else {
            out.push(c);
        }
    }
    let trimmed = out.trim_end_matches('\n').len();
    out.truncate(trimmed);
    if !out.is_empty() {
        out.push('\n');
    }
    out
}

/// Strips blank lines (lines of only whitespace) from both ends of `text`, keeping inner ones.
pub fn strip_blank_edges(text: &str) -> &str {
    let mut start = 0;
    for line in text.split_inclusive('\n') {
        if line.trim().is_empty() {
            start += line.len();
        } else {
            break;
        }
    }
    let rest = &text[start..];
    let mut end = rest.len();
    while end > 0 {
        let line_start = rest[..end].trim_end_matches('\n').rfind('\n').map_or(0, |i| i + 1);
        let line_end = rest[..end].trim_end_matches('\n').len();
        if rest[line_start..line_end].trim().is_empty() {
            end = line_start;
        } else {
            end = line_end;
            break;
        }
    }
    &rest[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_endings_bom_and_trailing_newlines() {
        assert_eq!(normalize("\u{feff}a\r\nb\rc\n\n\n"), "a\nb\nc\n");
        assert_eq!(normalize("a"), "a\n");
        assert_eq!(normalize(""), "");
        assert_eq!(normalize("\n\n"), "");
    }

    #[test]
    fn strips_only_blank_edge_lines() {
        assert_eq!(strip_blank_edges("\n  \nx\n\ny\n \n\n"), "x\n\ny");
        assert_eq!(strip_blank_edges("  x"), "  x");
        assert_eq!(strip_blank_edges("\n\n"), "");
        assert_eq!(strip_blank_edges(""), "");
    }
}
