//! Embeds: what an Obsidian embed (`![[Note]]`, `![[Note#Heading]]`, `![[Note#^block]]`,
//! `![[boiler.png|300]]`) shows. [`found`] decides it once from the embed's resolved target:
//! an attachment, the part of a note the fragment names ([`part`], through the one target
//! resolver `headings::locate`), a refusal (the note embeds itself, or names a part it lacks),
//! or nothing there. [`Size`] reads an embedded image's `|300` or `|300x200`.
//!
//! It reads no files: the caller hands in a reader. Rendering belongs to `api::render`.

use crate::error::Result;
use crate::vault::attachment::{self, AttachmentType};
use crate::vault::frontmatter;
use crate::vault::headings::{self, Scope};

/// The part of a note an embed shows: its Markdown, and the file line its first line is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Part {
    /// The part's text: the body (frontmatter left out), a heading's section with its heading
    /// line, or a block's lines.
    pub(crate) text: String,
    /// The 1-based file line of the part's first line.
    pub(crate) first_line: usize,
}

/// What an embed shows, decided from where its target resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Found {
    /// The target is no file of the vault. Never an offer to create a note: an embed names
    /// something to show, which is missing.
    Missing,
    /// An attachment (an image, audio or video), by vault path.
    Attachment { path: String, kind: AttachmentType },
    /// A note's part, by the note's vault path.
    Note { path: String, part: Part },
    /// Shown as a link with the reason: a note embedding itself (a cycle), a part the note
    /// lacks, or a file that is neither a note nor an attachment (a filed document).
    Refused { path: String, why: String },
}

/// What the embed of `resolved` (the target's vault path, `None` when it is not there) with
/// `fragment` shows inside the note at `own`. `read` gives a note's whole text by vault path.
pub(crate) fn found(
    own: &str,
    resolved: Option<String>,
    fragment: Option<&str>,
    read: &dyn Fn(&str) -> Result<String>,
) -> Found {
    let Some(path) = resolved else { return Found::Missing };
    if let Some(kind) = attachment::kind_of(&path) {
        return Found::Attachment { path, kind };
    }
    if !path.to_ascii_lowercase().ends_with(".md") {
        return Found::Refused { path, why: "not a note".to_string() };
    }
    // One level deep is the caller's rule; a note showing itself would never end, so it is
    // refused here whatever the depth.
    if path == own {
        return Found::Refused { path, why: "a note cannot embed itself".to_string() };
    }
    let text = match read(&path) {
        Ok(t) => t,
        Err(e) => return Found::Refused { path, why: e.message().to_string() },
    };
    match part(&text, fragment, &path) {
        Ok(part) => Found::Note { path, part },
        Err(e) => Found::Refused { path, why: e.message().to_string() },
    }
}

/// The part of `text` (a whole note file) that `fragment` names: none, the body; `^id`, the
/// block; `Heading#Sub`, the heading's section, heading line included, as Obsidian shows it.
pub(crate) fn part(text: &str, fragment: Option<&str>, note: &str) -> Result<Part> {
    let fragment = fragment.map(str::trim).filter(|f| !f.is_empty());
    let Some(fragment) = fragment else {
        let (_, body) = frontmatter::split(text);
        let first_line = text[..text.len() - body.len()].matches('\n').count() + 1;
        return Ok(Part { text: body.to_string(), first_line });
    };
    // Obsidian writes a heading path with `#`; the resolver reads `::`.
    let target =
        fragment.split('#').map(str::trim).filter(|p| !p.is_empty()).collect::<Vec<_>>().join("::");
    let all = headings::headings(text);
    let blocks = headings::blocks(text);
    let anchor = headings::locate(&all, &blocks, &target, note)?;
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let range = headings::anchor_lines(lines.len(), &all, anchor, Scope::MarkerAndContent);
    Ok(Part { text: lines[range.clone()].concat(), first_line: range.start + 1 })
}

