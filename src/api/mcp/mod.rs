//! The MCP surface: the vault tools as an rmcp server, over streamable HTTP and stdio.
//!
//! Each tool deserialises its arguments into the structs of `crate::service`, runs the shared
//! function on the blocking pool and renders the outcome as prose a model can act on.
//! `vault_search` first waits its turn in `limits::Searches`, the queue REST searches share. A
//! refusal becomes a tool error (`isError`) whose text starts with the code and ends with what
//! to do next. Arguments too: a missing or wrong-typed argument, or a name outside a closed
//! set, is `Refused (invalid_request)` naming the argument and what it takes (`Parameters`);
//! only an unknown tool is left to rmcp.
//!
//! Over HTTP, which vault a call addresses and its write scope come from the URL
//! (`/v/<name>/mcp/only/<path>`): the router puts a [`Target`] into the request's extensions and
//! rmcp hands the request parts to the tool. Over stdio there is no URL, so the default vault
//! and no scope apply. This module does not authenticate: the HTTP guard has done that.

mod arguments;
mod budget;
mod handler;
mod logging;
mod prompts;

use std::sync::Arc;

use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{tool, tool_router};

mod output;
mod schema;

use arguments::Parameters;
use budget::{ANSWER_BUDGET, Paged};
use output::{changed, paged, typed};
use serde_json::Value;

use super::limits::{Images, Searches};
use super::prose::*;
use crate::engine::Engine;
use crate::error::{Error, ErrorCode, Result};
use crate::search::SearchResponse;
use crate::service::{self as tools, Target};
use crate::vault::{Change, NoteRead};

mod completion;
mod resources;
mod rows;

/// What the server tells a model before its first call.
pub(crate) const INSTRUCTIONS: &str = "\
This server reads, searches and edits one or more Markdown vaults (Obsidian-style notes).
- To find something, call vault_search first, then vault_read with `section` set to the section \
of the hit, rather than reading whole notes. For an exact string (a phone number, a plate) or \
to prove one is absent, call vault_grep.
- Before moving or deleting a note, vault_links shows what links to it.
- Before vault_patch, call vault_map on the note and copy a heading path from it (`A::B::C`); \
a unique last part is enough. `A > B` works too, and so does the section a search result \
names. Two headings with one path are told apart by line: `A::B@12`.
- Paths are relative to the vault folder. To read or edit a note, its name alone (`Boiler`) or \
an alias also works when no other note answers to it, and so do links' spellings (`/A/B%20C`, \
no `.md`, other case); a miss names the nearest paths, an ambiguous name every candidate. A new \
note is created at the path as written. An absolute path works only inside the vault folder.
- Do not check whether a note exists before writing: vault_write refuses to overwrite unless \
`overwrite` is set, and vault_append can create with `create_if_missing`.
- Do not edit index.md: it is generated. Fix a note's title or description instead.
- Every write stamps the note's frontmatter `timestamp` itself; do not set it by hand.
- Every write answers with the new etag and a diff of what changed: no need to read back.
- Appending a `- item` to a list or a `| row |` to a table continues it; other content is \
separated by one blank line. vault_patch needs `operation`; an empty replace needs `allow_empty`.
- For a review of the vault, vault_expiries lists what falls due (lapsed dates first), \
vault_callouts the open todos and warnings, vault_maintenance broken links and other problems; \
vault_tags lists the tags, and with `tag` the notes under one (nested tags included); \
vault_tag_rename renames or merges one in every note.
- A refused call says why and what to do next; follow that advice instead of retrying as is.";

/// The vault tools as an MCP server.
#[derive(Clone)]
pub(crate) struct VaultMcp {
    engine: Arc<Engine>,
    /// The search queue; over HTTP the one REST searches wait in too.
    searches: Searches,
    /// The image queue; over HTTP the one the page's fitted images wait in too.
    images: Images,
    /// The session's log level (`logging/setLevel`).
    logging: logging::Logging,
}

