//! Frontmatter: finding the `---` block.
//!
//! A note has frontmatter when its first line (after an optional BOM) is `---` and a later line
//! is `---` (trailing spaces and tabs allowed on both). Such a leading block is always
//! frontmatter, even if the author meant horizontal rules.

use super::text::BOM;

/// Where the frontmatter block sits in a note's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Block {
    /// Byte offset of the opening fence (1 after a UTF-8 BOM would be 3, else 0).
    pub start: usize,
    /// Byte offset of the first YAML byte (the line after the opening fence).
    pub yaml_start: usize,
    /// Byte offset of the closing fence line.
    pub yaml_end: usize,
    /// Byte offset just past the closing fence line (and its newline, if any).
    pub end: usize,
    /// 0-based line index of the closing fence.
    pub close_line: usize,
}

fn is_fence(line: &str) -> bool {
    line.trim_end_matches(['\n', '\r']).trim_end_matches([' ', '\t']) == "---"
}

/// Finds the frontmatter block, if the note has one.
pub fn locate(text: &str) -> Option<Block> {
    let start = if text.starts_with(BOM) { BOM.len_utf8() } else { 0 };
    let mut lines = text[start..].split_inclusive('\n');
    let first = lines.next()?;
    if !is_fence(first) || !first.ends_with('\n') {
        return None;
    }
    let yaml_start = start + first.len();
    let mut offset = yaml_start;
    for (idx, line) in lines.enumerate() {
        if is_fence(line) {
            return Some(Block {
                start,
                yaml_start,
                yaml_end: offset,
                end: offset + line.len(),
                close_line: idx + 1,
            });
        }
        offset += line.len();
    }
    None
}

/// Splits a note into its head (the block and the blank lines after it) and its body.
/// A note without frontmatter has an empty head (a BOM, if present, stays in the head).
pub fn split(text: &str) -> (&str, &str) {
    let Some(block) = locate(text) else {
        let bom = if text.starts_with(BOM) { BOM.len_utf8() } else { 0 };
        return text.split_at(bom);
    };
    let mut end = block.end;
    for line in text[block.end..].split_inclusive('\n') {
        if line.trim().is_empty() && line.ends_with('\n') {
            end += line.len();
        } else {
            break;
        }
    }
    text.split_at(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_block_after_a_bom() {
        let text = "\u{feff}---\ntitle: x\n---  \n\nBody\n";
        let block = locate(text).unwrap();
        assert_eq!(&text[block.yaml_start..block.yaml_end], "title: x\n");
        assert_eq!(block.close_line, 2);
        assert_eq!(split(text).1, "Body\n");
    }

    #[test]
    fn empty_block_and_unclosed_block() {
        assert!(locate("---\n---\nx\n").is_some());
        assert!(locate("---\ntitle: x\n").is_none());
        assert!(locate("--- \nx\n---").is_some());
        assert!(locate("x\n---\n---\n").is_none());
        assert_eq!(split("# T\n"), ("", "# T\n"));
    }
}
