//! Section patches: `Vault::patch` executes a built [`PatchRequest`] (its rules were decided
//! when it was built, in `vault/patch.rs`): an edit of one heading's section, a block or a
//! body block, or a move of a heading's section within its note.

use crate::error::{Error, ErrorCode, Result};
use crate::vault::edit::{self, Operation};
use crate::vault::patch::{Action, Edit, MoveTo, PatchRequest, Region};
use crate::vault::path::Target;
use crate::vault::{Vault, text};

use super::Change;

impl Vault {
    /// Replaces, prepends or appends to one heading's section (or block, or body block), or
    /// moves a heading's section, as `req` says.
    pub fn patch(&self, raw: &str, req: &PatchRequest, expected: Option<&str>) -> Result<Change> {
        let target = self.existing_note(raw, "patched")?;
        match &req.action {
            Action::Move(to) => self.move_section(&target, &req.target, to, expected),
            Action::Edit(edit) => self.edit_region(&target, &req.target, edit, expected),
        }
    }

    /// An edit of the region `name` names: the empty-content rule first, whatever the region.
    fn edit_region(
        &self,
        target: &Target,
        name: &str,
        edit: &Edit,
        expected: Option<&str>,
    ) -> Result<Change> {
        edit.refuse_empty(name, &target.rel)?;
        let _guard = self.lock();
        let old = self.existing_text(target, expected)?;
        let base = match edit.region {
            Region::Section { create_missing: true } => edit::with_target(&old, &target.rel, name)?,
            _ => old.clone(),
        };
        let within = matches!(edit.region, Region::Block(_));
        let (content, warnings) = if edit.relative_levels {
            let offset = edit::level_offset(&base, &target.rel, name, edit.scope, within);
            edit::relevel(&edit.content, offset)
        } else {
            (edit.content.clone(), Vec::new())
        };
        let wanted = text::normalize(&content);
        let wanted = text::strip_blank_edges(&wanted);
        if edit.reject_if_present && edit.operation != Operation::Replace && !wanted.is_empty() {
            let region = text::normalize(&edit::section_text(&base, &target.rel, name)?);
            if region.contains(wanted) {
                return Err(Error::new(
                    ErrorCode::AlreadyExists,
                    format!(
                        "`{name}` in {} already holds that content, and the request asked to \
                         refuse rather than add it twice; nothing was changed",
                        target.rel
                    ),
                ));
            }
        }
        let patched = match edit.region {
            Region::Block(index) => {
                let (text, path) = edit::patch_within(
                    &base,
                    &target.rel,
                    name,
                    index,
                    edit.operation,
                    edit.scope,
                    &content,
                )?;
                edit::Patched { text, path, replaced: None }
            }
            Region::Section { .. } => {
                edit::patch(&base, &target.rel, name, edit.operation, edit.scope, &content)?
            }
        };
        let w = self.write_note(target, &old, &patched.text, true)?;
        let resolved = patched.path;
        let verb = match edit.operation {
            Operation::Replace => "replaced",
            Operation::Prepend => "prepended to",
            Operation::Append => "appended to",
        };
        let mut change = self.finish(target, format!("{verb} '{resolved}' in {}", target.rel), w);
        change.replaced = patched.replaced;
        change.warnings = warnings;
        Ok(change)
    }

    /// Moves a heading's section under another heading (a patch with a destination).
    fn move_section(
        &self,
        target: &Target,
        name: &str,
        to: &MoveTo,
        expected: Option<&str>,
    ) -> Result<Change> {
        let _guard = self.lock();
        let old = self.existing_text(target, expected)?;
        let moved = edit::move_section(&old, &target.rel, name, to.parent.as_deref(), &to.slot)?;
        let w = self.write_note(target, &old, &moved.text, true)?;
        let under = moved.under.map_or("the top level".to_string(), |p| format!("'{p}'"));
        let message = format!("moved '{}' under {under} in {}", moved.from, target.rel);
        let mut change = self.finish(target, message, w);
        change.warnings = moved.warnings;
        Ok(change)
    }
}
