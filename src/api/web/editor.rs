//! The editor's routes: open a note or one section for editing, and save it so that nobody's
//! words are lost.
//!
//! A save carries the etag the editor was opened at and the text it was shown (`base`). A
//! section save refused because the file changed is tried once more when that section still
//! reads as `base` (someone changed another part of the note, which the section replace leaves
//! alone); otherwise the page shows the conflict: what the other change was, both versions,
//! and three ways on (`Resolve`). Keeping yours when it would delete lines now on disk asks
//! first, naming them. The writes themselves are the service's (`tools::patch`,
//! `tools::write`): the page adds no rule of its own to what REST and MCP do.

use std::collections::HashMap;

use axum::extract::{Form, Query, State};
use axum::http::StatusCode;
use axum::response::Response;

use super::{Params, Web, blocking, error_response, html, page, pages, param, redirect, url};
use crate::error::{Error, ErrorCode, Result};
use crate::service::{self as tools, Target};

/// What the person chose on the form: a plain save, or one of the conflict view's ways on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Resolve {
    /// Save the editor's text at the etag it carries.
    Save,
    /// The version on disk, then the lines of yours it does not have.
    Both,
    /// Leave the version on disk as it is; write nothing.
    Theirs,
    /// Save the editor's text over the version on disk; `confirmed` once the lines it deletes
    /// were named and accepted.
    Mine { confirmed: bool },
}

impl Resolve {
    fn of(f: &HashMap<String, String>) -> Resolve {
        match param(f, "resolve") {
            Some("both") => Resolve::Both,
            Some("theirs") => Resolve::Theirs,
            Some("mine") => Resolve::Mine { confirmed: param(f, "confirm") == Some("1") },
            _ => Resolve::Save,
        }
    }
}

/// The note or section an editor form names.
#[derive(Clone)]
struct Spot {
    vault: Option<String>,
    path: String,
    section: Option<String>,
}

/// Form text as the vault keeps it: browsers send line breaks as CRLF.
fn form_text(f: &HashMap<String, String>, name: &str) -> String {
    f.get(name).cloned().unwrap_or_default().replace("\r\n", "\n")
}

/// The lines of `on_disk` (blank ones aside) that `mine` no longer has, each as often as it
/// is missing: what keeping yours would delete.
fn lost_lines(on_disk: &str, mine: &str) -> Vec<String> {
    let mut have: HashMap<&str, usize> = HashMap::new();
    for l in mine.lines() {
        *have.entry(l.trim_end()).or_default() += 1;
    }
    let mut lost = Vec::new();
    for l in on_disk.lines().map(str::trim_end).filter(|l| !l.trim().is_empty()) {
        match have.get_mut(l) {
            Some(n) if *n > 0 => *n -= 1,
            _ => lost.push(l.to_string()),
        }
    }
    lost
}

/// "Keep both": the version on disk whole, then the lines of yours it does not have (in your
/// order), so every word of either survives.
fn keep_both(theirs: &str, mine: &str) -> String {
    let extra = lost_lines(mine, theirs);
    if extra.is_empty() {
        return theirs.to_string();
    }
    let mut out = theirs.trim_end_matches('\n').to_string();
    out.push('\n');
    for l in extra {
        out.push_str(&l);
        out.push('\n');
    }
    out
}

/// The frontmatter key a save will stamp, when it will: the vault stamps and the note has
/// properties to stamp.
fn stamp(
    web: &Web,
    vault: &str,
    frontmatter: &serde_json::Map<String, serde_json::Value>,
) -> Option<String> {
    let key = web.engine.vaults().get(Some(vault)).ok()?.timestamp_key().to_string();
    (!key.is_empty() && !frontmatter.is_empty()).then_some(key)
}

async fn read(web: &Web, s: &Spot) -> Result<crate::vault::NoteRead> {
    let engine = web.engine.clone();
    let args = tools::ReadArgs {
        vault: s.vault.clone(),
        path: s.path.clone(),
        section: s.section.clone(),
    };
    blocking(move || tools::read(&*engine, &Target::default(), args)).await
}