/// An embedded image's size as Obsidian writes it after `|`: a width (`300`) or a width and
/// height (`300x200`), in pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Size {
    pub(crate) width: u32,
    pub(crate) height: Option<u32>,
}

impl Size {
    /// The size `s` names, or `None` when it is not one (then it is the image's alt text).
    pub(crate) fn parse(s: &str) -> Option<Size> {
        let s = s.trim();
        let number = |n: &str| n.parse::<u32>().ok().filter(|&n| n > 0);
        match s.split_once('x') {
            Some((w, h)) => Some(Size { width: number(w)?, height: Some(number(h)?) }),
            None => Some(Size { width: number(s)?, height: None }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{Error, ErrorCode};

    const NOTE: &str = "---\ntags: [x]\n---\n# Boiler\n\nIntro.\n\n## Service\n\nOnce a year. ^yearly\n\n\
                        ### Parts\n\nValve.\n\n## Gas\n\nMeter.\n\n- a\n- b ^item-b\n";

    #[test]
    fn an_embed_names_the_body_a_section_with_its_subsections_or_a_block() {
        let cases: &[(Option<&str>, &str, usize)] = &[
            (None, "# Boiler\n\nIntro.\n", 4),
            (Some("Service"), "## Service\n\nOnce a year. ^yearly\n\n### Parts\n\nValve.\n\n", 8),
            (Some("Boiler#Gas"), "## Gas\n\nMeter.\n\n- a\n- b ^item-b\n", 16),
            (Some("^yearly"), "Once a year. ^yearly\n", 10),
            (Some("^item-b"), "- b ^item-b\n", 21),
        ];
        for (fragment, starts, line) in cases {
            let p = part(NOTE, *fragment, "Boiler.md").unwrap();
            assert!(p.text.starts_with(starts) || p.text == *starts, "{fragment:?}: {:?}", p.text);
            assert_eq!(p.first_line, *line, "{fragment:?}");
        }
        assert!(!part(NOTE, None, "Boiler.md").unwrap().text.contains("tags:"));
        let err = part(NOTE, Some("Nowhere"), "Boiler.md").unwrap_err();
        assert_eq!(err.code(), ErrorCode::NoSuchHeading);
        assert!(part(NOTE, Some("^gone"), "Boiler.md").is_err());
    }

    #[test]
    fn found_tells_attachments_notes_missing_and_refused_embeds_apart() {
        let read = |p: &str| -> Result<String> {
            match p {
                "Boiler.md" | "Home.md" => Ok(NOTE.to_string()),
                _ => Err(Error::new(ErrorCode::NotFound, format!("no `{p}`"))),
            }
        };
        let f = |resolved: Option<&str>, fragment: Option<&str>| {
            found("Home.md", resolved.map(str::to_string), fragment, &read)
        };
        assert_eq!(f(None, None), Found::Missing);
        assert!(matches!(f(Some("a/boiler.png"), None), Found::Attachment { .. }));
        assert!(matches!(f(Some("Boiler.md"), Some("^yearly")), Found::Note { .. }));
        assert!(
            matches!(f(Some("Home.md"), None), Found::Refused { why, .. } if why.contains("itself"))
        );
        assert!(matches!(f(Some("Boiler.md"), Some("Nope")), Found::Refused { .. }));
        assert!(matches!(f(Some("scan.pdf"), None), Found::Refused { .. }));
    }

    #[test]
    fn an_image_size_is_a_width_or_width_x_height_and_anything_else_is_alt_text() {
        assert_eq!(Size::parse("300"), Some(Size { width: 300, height: None }));
        assert_eq!(Size::parse(" 300x200 "), Some(Size { width: 300, height: Some(200) }));
        for alt in ["", "boiler", "300x", "x200", "0", "-5", "3.5"] {
            assert_eq!(Size::parse(alt), None, "{alt}");
        }
    }
}
