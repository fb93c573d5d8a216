//! Section patches: `Vault::patch` edits one heading's section, block or body block, or moves
//! a heading's section within its note.

use crate::error::{Error, ErrorCode, Result};
use crate::vault::edit::{self, Operation};
use crate::vault::headings::Scope;
use crate::vault::path::Target;
use crate::vault::{Vault, text};

use super::Change;

/// A section patch, as every surface spells it.
#[derive(Debug, Clone)]
pub struct PatchRequest<'a> {
    /// The `A::B` heading target.
    pub target: &'a str,
    /// Replace, prepend or append.
    pub operation: Operation,
    /// Which part of the section the operation applies to.
    pub scope: Scope,
    /// The new Markdown.
    pub content: &'a str,
    /// A replace with empty content is refused (`empty_content`) unless this is set.
    pub allow_empty: bool,
    /// A heading target that names no heading is created first (`edit::with_target`).
    pub create_missing: bool,
    /// An append or prepend whose content is already in the target is refused
    /// (`already_exists`), so a retried request does not add it twice.
    pub reject_if_present: bool,
    /// One body block of the section, by position (`edit::patch_within`), instead of the
    /// whole section.
    pub within: Option<i64>,
    /// The content's heading levels are relative to where it lands (`edit::relevel`): `#`
    /// under a content target becomes its direct child. Off, the levels are written as sent.
    pub relative_levels: bool,
    /// Move the target heading's section here instead of editing it (`edit::move_section`):
    /// the new parent heading (`None`: the top level) and the place among its subsections.
    pub move_to: Option<(Option<&'a str>, edit::Slot)>,
}

impl Vault {
    /// Replaces, prepends or appends to one heading's section.
    pub fn patch(
        &self,
        raw: &str,
        req: &PatchRequest<'_>,
        expected: Option<&str>,
    ) -> Result<Change> {
        let target = self.existing_note(raw, "patched")?;
        if let Some((parent, slot)) = &req.move_to {
            return self.move_section(&target, req, *parent, slot, expected);
        }
        let _guard = self.lock();
        let old = self.existing_text(&target, expected)?;
        let base = if req.create_missing {
            edit::with_target(&old, &target.rel, req.target)?
        } else {
            old.clone()
        };
        let (content, warnings) = if req.relative_levels {
            let offset =
                edit::level_offset(&base, &target.rel, req.target, req.scope, req.within.is_some());
            edit::relevel(req.content, offset)
        } else {
            (req.content.to_string(), Vec::new())
        };
        let wanted = text::normalize(&content);
        let wanted = text::strip_blank_edges(&wanted);
        if req.reject_if_present && req.operation != Operation::Replace && !wanted.is_empty() {
            let region = text::normalize(&edit::section_text(&base, &target.rel, req.target)?);
            if region.contains(wanted) {
                return Err(Error::new(
                    ErrorCode::AlreadyExists,
                    format!(
                        "`{}` in {} already holds that content, and the request asked to refuse \
                         rather than add it twice; nothing was changed",
                        req.target, target.rel
                    ),
                ));
            }
        }
        let patched = if let Some(index) = req.within {
            let (text, path) = edit::patch_within(
                &base,
                &target.rel,
                req.target,
                index,
                req.operation,
                req.scope,
                &content,
                req.allow_empty,
            )?;
            edit::Patched { text, path, replaced: None }
        } else {
            edit::patch(
                &base,
                &target.rel,
                req.target,
                req.operation,
                req.scope,
                &content,
                req.allow_empty,
            )?
        };
        let w = self.write_note(&target, &old, &patched.text, true)?;
        let resolved = patched.path;
        let verb = match req.operation {
            Operation::Replace => "replaced",
            Operation::Prepend => "prepended to",
            Operation::Append => "appended to",
        };
        let mut change = self.finish(&target, format!("{verb} '{resolved}' in {}", target.rel), w);
        change.replaced = patched.replaced;
        change.warnings = warnings;
        Ok(change)
    }

    /// Moves a heading's section under another heading (a patch with `move_to`). Only a plain
    /// replace with no content asks for a move: anything else would mean two edits at once,
    /// and it is refused before the note is read.
    fn move_section(
        &self,
        target: &Target,
        req: &PatchRequest<'_>,
        parent: Option<&str>,
        slot: &edit::Slot,
        expected: Option<&str>,
    ) -> Result<Change> {
        let mixed = if req.operation != Operation::Replace {
            Some(format!("operation {}", req.operation))
        } else if !req.content.trim().is_empty() {
            Some("content".to_string())
        } else if req.within.is_some() {
            Some("within".to_string())
        } else if req.create_missing {
            Some("create_target_if_missing".to_string())
        } else {
            None
        };
        if let Some(what) = mixed {
            return Err(Error::new(
                ErrorCode::InvalidRequest,
                format!(
                    "a move (destination) carries the section as it is, so it takes operation \
                     replace and nothing else; drop {what}, or edit the section in a second \
                     request"
                ),
            ));
        }
        let _guard = self.lock();
        let old = self.existing_text(target, expected)?;
        let moved = edit::move_section(&old, &target.rel, req.target, parent, slot)?;
        let w = self.write_note(target, &old, &moved.text, true)?;
        let under = moved.under.map_or("the top level".to_string(), |p| format!("'{p}'"));
        let message = format!("moved '{}' under {under} in {}", moved.from, target.rel);
        let mut change = self.finish(target, message, w);
        change.warnings = moved.warnings;
        Ok(change)
    }
}