/// Saves `text` at `etag`: a section through the patch tool, a whole note through write.
async fn save(
    web: &Web,
    s: &Spot,
    text: String,
    etag: Option<String>,
) -> Result<crate::vault::Change> {
    let engine = web.engine.clone();
    let s = s.clone();
    blocking(move || {
        let t = Target::default();
        match s.section {
            Some(target) => tools::patch(
                &*engine,
                &t,
                tools::PatchArgs {
                    vault: s.vault,
                    path: s.path,
                    target,
                    operation: crate::vault::edit::Operation::Replace,
                    content: text,
                    allow_empty: false,
                    target_scope: crate::vault::headings::Scope::MarkerAndContent,
                    // The editor replaces a whole section it was shown: it never creates one,
                    // refuses on presence, or edits a single block of it.
                    create_target_if_missing: false,
                    reject_if_present: false,
                    within: None,
                    // The editor shows a section with its levels as written.
                    relative_levels: false,
                    destination: None,
                },
                etag.as_deref(),
            ),
            None => tools::write(
                &*engine,
                &t,
                tools::WriteArgs { vault: s.vault, path: s.path, content: text, overwrite: true },
                etag.as_deref(),
            ),
        }
    })
    .await
}

/// `GET /ui/edit?vault=&path=[&section=]`: the editor over the note or one section.
pub(crate) async fn edit_form(State(web): State<Web>, Query(q): Params) -> Response {
    let (vault, path) = match super::vault_and_path(&q) {
        Ok(x) => x,
        Err(e) => return error_response(&e, true),
    };
    let spot = Spot { vault, path, section: param(&q, "section").map(str::to_string) };
    match read(&web, &spot).await {
        // The save would be refused (`is_document`); say so before the text is typed.
        Ok(r) if !r.editable => error_response(
            &Error::new(
                ErrorCode::IsDocument,
                format!(
                    "{} is a filed document or a canvas; the web page shows it read-only",
                    r.path
                ),
            ),
            true,
        ),
        Ok(r) => page(
            "Edit",
            pages::edit(&pages::EditPage {
                vault: &r.vault,
                path: &r.path,
                section: r.section.as_deref(),
                text: &r.content,
                base: &r.content,
                etag: &r.etag,
                conflict: None,
                lost: None,
                stamp: stamp(&web, &r.vault, &r.frontmatter).as_deref(),
            }),
        ),
        Err(e) => error_response(&e, true),
    }
}

/// `POST /ui/edit`: saves with the etag the editor was opened at, or resolves a conflict the
/// way the person chose (see the module header).
pub(crate) async fn edit(
    State(web): State<Web>,
    Form(f): Form<HashMap<String, String>>,
) -> Response {
    let (vault, path) = match super::vault_and_path(&f) {
        Ok(x) => x,
        Err(e) => return error_response(&e, true),
    };
    let spot = Spot { vault, path, section: param(&f, "section").map(str::to_string) };
    let mut etag = param(&f, "etag").map(str::to_string);
    let text = form_text(&f, "text");
    // The text the editor was shown: after a conflict, the version that was on disk then.
    let base = form_text(&f, "base");
    let how = Resolve::of(&f);
    let mut to_save = text.clone();
    match how {
        Resolve::Theirs => {
            let v = spot.vault.clone().unwrap_or_default();
            return redirect(&url::note(&v, &spot.path));
        }
        Resolve::Mine { confirmed: false } => {
            let lost = lost_lines(&base, &text);
            if !lost.is_empty() {
                return confirm_loss(&web, &spot, &text, &base, etag.as_deref(), &lost).await;
            }
        }
        Resolve::Both => match read(&web, &spot).await {
            Ok(now) => {
                to_save = keep_both(&now.content, &text);
                etag = Some(now.etag);
            }
            Err(e) => return error_response(&e, true),
        },
        Resolve::Save | Resolve::Mine { confirmed: true } => {}
    }
    match save(&web, &spot, to_save.clone(), etag).await {
        Ok(change) => saved(&change),
        Err(e) if e.code() == ErrorCode::Conflict => {
            let now = match read(&web, &spot).await {
                Ok(now) => now,
                Err(e) => return error_response(&e, true),
            };
            // Only another part of the note changed: the section reads as it did, so the
            // replace is saved again at the new version (and a second change in between is
            // a conflict like any other).
            let untouched = now.content.replace("\r\n", "\n") == base;
            if how == Resolve::Save && spot.section.is_some() && untouched {
                match save(&web, &spot, to_save, Some(now.etag.clone())).await {
                    Ok(change) => return saved(&change),
                    Err(e) if e.code() == ErrorCode::Conflict => {}
                    Err(e) => return error_response(&e, true),
                }
                return conflict(&web, &spot, &text, &base).await;
            }
            conflict_page(&web, &now, &text, &base)
        }
        Err(e) => error_response(&e, true),
    }
}

