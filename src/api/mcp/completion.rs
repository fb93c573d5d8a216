//! `completion/complete`: what a client offers while a person types an argument.
//!
//! The resource template's `vault` completes to the vault names the connection reaches and its
//! `path` to the resources of the chosen vault (the `vault` already given, else the
//! connection's or the default vault). A prompt's argument completes by what it takes
//! ([`Takes`]), which [`prompt_argument`] decides from the prompt's and the argument's names:
//! the one place a prompt's arguments are tied to their completions. A heading path
//! (`A::B::C`) completes from the outline of the note the `path` argument names; no resource
//! argument takes one (a resource is a whole file), so only prompts reach it.
//!
//! Matches are ranked, each tier in the candidates' own order: the typed text as a prefix,
//! then as the start of a later part (a file name, a subheading), then anywhere, then its
//! characters in order (a fuzzy match); case is ignored. At most [`MAX_VALUES`] are sent, with
//! `total` and `hasMore` saying how many matched.

use rmcp::model::{CompleteRequestParams, CompletionInfo, Reference};

use super::resources::{self, TEMPLATE};
use crate::engine::Engine;
use crate::error::{Error, ErrorCode, Result};
use crate::service::{self as tools, Target};

/// The most values one answer carries (the protocol's own bound).
pub(crate) const MAX_VALUES: usize = CompletionInfo::MAX_VALUES;

/// What an argument takes, and so what completes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Takes {
    /// A vault's name.
    Vault,
    /// A vault-relative path of a note, document or image.
    Path,
    /// A heading path (`A::B::C`) in the note the `path` argument names.
    Heading,
    /// A template of the vault's templates folder, by its name there (`note_from_template`).
    Template,
}

/// What a prompt's argument takes: the one place prompts' arguments are tied to completions.
/// An argument of a prompt's own (`note_from_template`'s `template`) is matched on
/// `(prompt, argument)` first; otherwise an argument takes what its name says (`vault`;
/// `path` or `note`; `section` or `heading`), the names the tools use for the same things; any
/// other argument completes to nothing.
pub(crate) fn prompt_argument(prompt: &str, argument: &str) -> Option<Takes> {
    match (prompt, argument) {
        ("note_from_template", "template") => Some(Takes::Template),
        (_, "vault") => Some(Takes::Vault),
        (_, "path" | "note") => Some(Takes::Path),
        (_, "section" | "heading") => Some(Takes::Heading),
        _ => None,
    }
}

/// What the template's argument takes.
fn template_argument(argument: &str) -> Option<Takes> {
    match argument {
        "vault" => Some(Takes::Vault),
        "path" => Some(Takes::Path),
        _ => None,
    }
}

/// `completion/complete`.
pub(crate) fn complete(
    e: &Engine,
    t: &Target,
    req: &CompleteRequestParams,
) -> Result<CompletionInfo> {
    let takes = match &req.r#ref {
        Reference::Resource(r) if r.uri == TEMPLATE => template_argument(&req.argument.name),
        Reference::Resource(r) => {
            return Err(Error::new(
                ErrorCode::InvalidRequest,
                format!("'{}' is not a resource template here; the template is {TEMPLATE}", r.uri),
            ));
        }
        Reference::Prompt(p) => prompt_argument(&p.name, &req.argument.name),
        _ => None,
    };
    let given =
        |name: &str| req.context.as_ref().and_then(|c| c.get_argument(name)).map(String::as_str);
    let candidates = match takes {
        None => Vec::new(),
        Some(Takes::Vault) => {
            tools::reachable(e, t)?.iter().map(|v| v.name().to_string()).collect()
        }
        Some(Takes::Path) => paths(e, t, given("vault"))?,
        Some(Takes::Heading) => match given("path").or(given("note")) {
            Some(path) => headings(e, t, given("vault"), path)?,
            None => Vec::new(),
        },
        Some(Takes::Template) => super::prompts::template_names(e, t, given("vault"))?,
    };
    let (values, total) = ranked(&candidates, &req.argument.value, MAX_VALUES);
    let total_sent = u32::try_from(total).unwrap_or(u32::MAX);
    CompletionInfo::with_pagination(values, Some(total_sent), total > MAX_VALUES)
        .map_err(|e| Error::new(ErrorCode::InternalError, e))
}

