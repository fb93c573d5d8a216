//! The tools' typed results: each data-bearing tool's `outputSchema`, and the
//! `structuredContent` beside its prose.
//!
//! The structured content is the JSON the same answer has on REST and the CLI's `--json`
//! (`crate::wire`, the one home of the wire names), so a field means one thing on every
//! surface; the prose stays the text content. Two rules hold for every tool, decided here:
//! a key whose value is `null` is left out (absent means "none", so every schema declares one
//! type per property and no `null` union: see `schema.rs`), and a refusal carries no
//! structured content at all (strict clients validate whatever structured content comes, and
//! an error's would not fit the schema). Each schema is an object at the root whose
//! properties each declare a type; extra keys are allowed, so a field added to the wire later
//! does not break a client holding an older schema.

use std::sync::Arc;

use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use schemars::{Schema, json_schema};
use serde_json::Value;

/// A data-bearing tool's answer: the prose as text, `data`'s wire JSON as structured content;
/// a refusal is `refusal`'s, with no structured content.
pub(super) fn typed<T>(
    r: crate::error::Result<T>,
    data: impl FnOnce(&T) -> Value,
    render: impl FnOnce(T) -> String,
) -> CallToolResult {
    match r {
        Ok(v) => {
            let data = data(&v);
            success(render(v), data)
        }
        Err(e) => super::refusal(&e),
    }
}

/// A data-bearing answer that grows with the vault, kept under the answer budget
/// (`budget.rs`): whole when it fits, else the items from `offset` that do.
pub(super) fn paged<T: super::rows::Rows>(
    r: crate::error::Result<T>,
    tool: &str,
    offset: usize,
    data: impl Fn(&T) -> Value,
    render: impl Fn(T) -> String,
) -> CallToolResult {
    match r.and_then(|v| super::budget::ANSWER_BUDGET.part(tool, v, offset, data, render)) {
        Ok((text, data)) => success(text, data),
        Err(e) => super::refusal(&e),
    }
}

/// A write's answer: `render_change`'s prose and the change as `wire::change` shapes it.
pub(super) fn changed(r: crate::error::Result<crate::vault::Change>) -> CallToolResult {
    typed(r, crate::wire::change, super::render_change)
}

/// A maintenance run as `wire::maintenance` shapes it, without its Markdown rendering, which
/// is the text content already.
pub(super) fn maintenance_run(run: &crate::upkeep::findings::Run) -> Value {
    let mut v = crate::wire::maintenance(run);
    if let Some(o) = v.as_object_mut() {
        o.remove("markdown");
    }
    v
}

/// A successful answer: the prose as text content, `data` (nulls left out) as structured
/// content.
pub(super) fn success(text: String, data: Value) -> CallToolResult {
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(without_nulls(data));
    result
}

/// `value` with every `null`-valued key of every object removed.
fn without_nulls(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, without_nulls(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(without_nulls).collect()),
        other => other,
    }
}

fn string() -> Schema {
    json_schema!({"type": "string"})
}
fn integer() -> Schema {
    json_schema!({"type": "integer"})
}
fn number() -> Schema {
    json_schema!({"type": "number"})
}
fn boolean() -> Schema {
    json_schema!({"type": "boolean"})
}
fn list(items: Schema) -> Schema {
    json_schema!({"type": "array", "items": items})
}
fn strings() -> Schema {
    list(string())
}
/// An object with these properties (written as one object of name to schema), the
/// `required` ones always present.
fn object(properties: Schema, required: &[&str]) -> Schema {
    json_schema!({"type": "object", "properties": properties, "required": required})
}
/// A free-form object (frontmatter, a progress report): typed, its keys open.
fn any_object() -> Schema {
    json_schema!({"type": "object"})
}

fn root(schema: Schema) -> Arc<JsonObject> {
    match schema.to_value() {
        Value::Object(map) => Arc::new(map),
        _ => unreachable!("every output schema is written as an object"),
    }
}