impl VaultMcp {
    /// A server over this engine whose searches wait in `searches` and image previews in
    /// `images`.
    pub(crate) fn new(engine: Arc<Engine>, searches: Searches, images: Images) -> VaultMcp {
        VaultMcp { engine, searches, images, logging: logging::Logging::default() }
    }

    /// Runs a shared tool function on the blocking pool with the request's target.
    async fn run<T, F>(&self, ctx: &RequestContext<RoleServer>, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Engine, &Target) -> Result<T> + Send + 'static,
    {
        let target = target(ctx);
        let engine = self.engine.clone();
        tokio::task::spawn_blocking(move || f(&engine, &target)).await.unwrap_or_else(|e| {
            Err(Error::new(ErrorCode::InternalError, format!("the tool failed unexpectedly: {e}")))
        })
    }

    /// [`VaultMcp::run`] for work that decodes an image, in one of the server's image turns.
    async fn run_decoding<T, F>(&self, ctx: &RequestContext<RoleServer>, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Engine, &Target) -> Result<T> + Send + 'static,
    {
        let (target, engine) = (target(ctx), self.engine.clone());
        self.images.run(move || f(&engine, &target)).await
    }
}

/// The vault and write scope the request's URL named; none over stdio.
fn target(ctx: &RequestContext<RoleServer>) -> Target {
    ctx.extensions
        .get::<http::request::Parts>()
        .and_then(|p| p.extensions.get::<Target>().cloned())
        .unwrap_or_default()
}

/// The arguments, or the refusal that answers the call.
macro_rules! take {
    ($args:expr) => {
        match $args {
            Ok(a) => a,
            Err(e) => return refusal(&e),
        }
    };
}

/// A refusal as a tool error a model can read.
fn refusal(e: &Error) -> CallToolResult {
    if e.code() == ErrorCode::InternalError {
        tracing::error!("a tool failed with internal_error: {}", e.message());
    }
    let text = match e.code() {
        ErrorCode::NotReady => e.message().to_string(),
        code => format!("Refused ({code}): {}", e.message()),
    };
    CallToolResult::error(vec![ContentBlock::text(text)])
}

fn answer<T>(r: Result<T>, render: impl FnOnce(T) -> String) -> CallToolResult {
    match r {
        Ok(v) => CallToolResult::success(vec![ContentBlock::text(render(v))]),
        Err(e) => refusal(&e),
    }
}

/// A write's confirmation: the sentence, the new etag, the replaced text and the diff, so the
/// caller knows what changed without reading the note back.
pub(crate) fn render_change(c: Change) -> String {
    let mut out = c.message;
    if let Some(etag) = &c.etag {
        out.push_str(&format!("\netag: {etag}"));
    }
    if let Some(r) = &c.replaced {
        if r.is_empty() {
            out.push_str("\n\nReplaced: nothing (the section was empty).");
        } else {
            out.push_str(&format!("\n\nReplaced:\n```\n{r}```"));
        }
    }
    match c.diff.as_deref() {
        Some("") => out.push_str("\n\nNo line changed."),
        Some(d) => out.push_str(&format!("\n\nChanged:\n```diff\n{d}```")),
        None => {}
    }
    for w in &c.warnings {
        out.push_str(&format!("\n\nWarning ({}): {}", w.code, w.message));
    }
    out
}

/// A read: the text, after a line saying which note was read when the caller named it some
/// other way (an absolute path, a name, an alias).
fn render_read(r: NoteRead) -> String {
    match r.reading.sentence(&r.path) {
        Some(s) => format!("({s})\n\n{}", r.content),
        None => r.content,
    }
}