/// The resource paths of the vault named (else the connection's, else the default one).
fn paths(e: &Engine, t: &Target, vault: Option<&str>) -> Result<Vec<String>> {
    let vault = vault.map(str::trim).filter(|v| !v.is_empty());
    let reachable = tools::reachable(e, t)?;
    let v = match vault {
        Some(name) => reachable.iter().find(|v| v.name() == name),
        None => reachable.iter().find(|v| t.vault.as_deref().is_none_or(|b| v.name() == b)),
    };
    // What the client's grant cannot see is never suggested.
    Ok(v.map(|v| {
        resources::files(v)
            .into_iter()
            .map(|f| f.path)
            .filter(|p| !tools::hidden(v, &t.grant, p))
            .collect()
    })
    .unwrap_or_default())
}

/// The heading paths of a note, as `vault_map` shows them.
fn headings(e: &Engine, t: &Target, vault: Option<&str>, path: &str) -> Result<Vec<String>> {
    let args = tools::MapArgs { vault: vault.map(String::from), path: path.to_string() };
    match tools::map(e, t, args) {
        Ok(map) => Ok(map.headings.into_iter().map(|h| h.path).collect()),
        // A path still being typed names no note yet: nothing to complete, not an error.
        Err(err) if err.code() == ErrorCode::NotFound => Ok(Vec::new()),
        Err(err) => Err(err),
    }
}

/// The candidates matching `typed`, best tier first, at most `max`; and how many matched.
pub(crate) fn ranked(candidates: &[String], typed: &str, max: usize) -> (Vec<String>, usize) {
    let typed = typed.to_lowercase();
    let mut tiers: [Vec<&String>; 4] = Default::default();
    for c in candidates {
        if let Some(tier) = tier(&c.to_lowercase(), &typed) {
            tiers[tier].push(c);
        }
    }
    let total = tiers.iter().map(Vec::len).sum();
    let values = tiers.into_iter().flatten().take(max).cloned().collect();
    (values, total)
}

/// How well `candidate` matches `typed` (both lowercase): 0 a prefix, 1 the start of a later
/// part (after `/`, `::`, a space or a dash), 2 anywhere, 3 its characters in order.
fn tier(candidate: &str, typed: &str) -> Option<usize> {
    if candidate.starts_with(typed) {
        return Some(0);
    }
    let starts_part = candidate.match_indices(typed).any(|(i, _)| {
        let before = &candidate[..i];
        before.ends_with(['/', ':', ' ', '-', '_'])
    });
    if starts_part {
        return Some(1);
    }
    if candidate.contains(typed) {
        return Some(2);
    }
    let mut rest = candidate.chars();
    typed.chars().all(|t| rest.any(|c| c == t)).then_some(3)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn prefixes_come_first_then_later_parts_then_anywhere_then_fuzzy() {
        let c = names(&[
            "Work/Boiler notes.md",
            "Home/Boiler.md",
            "Boilerplate.md",
            "Home/Reboiler.md",
            "Bills/Oil.md",
            "Garden.md",
        ]);
        let (values, total) = ranked(&c, "boil", 100);
        assert_eq!(
            values,
            [
                "Boilerplate.md",
                "Work/Boiler notes.md",
                "Home/Boiler.md",
                "Home/Reboiler.md",
                "Bills/Oil.md"
            ]
        );
        assert_eq!(total, 5);
        let (values, _) = ranked(&c, "", 100);
        assert_eq!(values, c, "nothing typed offers everything, in order");
    }

    #[test]
    fn at_most_the_maximum_is_sent_and_the_total_says_how_many_matched() {
        let c: Vec<String> = (0..250).map(|i| format!("Notes/{i:03}.md")).collect();
        let (values, total) = ranked(&c, "notes/", MAX_VALUES);
        assert_eq!((values.len(), total), (MAX_VALUES, 250));
        assert_eq!(values[0], "Notes/000.md");
    }

    #[test]
    fn heading_paths_match_on_any_of_their_parts() {
        let c = names(&["Plan", "Plan::Risks", "Plan::Budget::Risks", "Notes"]);
        let (values, _) = ranked(&c, "risk", 100);
        assert_eq!(values, ["Plan::Risks", "Plan::Budget::Risks"]);
    }

    #[test]
    fn a_prompt_argument_completes_by_the_name_it_shares_with_the_tools() {
        assert_eq!(prompt_argument("any", "vault"), Some(Takes::Vault));
        assert_eq!(prompt_argument("any", "note"), Some(Takes::Path));
        assert_eq!(prompt_argument("any", "section"), Some(Takes::Heading));
        assert_eq!(prompt_argument("any", "date"), None);
        assert_eq!(prompt_argument("note_from_template", "template"), Some(Takes::Template));
        assert_eq!(prompt_argument("any", "template"), None);
        assert_eq!(template_argument("path"), Some(Takes::Path));
        assert_eq!(template_argument("section"), None);
    }
}