/// The root of an answer that can come in parts (`budget.rs`): `page`, present on a part,
/// says which items it holds and the `offset` that goes on.
fn paged_root(schema: Schema) -> Arc<JsonObject> {
    let page = object(
        json_schema!({
            "offset": integer(), "items": integer(), "total": integer(), "next_offset": integer(),
        }),
        &["offset", "items", "total"],
    );
    let mut schema = schema.to_value();
    schema["properties"]["page"] = page.to_value();
    root(Schema::try_from(schema).expect("an object schema"))
}

/// A write's confirmation (`wire::change`): every writing tool's result.
pub(super) fn change() -> Arc<JsonObject> {
    root(object(
        json_schema!({
            "vault": string(), "path": string(), "message": string(),
            "timestamp_bumped": boolean(), "etag": string(), "links_rewritten": integer(),
            "folders_created": strings(), "indexed": string(), "diff": string(),
            "replaced": string(),
            "warnings": list(object(json_schema!({"code": string(), "message": string()}), &["code", "message"])),
        }),
        &["vault", "path", "message", "timestamp_bumped"],
    ))
}

/// `vault_search`'s passages (`wire::search` without the evidence).
pub(super) fn search() -> Arc<JsonObject> {
    let hit = object(
        json_schema!({
            "vault": string(), "path": string(), "heading": string(), "line": integer(),
            "excerpt": string(), "matched": string(), "pinned": boolean(),
            "document": boolean(), "score": number(),
        }),
        &["vault", "path", "heading", "line", "excerpt", "matched", "pinned", "document", "score"],
    );
    root(object(
        json_schema!({"results": list(hit), "k": integer(), "notices": strings()}),
        &["results", "k"],
    ))
}

/// `vault_list`'s folder listing (`wire::listing`).
pub(super) fn listing() -> Arc<JsonObject> {
    let entry = object(
        json_schema!({
            "name": string(), "path": string(),
            "kind": {"type": "string", "enum": ["folder", "note", "document", "other"]},
            "size": integer(), "modified": string(),
        }),
        &["name", "path", "kind"],
    );
    paged_root(object(
        json_schema!({"vault": string(), "path": string(), "entries": list(entry)}),
        &["vault", "path", "entries"],
    ))
}

/// `vault_map`'s outline (`wire::map`).
pub(super) fn map() -> Arc<JsonObject> {
    let heading = object(
        json_schema!({"depth": integer(), "text": string(), "line": integer(), "path": string()}),
        &["depth", "text", "line", "path"],
    );
    let verdict = object(
        json_schema!({
            "status": string(), "pages": integer(), "has_text_layer": boolean(),
            "extracted_chars": integer(), "detail": string(),
        }),
        &["status"],
    );
    paged_root(object(
        json_schema!({
            "vault": string(), "path": string(), "document": boolean(),
            "frontmatter": any_object(), "headings": list(heading), "etag": string(),
            "extraction": verdict,
        }),
        &["vault", "path", "document", "frontmatter", "headings"],
    ))
}

/// `vault_status`'s coverage (`wire::status`).
pub(super) fn status() -> Arc<JsonObject> {
    let model = object(
        json_schema!({
            "index": string(), "configured": string(), "switch_pending": boolean(),
            "problem": string(),
        }),
        &["switch_pending"],
    );
    let vault = object(
        json_schema!({
            "vault": string(), "notes": integer(), "documents": integer(), "chunks": integer(),
            "chunks_without_vectors": integer(),
            "problems": list(object(
                json_schema!({"path": string(), "status": string(), "detail": string()}),
                &["path", "status", "detail"],
            )),
            "skipped": list(object(
                json_schema!({"reason": string(), "count": integer(), "examples": strings()}),
                &["reason", "count", "examples"],
            )),
            "stale": list(object(json_schema!({"path": string(), "why": string()}), &["path", "why"])),
            "last_build": object(
                json_schema!({
                    "at": string(), "seconds": number(), "files_seen": integer(),
                    "files_chunked": integer(), "files_removed": integer(),
                    "failed": integer(), "texts_embedded": integer(),
                }),
                &["at"],
            ),
        }),
        &["vault", "notes", "documents", "chunks", "problems", "skipped", "stale"],
    );
    paged_root(object(
        json_schema!({"model": model, "vaults": list(vault), "pass": any_object()}),
        &["model", "vaults"],
    ))
}