/// Search results as Markdown: one block per passage, the passage text in full.
/// Search results as prose. A hit outside `default_vault` is shown as `vault:path`, the form
/// every path argument accepts, so the follow-up read reaches the same note.
pub(crate) fn render_search(query: &str, r: &SearchResponse, default_vault: &str) -> String {
    if r.results.is_empty() {
        let mut out = format!(
            "No passages match \"{query}\". Try other words, a shorter query, vault_grep for an \
             exact string, or vault_list to browse.\n"
        );
        for n in &r.notices {
            out.push_str(&format!("\nNote: {n}\n"));
        }
        return out;
    }
    let n = r.results.len();
    let mut out = format!("{n} result{} for \"{query}\":\n", if n == 1 { "" } else { "s" });
    for (i, h) in r.results.iter().enumerate() {
        if h.vault == default_vault {
            out.push_str(&format!("\n### {}. {}", i + 1, h.path));
        } else {
            out.push_str(&format!("\n### {}. {}:{}", i + 1, h.vault, h.path));
        }
        if !h.heading.is_empty() {
            out.push_str(&format!(", section {}", h.heading));
        }
        out.push('\n');
        let how = match h.matched.as_str() {
            "both" => "matched by meaning and by words",
            "dense" => "matched by meaning",
            _ => "matched by words",
        };
        let mut line = format!("_{how}");
        if h.pinned {
            line.push_str(", pinned: contains every query word, which are rare in the vault");
        }
        if h.document {
            // A line number of extracted text means nothing to someone holding the PDF.
            line.push_str(" - from a filed document (read it whole with vault_read)");
        } else {
            line.push_str(&format!(" - line {}", h.line));
        }
        line.push_str(&format!(" - score {:.3}", h.explain.score));
        line.push_str("_\n\n");
        out.push_str(&line);
        out.push_str(h.text.trim());
        out.push('\n');
    }
    for n in &r.notices {
        out.push_str(&format!("\nNote: {n}\n"));
    }
    out
}

