//! A section patch as one typed value, built once from what a surface received and checked
//! when it is built.
//!
//! Every surface (REST's 1.x headers, its 2.x JSON instruction and raw-content mode, MCP
//! `vault_patch`, the CLI, the web editor) translates its own syntax into a [`PatchSpec`], the
//! patch as the caller asked for it. [`PatchSpec::build`] is the one place that decides the
//! rules: what a delete is, what a move takes (a heading target, operation replace and nothing
//! else), what `within` takes (a heading target, no marker scope, no creation). What it gives
//! back, a [`PatchRequest`], holds together by construction, and `Vault::patch` (in
//! `ops/patch.rs`) executes it with the pure edits of `edit.rs`. The one rule that needs the
//! note's resolved name for its message, the `empty_content` refusal, is [`Edit::refuse_empty`],
//! which the executor applies before any branch runs (a section, a block, a body block).
//!
//! Refusals name the fields as the caller spelt them ([`Spelling`]), so a 2.x client reads
//! `createTargetIfMissing` and an MCP client `create_target_if_missing`.

use super::edit::{Operation, Slot};
use super::headings::{self, Scope};
use super::text;
use crate::error::{Error, ErrorCode, Result};

/// How a surface names the fields a refusal talks about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spelling {
    /// The scope field (`target_scope`, `scope`, `Target-Scope`).
    pub(crate) scope: &'static str,
    /// The field that creates a missing heading target.
    pub(crate) create: &'static str,
    /// The body-block index.
    pub(crate) within: &'static str,
    /// Where a move goes.
    pub(crate) destination: &'static str,
    /// The operation.
    pub(crate) operation: &'static str,
    /// The new Markdown.
    pub(crate) content: &'static str,
    /// Whether a creation flag beside `within` is let pass (the target must then exist). Agents
    /// send `create_target_if_missing: true` by habit, and before the rules were decided here
    /// the tool surfaces ignored it there; the plugin's formats always refused it.
    pub(crate) within_overlooks_create: bool,
}

impl Spelling {
    /// MCP `vault_patch`, the CLI and the web editor: the tool's argument names.
    pub const TOOL: Spelling = Spelling {
        scope: "target_scope",
        create: "create_target_if_missing",
        within: "within",
        destination: "destination",
        operation: "operation",
        content: "content",
        within_overlooks_create: true,
    };
    /// The Local REST API plugin's 2.x JSON instruction.
    pub(crate) const JSON: Spelling = Spelling {
        scope: "scope",
        create: "createTargetIfMissing",
        within: "within",
        destination: "destination",
        operation: "operation",
        content: "content",
        within_overlooks_create: false,
    };
    /// The plugin's header formats (1.x, and raw-content mode, whose body is the content).
    pub(crate) const HEADERS: Spelling = Spelling {
        scope: "Target-Scope",
        create: "Create-Target-If-Missing",
        within: "Within",
        destination: "Destination header",
        operation: "Operation",
        content: "the body",
        within_overlooks_create: false,
    };
}

/// Where a moved section goes: under `parent` (`None`: the top level of the note), at `slot`
/// among its subsections.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MoveTo {
    /// The new parent heading's target, as `A::B`.
    pub(crate) parent: Option<String>,
    /// The place among the parent's subsections.
    pub(crate) slot: Slot,
}

/// A patch as a surface received it, every field as sent, before any rule is applied.
#[derive(Debug, Clone)]
pub struct PatchSpec {
    /// The `A::B` heading target, or `^id` for a block.
    pub(crate) target: String,
    /// Replace, prepend or append.
    pub(crate) operation: Operation,
    /// The caller asked to delete the region (the plugin's `delete`): a replace with nothing,
    /// meant as such, so it needs no `allow_empty`.
    pub(crate) delete: bool,
    /// Which part of the section the operation applies to.
    pub(crate) scope: Scope,
    /// The new Markdown.
    pub(crate) content: String,
    /// A replace with empty content is refused (`empty_content`) unless this is set.
    pub(crate) allow_empty: bool,
    /// A heading target that names no heading is created first (`edit::with_target`).
    pub(crate) create_missing: bool,
    /// An append or prepend whose content is already in the target is refused
    /// (`already_exists`), so a retried request does not add it twice.
    pub(crate) reject_if_present: bool,
    /// One body block of the section, by position (`edit::patch_within`), instead of the
    /// whole section.
    pub(crate) within: Option<i64>,
    /// The content's heading levels are relative to where it lands (`edit::relevel`): `#`
    /// under a content target becomes its direct child. Off, the levels are written as sent.
    pub(crate) relative_levels: bool,
    /// Move the target heading's section here instead of editing it (`edit::move_section`).
    pub(crate) move_to: Option<MoveTo>,
}

impl PatchSpec {
    /// A spec with only a target, an operation and content; the other fields at their
    /// defaults (no delete, content scope, nothing allowed or created, no move).
    pub fn new(target: &str, operation: Operation, content: &str) -> PatchSpec {
        PatchSpec {
            target: target.to_string(),
            operation,
            delete: false,
            scope: Scope::Content,
            content: content.to_string(),
            allow_empty: false,
            create_missing: false,
            reject_if_present: false,
            within: None,
            relative_levels: false,
            move_to: None,
        }
    }