fn saved(change: &crate::vault::Change) -> Response {
    redirect(&format!("{}&saved=1", url::note(&change.vault, &change.path)))
}

/// The conflict view over what is on disk now.
async fn conflict(web: &Web, spot: &Spot, text: &str, base: &str) -> Response {
    match read(web, spot).await {
        Ok(now) => conflict_page(web, &now, text, base),
        Err(e) => error_response(&e, true),
    }
}

fn conflict_page(web: &Web, now: &crate::vault::NoteRead, text: &str, base: &str) -> Response {
    let other = crate::vault::diff::unified(base, &now.content);
    html(
        StatusCode::CONFLICT,
        "Conflict",
        true,
        pages::edit(&pages::EditPage {
            vault: &now.vault,
            path: &now.path,
            section: now.section.as_deref(),
            text,
            // From here on the version on disk is what yours is checked against.
            base: &now.content,
            etag: &now.etag,
            conflict: Some(pages::Conflict { theirs: &now.content, other: &other }),
            lost: None,
            stamp: stamp(web, &now.vault, &now.frontmatter).as_deref(),
        }),
    )
}

/// Keeping yours would delete lines now on disk: ask first, naming them.
async fn confirm_loss(
    web: &Web,
    spot: &Spot,
    text: &str,
    on_disk: &str,
    etag: Option<&str>,
    lost: &[String],
) -> Response {
    let now = match read(web, spot).await {
        Ok(now) => now,
        Err(e) => return error_response(&e, true),
    };
    html(
        StatusCode::CONFLICT,
        "Keep yours?",
        true,
        pages::edit(&pages::EditPage {
            vault: &now.vault,
            path: &now.path,
            section: now.section.as_deref(),
            text,
            base: on_disk,
            // The etag the conflict was shown at: a further change is a new conflict.
            etag: etag.unwrap_or_default(),
            conflict: None,
            lost: Some(lost),
            stamp: stamp(web, &now.vault, &now.frontmatter).as_deref(),
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lines_keeping_yours_would_delete_are_named_each_time_they_are_missing() {
        let disk = "## A\none\n\nother writer\ntwo\ntwo\n";
        let mine = "## A\none\ntwo\nmy line\n";
        assert_eq!(lost_lines(disk, mine), ["other writer", "two"]);
        assert!(lost_lines("a\n\nb\n", "b\na\n").is_empty());
    }

    #[test]
    fn keeping_both_keeps_the_version_on_disk_and_adds_the_lines_only_yours_has() {
        let both = keep_both("## A\none\nfrom them\n", "## A\none\nfrom me\n");
        assert_eq!(both, "## A\none\nfrom them\nfrom me\n");
        assert_eq!(keep_both("same\n", "same\n"), "same\n");
    }

    #[test]
    fn the_form_names_the_way_on() {
        let f = |pairs: &[(&str, &str)]| -> HashMap<String, String> {
            pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
        };
        assert_eq!(Resolve::of(&f(&[])), Resolve::Save);
        assert_eq!(Resolve::of(&f(&[("resolve", "both")])), Resolve::Both);
        assert_eq!(Resolve::of(&f(&[("resolve", "theirs")])), Resolve::Theirs);
        assert_eq!(Resolve::of(&f(&[("resolve", "mine")])), Resolve::Mine { confirmed: false });
        let sure = f(&[("resolve", "mine"), ("confirm", "1")]);
        assert_eq!(Resolve::of(&sure), Resolve::Mine { confirmed: true });
    }
}