/// `vault_expiries`' dates (`wire::expiries`).
pub(super) fn expiries() -> Arc<JsonObject> {
    let entry = object(
        json_schema!({
            "note": string(), "date": string(), "what": string(), "days": integer(),
            "lapsed": boolean(),
        }),
        &["note", "date", "what", "days", "lapsed"],
    );
    let pair = |second: &str| {
        object(json_schema!({"note": string(), second: string()}), &["note", second])
    };
    paged_root(object(
        json_schema!({
            "today": string(), "within": integer(), "notes_scanned": integer(),
            "lapsed": integer(), "entries": list(entry), "dismissed": list(pair("reason")),
            "untracked": object(json_schema!({"count": integer(), "notes": strings()}), &["count"]),
            "malformed": list(pair("problem")),
        }),
        &["today", "notes_scanned", "lapsed", "entries", "dismissed", "untracked", "malformed"],
    ))
}

/// `vault_callouts`' open callouts (`wire::callouts`).
pub(super) fn callouts() -> Arc<JsonObject> {
    let callout = object(
        json_schema!({
            "note": string(), "line": integer(), "type": string(), "written_type": string(),
            "severity": string(), "title": string(), "body": string(), "fold": string(),
            "depth": integer(),
        }),
        &["note", "line", "type", "severity", "title", "body"],
    );
    let counts = object(
        json_schema!({
            "callouts": integer(), "notes_with_callouts": integer(),
            "notes_scanned": integer(), "all_types": integer(),
            "by_type": {"type": "object", "additionalProperties": integer()},
        }),
        &["callouts", "notes_with_callouts", "notes_scanned"],
    );
    paged_root(object(
        json_schema!({
            "vault": string(), "generated": string(), "open_types": strings(),
            "counts": counts, "callouts": list(callout), "duration_ms": integer(),
            "source": string(),
        }),
        &["vault", "counts", "callouts"],
    ))
}

/// `vault_tags`' tag tree and notes (`wire::tags`).
pub(super) fn tags() -> Arc<JsonObject> {
    let tag = object(
        json_schema!({"name": string(), "count": integer(), "depth": integer()}),
        &["name", "count", "depth"],
    );
    let note = object(json_schema!({"path": string(), "tags": strings()}), &["path", "tags"]);
    paged_root(object(
        json_schema!({
            "vault": string(), "tag": string(), "notes_scanned": integer(),
            "tags": list(tag), "notes": list(note),
        }),
        &["vault", "notes_scanned", "tags", "notes"],
    ))
}

/// `vault_tag_rename`'s changed notes (`wire::tag_renamed`).
pub(super) fn tag_renamed() -> Arc<JsonObject> {
    let note =
        object(json_schema!({"path": string(), "replaced": integer()}), &["path", "replaced"]);
    root(object(
        json_schema!({
            "vault": string(), "from": string(), "to": string(), "dry_run": boolean(),
            "notes_scanned": integer(), "replaced": integer(), "notes": list(note),
            "message": string(), "listed": integer(),
        }),
        &["vault", "from", "to", "dry_run", "notes_scanned", "replaced", "notes", "message"],
    ))
}