    /// The patch this spec asks for, or the refusal of a spec that does not hold together,
    /// worded in the caller's `spelling`. Every refusal here is `invalid_request`.
    pub fn build(self, spelling: &Spelling) -> Result<PatchRequest> {
        let s = spelling;
        let invalid = |msg: String| Err(Error::new(ErrorCode::InvalidRequest, msg));
        let is_block = headings::block_target(&self.target).is_some();
        if let Some(to) = self.move_to {
            // A move carries the section as it is: anything else would be two edits at once.
            let mixed = if self.delete {
                Some(format!("{} delete", s.operation))
            } else if self.operation != Operation::Replace {
                Some(format!("{} {}", s.operation, self.operation))
            } else if !self.content.trim().is_empty() {
                Some(s.content.to_string())
            } else if self.within.is_some() {
                Some(s.within.to_string())
            } else if self.create_missing {
                Some(s.create.to_string())
            } else {
                None
            };
            if let Some(what) = mixed {
                return invalid(format!(
                    "a move ({}) carries the section as it is, so it takes {} replace and \
                     nothing else; drop {what}, or edit the section in a second request",
                    s.destination, s.operation
                ));
            }
            if is_block {
                return invalid(format!(
                    "`{}` is a block, and only a heading's section can be moved ({}); name a \
                     heading",
                    self.target, s.destination
                ));
            }
            return Ok(PatchRequest { target: self.target, action: Action::Move(to) });
        }
        let region = match self.within {
            None => Region::Section { create_missing: self.create_missing },
            Some(_) if self.scope == Scope::Marker => {
                return invalid(format!(
                    "{} addresses a body block, so a within-refined target has no marker; use \
                     {} content or markerAndContent",
                    s.within, s.scope
                ));
            }
            Some(_) if self.create_missing && !s.within_overlooks_create => {
                return invalid(format!(
                    "{} and {} cannot be combined: a created section has no blocks to index",
                    s.within, s.create
                ));
            }
            Some(_) if is_block => {
                return invalid(format!(
                    "{} indexes the body blocks of a heading's section; `{}` is a block, so \
                     patch it directly",
                    s.within, self.target
                ));
            }
            Some(index) => Region::Block(index),
        };
        let (operation, content, allow_empty) = if self.delete {
            (Operation::Replace, String::new(), true)
        } else {
            (self.operation, self.content, self.allow_empty)
        };
        let edit = Edit {
            operation,
            scope: self.scope,
            content,
            allow_empty,
            region,
            reject_if_present: self.reject_if_present,
            relative_levels: self.relative_levels,
        };
        Ok(PatchRequest { target: self.target, action: Action::Edit(edit) })
    }
}

/// A patch that holds together, made only by [`PatchSpec::build`] and executed by
/// `Vault::patch`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchRequest {
    /// The `A::B` heading target, or `^id` for a block.
    pub(super) target: String,
    /// What the patch does there.
    pub(super) action: Action,
}

impl PatchRequest {}

/// What a patch does to its target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Action {
    /// Writes content into the target's region.
    Edit(Edit),
    /// Moves the target heading's section, unchanged but re-levelled.
    Move(MoveTo),
}

/// An edit of a target's region.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Edit {
    pub(super) operation: Operation,
    pub(super) scope: Scope,
    pub(super) content: String,
    pub(super) allow_empty: bool,
    pub(super) region: Region,
    pub(super) reject_if_present: bool,
    pub(super) relative_levels: bool,
}

/// Which lines an edit addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Region {
    /// The heading's section or the block the target names (with `scope`); a heading target
    /// that names no heading is created first when `create_missing`.
    Section { create_missing: bool },
    /// One body block of a heading's section, by position (0 first, -1 last).
    Block(i64),
}

impl Edit {
    /// The `empty_content` refusal: a replace with nothing but blank lines removes what it
    /// replaces (the section's content, the heading line, the heading and its section, or a
    /// body block), so it needs `allow_empty`. One rule for every region; `target` and `note`
    /// (the resolved path) name what would go.
    pub(super) fn refuse_empty(&self, target: &str, note: &str) -> Result<()> {
        if self.operation != Operation::Replace || self.allow_empty || !is_empty(&self.content) {
            return Ok(());
        }
        let (region, what) = match (self.region, self.scope) {
            (Region::Block(index), _) => {
                (format!("block {index} of `{target}`"), "delete the block")
            }
            (Region::Section { .. }, Scope::Content) => {
                (format!("`{target}`"), "empty the section")
            }
            (Region::Section { .. }, Scope::Marker) => {
                (format!("`{target}`"), "delete the heading line")
            }
            (Region::Section { .. }, Scope::MarkerAndContent) => {
                (format!("`{target}`"), "delete the heading and its section")
            }
        };
        Err(Error::new(
            ErrorCode::EmptyContent,
            format!(
                "a replace of {region} in `{note}` with no content would {what}; pass the new \
                 content, or set allow_empty to true if that is what you mean"
            ),
        ))
    }
}