#[tool_router]
impl VaultMcp {
    /// Search the vault by meaning and by exact words. Returns the best passages with their
    /// note path, heading and line. Follow up with vault_read on the path and `section` set to
    /// the heading shown.
    #[tool(name = "vault_search",
        output_schema = output::search(), annotations(read_only_hint = true, open_world_hint = false))]
    async fn vault_search(
        &self,
        Parameters(args): Parameters<tools::SearchArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let a = take!(args);
        let query = a.query.clone();
        let default =
            self.engine.vaults().get(None).map(|v| v.name().to_string()).unwrap_or_default();
        let turn = match self.searches.enter().await {
            Ok(turn) => turn,
            Err(e) => return refusal(&e),
        };
        // The turn moves into the blocking task: the core is in use until the search ends.
        let searched = self.run(&ctx, move |e, t| {
            let _turn = turn;
            tools::search(e, t, a)
        });
        typed(
            searched.await,
            |r| crate::wire::search(r, false),
            |r| render_search(&query, &r, &default),
        )
    }

    /// Read a note, or only one section of it (`section`: a heading path from vault_map such
    /// as "Plan::Risks", or a unique heading name). Returns the Markdown text. A filed PDF
    /// reads whole, as the text extracted from it. An image (png, jpg, gif, webp) returns the
    /// image, at most 1024 pixels a side; other attachments a sentence saying what they are.
    /// A note over 60,000 characters (the answer budget) comes in parts: the first with its
    /// outline (each heading's path and lines); `offset` (in lines) reads on.
    #[tool(name = "vault_read", annotations(read_only_hint = true, open_world_hint = false))]
    async fn vault_read(
        &self,
        Parameters(args): Parameters<Paged<tools::ReadArgs>>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let Paged { args: a, offset } = take!(args);
        if crate::vault::attachment::kind_of(&a.path).is_some() {
            let decodes = super::preview::decodes(&a.path);
            let read = move |e: &Engine, t: &Target| super::preview::read(e, t, a);
            let shown = if decodes {
                self.run_decoding(&ctx, read).await
            } else {
                self.run(&ctx, read).await
            };
            return shown.map_or_else(|e| refusal(&e), super::preview::content);
        }
        let read = self.run(&ctx, move |e, t| tools::read(e, t, a)).await;
        if let Ok(r) = &read
            && let Some(parts) = ANSWER_BUDGET.read(r, r.reading.sentence(&r.path), offset)
        {
            return CallToolResult::success(parts);
        }
        answer(read, render_read)
    }

    /// List a folder of the vault: subfolders first, then files with size and modification
    /// time. An empty path lists the vault root.
    /// Answers over 60,000 characters (the answer budget) come in parts; send the `offset` the
    /// closing line names to read on.
    #[tool(name = "vault_list",
        output_schema = output::listing(), annotations(read_only_hint = true, open_world_hint = false))]
    async fn vault_list(
        &self,
        Parameters(args): Parameters<Paged<tools::ListArgs>>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let Paged { args: a, offset } = take!(args);
        let listing = self.run(&ctx, move |e, t| tools::list(e, t, a)).await;
        paged(listing, "vault_list", offset, crate::wire::listing, |l| l.render())
    }

    /// Show a note's frontmatter and the full path of every heading (`A::B::C`). Call this
    /// before vault_patch and copy the target from it. For a filed PDF, shows its extraction
    /// verdict (pages, whether text or OCR was used, why nothing was found).
    /// Answers over 60,000 characters (the answer budget) come in parts; send the `offset` the
    /// closing line names to read on.
    #[tool(name = "vault_map",
        output_schema = output::map(), annotations(read_only_hint = true, open_world_hint = false))]
    async fn vault_map(
        &self,
        Parameters(args): Parameters<Paged<tools::MapArgs>>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let Paged { args: a, offset } = take!(args);
        let map = self.run(&ctx, move |e, t| tools::map(e, t, a)).await;
        paged(map, "vault_map", offset, crate::wire::map, |m| m.render())
    }

    /// Edit one section of a note under a heading: replace, prepend to or append to its
    /// content (subsections included), or change the heading line itself. `target` is a
    /// heading path from vault_map or search ("A::B" or "A > B"). `operation` is required.
    /// Append and prepend join with one blank line, or none when the content continues the
    /// list or table it meets (a "- item" under a list, a "| row |" under a table). A replace
    /// with empty content is refused unless `allow_empty` is true. With target_scope marker,
    /// content is the new heading line ("## New name"), or bare text to keep the level. To move
    /// a section under another heading, send operation replace, no content and `destination`
    /// ({"parent": "A::B", "place": "last"}). The
    /// reply gives the new etag, the replaced text and a diff of what changed.
    #[tool(
        name = "vault_patch",
        output_schema = output::change(),
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn vault_patch(
        &self,
        Parameters(args): Parameters<tools::PatchArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let a = take!(args);
        changed(self.run(&ctx, move |e, t| tools::patch(e, t, a, None)).await)
    }

    /// Replace an exact piece of text in a note (literal, case-sensitive). `count` is how
    /// many occurrences you expect; the edit is refused if the note has more or fewer.
    #[tool(
        name = "vault_replace_text",
        output_schema = output::change(),
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn vault_replace_text(
        &self,
        Parameters(args): Parameters<tools::ReplaceTextArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let a = take!(args);
        changed(self.run(&ctx, move |e, t| tools::replace_text(e, t, a, None)).await)
    }

    /// Add Markdown at the end of a note. It joins with one blank line, or none when it
    /// continues the list or table the note ends with (a "- item" after a list, a "| row |"
    /// after a table). With `create_if_missing`, a missing note is created with this content.
    /// The reply gives the new etag and a diff of what changed.
    #[tool(
        name = "vault_append",
        output_schema = output::change(),
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn vault_append(
        &self,
        Parameters(args): Parameters<tools::AppendArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let a = take!(args);
        changed(self.run(&ctx, move |e, t| tools::append(e, t, a, None)).await)
    }

    /// Create a note with the given content (frontmatter included). An existing note is only
    /// replaced when `overwrite` is true.
    #[tool(
        name = "vault_write",
        output_schema = output::change(),
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn vault_write(
        &self,
        Parameters(args): Parameters<tools::WriteArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let a = take!(args);
        changed(self.run(&ctx, move |e, t| tools::write(e, t, a, None)).await)
    }

    /// Replace everything after a note's frontmatter; the frontmatter stays as it is.
    #[tool(
        name = "vault_set_body",
        output_schema = output::change(),
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn vault_set_body(
        &self,
        Parameters(args): Parameters<tools::SetBodyArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let a = take!(args);
        changed(self.run(&ctx, move |e, t| tools::set_body(e, t, a, None)).await)
    }

    /// Set one frontmatter key to a string, number, boolean or list, or remove it with
    /// `delete`; or add items to and remove items from a list key (tags) with `add`/`remove`,
    /// without rewriting the list. `expires` is checked before writing: a list of
    /// {"date": "YYYY-MM-DD", "what": "..."} items, or "none" plus an expires_reason key. The
    /// rest of the frontmatter is left byte for byte.
    #[tool(
        name = "vault_set_frontmatter",
        output_schema = output::change(),
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn vault_set_frontmatter(
        &self,
        Parameters(args): Parameters<tools::SetFrontmatterArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let a = take!(args);
        changed(self.run(&ctx, move |e, t| tools::set_frontmatter(e, t, a, None)).await)
    }

    /// Delete a note or a filed document. It moves to the vault's `.trash` folder (as in
    /// Obsidian, so it can be restored) unless `permanent` is true; links to it in other notes
    /// are left as they are.
    #[tool(
        name = "vault_delete",
        output_schema = output::change(),
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn vault_delete(
        &self,
        Parameters(args): Parameters<tools::DeleteArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let a = take!(args);
        changed(self.run(&ctx, move |e, t| tools::delete(e, t, a, None)).await)
    }

    /// Move or rename a note, document, canvas or attachment (an image keeps its bytes). Links
    /// to it in other notes and canvases are repointed unless `update_links` is false. The
    /// destination must not exist.
    #[tool(
        name = "vault_move",
        output_schema = output::change(),
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn vault_move(
        &self,
        Parameters(args): Parameters<tools::MoveArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let a = take!(args);
        changed(self.run(&ctx, move |e, t| tools::move_file(e, t, a, None)).await)
    }

    /// Create a folder, and any missing parent folders.
    #[tool(
        name = "vault_create_folder",
        output_schema = output::change(),
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn vault_create_folder(
        &self,
        Parameters(args): Parameters<tools::CreateFolderArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let a = take!(args);
        changed(self.run(&ctx, move |e, t| tools::create_folder(e, t, a)).await)
    }

    /// Delete a folder. Only an empty one, unless `recursive` is true.
    #[tool(
        name = "vault_delete_folder",
        output_schema = output::change(),
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn vault_delete_folder(
        &self,
        Parameters(args): Parameters<tools::DeleteFolderArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let a = take!(args);
        changed(self.run(&ctx, move |e, t| tools::delete_folder(e, t, a)).await)
    }

    /// How much of each vault is searchable: notes, documents and chunks indexed, files that
    /// failed or gave no text (and why), files skipped by rule, entries out of step with the
    /// disk, and the last build. Use it when a search misses something that should be there.
    /// Answers over 60,000 characters (the answer budget) come in parts; send the `offset` the
    /// closing line names to read on.
    #[tool(name = "vault_status",
        output_schema = output::status(), annotations(read_only_hint = true, open_world_hint = false))]
    async fn vault_status(
        &self,
        Parameters(args): Parameters<Paged<tools::StatusArgs>>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let Paged { args: a, offset } = take!(args);
        let report = self.run(&ctx, move |e, t| tools::status(e, t, a)).await;
        paged(report, "vault_status", offset, crate::wire::status, render_status)
    }

    /// Every dated commitment in the vault (the `expires` frontmatter lists), one row per date,
    /// oldest first, with days remaining; lapsed dates are always included. Also the notes
    /// dismissed with `expires: none`, how many notes track nothing, and malformed entries.
    /// Answers over 60,000 characters (the answer budget) come in parts; send the `offset` the
    /// closing line names to read on.
    #[tool(name = "vault_expiries",
        output_schema = output::expiries(), annotations(read_only_hint = true, open_world_hint = false))]
    async fn vault_expiries(
        &self,
        Parameters(args): Parameters<Paged<tools::ExpiriesArgs>>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let Paged { args: a, offset } = take!(args);
        let within = a.within;
        let report = self.run(&ctx, move |e, t| tools::expiries(e, t, a)).await;
        paged(
            report,
            "vault_expiries",
            offset,
            |r| crate::wire::expiries(r, within),
            render_expiries,
        )
    }

    /// The open callouts in the notes (`> [!todo]`, `> [!warning]` and the like), most urgent
    /// first, each with its note and line.
    /// Answers over 60,000 characters (the answer budget) come in parts; send the `offset` the
    /// closing line names to read on.
    #[tool(name = "vault_callouts",
        output_schema = output::callouts(), annotations(read_only_hint = true, open_world_hint = false))]
    async fn vault_callouts(
        &self,
        Parameters(args): Parameters<Paged<tools::CalloutsArgs>>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let Paged { args: a, offset } = take!(args);
        let started = std::time::Instant::now();
        let report = self.run(&ctx, move |e, t| {
            let name = tools::vault(e, t, a.vault.as_deref())?.name().to_string();
            let open = e.config().callouts.open_types.clone();
            tools::callouts(e, t, a).map(|r| (name, open, r))
        });
        paged(
            report.await,
            "vault_callouts",
            offset,
            |(name, open, r)| {
                crate::wire::callouts(name, open, r, started.elapsed().as_millis() as u64)
            },
            |(_, _, r)| render_callouts(r),
        )
    }

    /// The vault's tags (frontmatter and inline `#tags`) as a tree with how many notes carry
    /// each, a nested tag counting for its parents; with `tag`, the notes carrying it or a tag
    /// nested under it ("project" finds "#project/alpha").
    /// Answers over 60,000 characters (the answer budget) come in parts; send the `offset` the
    /// closing line names to read on.
    #[tool(name = "vault_tags",
        output_schema = output::tags(), annotations(read_only_hint = true, open_world_hint = false))]
    async fn vault_tags(
        &self,
        Parameters(args): Parameters<Paged<tools::TagsArgs>>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let Paged { args: a, offset } = take!(args);
        let report = self.run(&ctx, move |e, t| {
            let name = tools::vault(e, t, a.vault.as_deref())?.name().to_string();
            tools::tags(e, t, a).map(|r| (name, r))
        });
        let data = |(name, r): &(String, _)| crate::wire::tags(name, r);
        paged(report.await, "vault_tags", offset, data, |(_, r)| r.render())
    }

    /// Rename a tag in every note, inline `#tags` and frontmatter `tags:` alike, the tags
    /// nested under it with it ("project" to "work" turns "#project/alpha" into "#work/alpha");
    /// renaming onto an existing tag merges the two. One all-or-nothing change that keeps every
    /// other byte; answers with each changed note and its count. `dry_run` lists them only.
    /// Past 60,000 characters (the answer budget) the list stops, its totals kept.
    #[tool(
        name = "vault_tag_rename",
        output_schema = output::tag_renamed(),
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn vault_tag_rename(
        &self,
        Parameters(args): Parameters<tools::TagRenameArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let a = take!(args);
        let renamed = self.run(&ctx, move |e, t| tools::rename_tag(e, t, a)).await;
        match renamed {
            Ok(r) => {
                // Before a rename (a dry run) the notes are under the old tag, after it the new.
                let tag = if r.dry_run { &r.from } else { &r.to };
                let rest = format!("vault_tags with `tag: {tag:?}` lists every note under it");
                let (text, data) = ANSWER_BUDGET.write(
                    r.render(),
                    crate::wire::tag_renamed(&r),
                    "notes",
                    2,
                    &rest,
                );
                output::success(text, data)
            }
            Err(e) => refusal(&e),
        }
    }

    /// Run the vault's health checks (broken and ambiguous links, unpatchable duplicate
    /// headings, unreadable frontmatter, unlinked or empty documents, malformed expiry dates,
    /// and the vault's own .scripts checks) and report the findings. Changes nothing.
    /// Answers over 60,000 characters (the answer budget) come in parts; send the `offset` the
    /// closing line names to read on.
    #[tool(
        name = "vault_maintenance",
        output_schema = output::maintenance(),
        annotations(read_only_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn vault_maintenance(
        &self,
        Parameters(args): Parameters<Paged<tools::MaintenanceArgs>>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let Paged { args: a, offset } = take!(args);
        let vault = a.vault.clone();
        if a.list_only {
            let checks = self.run(&ctx, move |e, t| tools::checks(e, t, vault.as_deref())).await;
            return paged(
                checks,
                "vault_maintenance",
                offset,
                |c| crate::wire::checks(c),
                render_checks,
            );
        }
        let run = self.run(&ctx, move |e, t| tools::maintenance(e, t, vault.as_deref())).await;
        paged(run, "vault_maintenance", offset, output::maintenance_run, |run| run.markdown())
    }

    /// Find every line that contains an exact string (or, with `regex`, matches a pattern) in
    /// the notes and the text of filed documents, with path and line number. Use it to find an
    /// exact token, or to prove a string is absent (an empty answer covers the whole vault).
    /// Capped at `limit` lines (default 50, at most 200), and fewer when they would pass
    /// 60,000 characters (the answer budget); `offset` pages on.
    #[tool(name = "vault_grep",
        output_schema = output::grep(), annotations(read_only_hint = true, open_world_hint = false))]
    async fn vault_grep(
        &self,
        Parameters(args): Parameters<tools::GrepArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let a = take!(args);
        let report = self.run(&ctx, move |e, t| tools::grep(e, t, a)).await;
        // 200 long lines can pass the budget: fewer are shown, and the prose's own "call again
        // with offset" goes on from there.
        let report = report.map(|r| ANSWER_BUDGET.leading(r, crate::wire::grep, render_grep));
        typed(report, crate::wire::grep, render_grep)
    }

    /// A note's outgoing links (each resolved to a path, or marked broken) and its backlinks
    /// (the notes linking to it, with line). Call it before moving or deleting a note.
    /// Answers over 60,000 characters (the answer budget) come in parts; send the `offset` the
    /// closing line names to read on.
    #[tool(name = "vault_links",
        output_schema = output::links(), annotations(read_only_hint = true, open_world_hint = false))]
    async fn vault_links(
        &self,
        Parameters(args): Parameters<Paged<tools::LinksArgs>>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let Paged { args: a, offset } = take!(args);
        let report = self.run(&ctx, move |e, t| tools::links(e, t, a)).await;
        paged(report, "vault_links", offset, crate::wire::links, render_links)
    }

    /// The notes whose frontmatter `key` holds exactly `value` (equal to a plain value, or one
    /// item of a list). Reads the files, so folders left out of search are included.
    /// Answers over 60,000 characters (the answer budget) come in parts; send the `offset` the
    /// closing line names to read on.
    #[tool(
        name = "vault_frontmatter_query",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn vault_frontmatter_query(
        &self,
        Parameters(args): Parameters<Paged<tools::FrontmatterQueryArgs>>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let Paged { args: a, offset } = take!(args);
        let (key, value) = (a.key.clone(), a.value.clone());
        let render = move |paths: Vec<String>| {
            if paths.is_empty() {
                return format!("No note has {key}: {value:?} in its frontmatter.");
            }
            let mut out = format!("{} note(s) with {key}: {value:?}:\n", paths.len());
            for p in paths {
                out.push_str(&format!("- {p}\n"));
            }
            out
        };
        // Paged like the typed answers; the paths are all its prose says, so no structured
        // content goes with them.
        let paths = self.run(&ctx, move |e, t| tools::frontmatter_query(e, t, a)).await;
        let part = paths.and_then(|p| {
            ANSWER_BUDGET.part("vault_frontmatter_query", p, offset, |_| Value::Null, render)
        });
        answer(part, |(text, _)| text)
    }

    /// Bring the search index up to date now (it normally follows file changes by itself).
    /// `full` re-reads every file.
    #[tool(
        name = "vault_reindex",
        output_schema = output::reindexed(),
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn vault_reindex(
        &self,
        Parameters(args): Parameters<tools::ReindexArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let a = take!(args);
        let passes = self.run(&ctx, move |e, t| tools::reindex(e, t, a)).await;
        // Plain numbers and strings: serialising them cannot fail.
        let data = |r: &Vec<_>| serde_json::to_value(crate::wire::reindexed(r)).unwrap_or_default();
        typed(passes, data, render_reindex)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn every_tool_schema_is_portable_with_no_union_and_no_untyped_property() {
        let tools = VaultMcp::tool_router().list_all();
        assert!(tools.len() >= 24, "{} tools", tools.len());
        for tool in tools {
            let input = Value::Object((*tool.input_schema).clone());
            assert_eq!(input["type"], "object", "{}", tool.name);
            assert_eq!(schema::findings(&input), Vec::<String>::new(), "{}", tool.name);
            if let Some(out) = &tool.output_schema {
                let out = Value::Object((**out).clone());
                assert_eq!(out["type"], "object", "{}", tool.name);
                assert_eq!(schema::findings(&out), Vec::<String>::new(), "{}", tool.name);
            }
        }
    }

    #[test]
    fn every_paged_tool_states_the_answer_budget_in_its_description() {
        let stated = format!("{} characters (the answer budget)", ANSWER_BUDGET.shown());
        let mut paged = Vec::new();
        for tool in VaultMcp::tool_router().list_all() {
            let offset = tool.input_schema.get("properties").and_then(|p| p.get("offset"));
            let described = offset.and_then(|o| o["description"].as_str()).unwrap_or_default();
            if described.contains("came in parts") {
                let description = tool.description.as_deref().unwrap_or_default();
                assert!(description.contains(&stated), "{}: {description}", tool.name);
                paged.push(tool.name.to_string());
            }
        }
        assert_eq!(paged.len(), 10, "{paged:?}");
    }

    #[test]
    fn every_paged_tool_with_an_output_schema_declares_its_page() {
        for tool in VaultMcp::tool_router().list_all() {
            let paged = tool.input_schema.get("properties").and_then(|p| p.get("offset"));
            let (Some(_), Some(out)) = (paged, &tool.output_schema) else { continue };
            if tool.name == "vault_grep" {
                continue; // its offset is its own: matching lines, with `limit`
            }
            assert!(out["properties"].get("page").is_some(), "{}", tool.name);
        }
    }

    #[test]
    fn every_tool_but_read_and_frontmatter_query_declares_an_output_schema() {
        let mut untyped: Vec<String> = VaultMcp::tool_router()
            .list_all()
            .into_iter()
            .filter(|t| t.output_schema.is_none())
            .map(|t| t.name.to_string())
            .collect();
        untyped.sort();
        // vault_read can answer with an image, which has no JSON shape; vault_frontmatter_query
        // answers with paths alone, all its prose says.
        assert_eq!(untyped, ["vault_frontmatter_query", "vault_read"]);
    }
}