/// `vault_maintenance`'s run (`wire::maintenance` without its Markdown, which is the text
/// content) or, with `list_only`, its checks (`wire::checks`): one schema for both, the
/// checks' list the one key both carry.
pub(super) fn maintenance() -> Arc<JsonObject> {
    let finding = object(
        json_schema!({
            "id": string(), "severity": string(), "code": string(), "message": string(),
            "path": string(), "line": integer(),
        }),
        &["id", "severity", "code", "message"],
    );
    let check = object(
        json_schema!({
            "check": string(), "title": string(), "description": string(),
            "order": integer(), "schema": integer(), "source": string(), "script": string(),
            "legacy": boolean(), "replaces_builtin": boolean(), "problem": string(),
            "status": string(), "exit_code": integer(), "duration_ms": integer(),
            "problems": strings(), "error": string(), "output": string(),
            "findings": list(finding),
        }),
        &["check", "title", "source"],
    );
    let summary = object(
        json_schema!({
            "checks": integer(), "passed": integer(), "failed": integer(),
            "could_not_run": integer(), "legacy": integer(), "invalid": integer(),
        }),
        &["checks"],
    );
    paged_root(object(
        json_schema!({
            "vault": string(), "generated_at": string(), "duration_ms": integer(),
            "checks": list(check), "summary": summary, "exit_code": integer(),
        }),
        &["checks"],
    ))
}

/// `vault_grep`'s page of lines (`wire::grep`).
pub(super) fn grep() -> Arc<JsonObject> {
    let hit = object(
        json_schema!({"path": string(), "line": integer(), "text": string(), "document": boolean()}),
        &["path", "line", "text", "document"],
    );
    root(object(
        json_schema!({
            "pattern": string(), "regex": boolean(), "total": integer(), "files": integer(),
            "offset": integer(), "hits": list(hit),
        }),
        &["pattern", "regex", "total", "files", "offset", "hits"],
    ))
}

/// `vault_links`' links both ways (`wire::links`).
pub(super) fn links() -> Arc<JsonObject> {
    let outgoing = object(
        json_schema!({
            "line": integer(), "target": string(), "fragment": string(), "resolved": string(),
            "external": boolean(),
        }),
        &["line", "target", "external"],
    );
    let backlink = object(
        json_schema!({"from": string(), "line": integer(), "written": string()}),
        &["from", "line", "written"],
    );
    paged_root(object(
        json_schema!({"path": string(), "outgoing": list(outgoing), "backlinks": list(backlink)}),
        &["path", "outgoing", "backlinks"],
    ))
}

/// `vault_reindex`'s passes (`wire::reindexed`).
pub(super) fn reindexed() -> Arc<JsonObject> {
    let failed = object(json_schema!({"path": string(), "error": string()}), &["path", "error"]);
    let pass = object(
        json_schema!({
            "vault": string(), "files_seen": integer(), "files_chunked": integer(),
            "files_removed": integer(), "chunks_written": integer(),
            "texts_embedded": integer(), "texts_reused": integer(), "failed": list(failed),
            "seconds": number(),
        }),
        &["vault", "files_seen", "files_chunked", "files_removed", "failed", "seconds"],
    );
    root(object(json_schema!({"vaults": list(pass)}), &["vaults"]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn structured_content_leaves_null_keys_out_at_every_depth() {
        let data = json!({"a": null, "b": [{"c": null, "d": 1}], "e": {"f": null}});
        assert_eq!(without_nulls(data), json!({"b": [{"d": 1}], "e": {}}));
    }

    #[test]
    fn a_typed_answer_keeps_its_prose_as_the_text_content() {
        let r = success("3 lines".to_string(), json!({"total": 3, "x": null}));
        assert_eq!(r.is_error, Some(false));
        assert_eq!(r.content[0].as_text().map(|t| t.text.as_str()), Some("3 lines"));
        assert_eq!(r.structured_content, Some(json!({"total": 3})));
    }

    #[test]
    fn a_refusal_carries_no_structured_content() {
        let refused = crate::error::Error::new(crate::error::ErrorCode::NotFound, "no such note");
        let r = typed(Err::<u8, _>(refused), |_| json!({"x": 1}), |_| String::new());
        assert_eq!(r.is_error, Some(true));
        assert_eq!(r.structured_content, None);
    }
}