/// True for content that holds nothing but blank lines: a replace with it removes what it
/// replaces, which is why it needs `allow_empty`.
pub(crate) fn is_empty(content: &str) -> bool {
    text::strip_blank_edges(&text::normalize(content)).is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(target: &str, op: Operation, content: &str) -> PatchSpec {
        PatchSpec::new(target, op, content)
    }

    fn refusal(spec: PatchSpec, spelling: &Spelling) -> String {
        let e = spec.build(spelling).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidRequest, "{}", e.message());
        e.message().to_string()
    }

    fn moving(mut s: PatchSpec) -> PatchSpec {
        s.move_to = Some(MoveTo { parent: None, slot: Slot::Last });
        s
    }

    #[test]
    fn a_move_takes_a_heading_and_operation_replace_and_nothing_else() {
        assert!(moving(spec("A", Operation::Replace, "")).build(&Spelling::TOOL).is_ok());
        let op = refusal(moving(spec("A", Operation::Append, "")), &Spelling::TOOL);
        assert!(op.contains("drop operation append"), "{op}");
        let content = refusal(moving(spec("A", Operation::Replace, "x")), &Spelling::JSON);
        assert!(content.contains("drop content"), "{content}");
        let mut within = moving(spec("A", Operation::Replace, ""));
        within.within = Some(0);
        assert!(refusal(within, &Spelling::HEADERS).contains("drop Within"));
        let mut create = moving(spec("A", Operation::Replace, ""));
        create.create_missing = true;
        assert!(refusal(create, &Spelling::JSON).contains("drop createTargetIfMissing"));
        let mut delete = moving(spec("A", Operation::Replace, ""));
        delete.delete = true;
        assert!(refusal(delete, &Spelling::JSON).contains("drop operation delete"));
        let block = refusal(moving(spec("^b", Operation::Replace, "")), &Spelling::TOOL);
        assert!(block.contains("`^b` is a block"), "{block}");
    }

    #[test]
    fn within_takes_a_heading_without_marker_scope_or_creation() {
        let at = |target: &str| {
            let mut s = spec(target, Operation::Append, "x");
            s.within = Some(0);
            s
        };
        assert!(at("A").build(&Spelling::TOOL).is_ok());
        let mut marker = at("A");
        marker.scope = Scope::Marker;
        assert!(refusal(marker, &Spelling::JSON).contains("within-refined target has no marker"));
        let mut create = at("A");
        create.create_missing = true;
        assert_eq!(
            refusal(create, &Spelling::JSON),
            "within and createTargetIfMissing cannot be combined: a created section has no \
             blocks to index"
        );
        assert!(refusal(at("^b"), &Spelling::TOOL).contains("`^b` is a block"));
        let mut habit = at("A");
        habit.create_missing = true;
        assert!(habit.build(&Spelling::TOOL).is_ok(), "the tools let a habitual flag pass");
    }

    #[test]
    fn a_delete_is_a_replace_with_nothing_that_needs_no_allow_empty() {
        let mut s = spec("A", Operation::Append, "ignored");
        s.delete = true;
        let built = s.build(&Spelling::JSON).unwrap();
        let Action::Edit(edit) = &built.action else { panic!("{built:?}") };
        assert_eq!(
            (edit.operation, edit.content.as_str(), edit.allow_empty),
            (Operation::Replace, "", true)
        );
        assert!(edit.refuse_empty("A", "n.md").is_ok());
    }

    #[test]
    fn every_region_refuses_an_empty_replace_alike_unless_allowed() {
        let cases = [
            (
                None,
                Scope::Content,
                "a replace of `A` in `n.md` with no content would empty the section",
            ),
            (None, Scope::Marker, "would delete the heading line"),
            (None, Scope::MarkerAndContent, "would delete the heading and its section"),
            (
                Some(0),
                Scope::Content,
                "a replace of block 0 of `A` in `n.md` with no content would delete the block",
            ),
            (Some(-1), Scope::MarkerAndContent, "block -1 of `A`"),
        ];
        for (within, scope, says) in cases {
            for content in ["", "\n\n", "  \n"] {
                let mut s = spec("A", Operation::Replace, content);
                (s.within, s.scope) = (within, scope);
                let Action::Edit(edit) = s.clone().build(&Spelling::TOOL).unwrap().action else {
                    panic!()
                };
                let e = edit.refuse_empty("A", "n.md").unwrap_err();
                assert_eq!(e.code(), ErrorCode::EmptyContent, "{within:?} {scope}");
                assert!(e.message().contains(says), "{}", e.message());
                assert!(e.message().ends_with("set allow_empty to true if that is what you mean"));
                s.allow_empty = true;
                let Action::Edit(edit) = s.build(&Spelling::TOOL).unwrap().action else { panic!() };
                assert!(edit.refuse_empty("A", "n.md").is_ok());
            }
        }
        for op in [Operation::Append, Operation::Prepend] {
            let Action::Edit(edit) = spec("A", op, "").build(&Spelling::TOOL).unwrap().action
            else {
                panic!()
            };
            assert!(edit.refuse_empty("A", "n.md").is_ok(), "{op}");
        }
    }
}
