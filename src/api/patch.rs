//! The Local REST API plugin's PATCH formats, translated into service calls: the deprecated
//! 1.x headers (`Markdown-Patch-Version: 1`), the 2.x JSON instruction body, and raw-content
//! mode (the target in the URL, `/vault/note.md/heading/A/B`, or in `Target-Type`/`Target`
//! headers under an explicit version 2, with the body as the payload).
//!
//! It owns the plugin's selection rules and refusals (which format a request is in, and the
//! ambiguous or legacy requests it refuses with the plugin's numbers) and turns every format
//! into one typed patch (`vault::patch::PatchSpec`, built there under the one set of rules,
//! with the plugin's field names and its 40081), `SetFrontmatterArgs` or `EntriesArgs`;
//! targets are resolved by the one resolver in `vault::headings` behind `service::patch_built`,
//! so `A::B`, `["A","B"]` and `^id` reach the same lines. The 2.x formats ask the engine for
//! relative heading levels (and send its warnings as `Markdown-Patch-Warnings`), moves (`scope:
//! parent` with a destination) and frontmatter key renames and inserts; 1.x keeps levels as sent.
//! mdvault's own `Target-Type: body` and `text` stay in `rest.rs`. It does not read or write files
//! itself: every vault access is a `crate::service` call.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use super::common::{
    bad, blocking, body_text, change_response, header_str, if_match, wants_confirmation, with_etag,
};
use super::compat;
use crate::engine::Engine;
use crate::error::{Error, ErrorCode, Result};
use crate::service::{self as tools, Target};
use crate::vault::PatchRequest;
use crate::vault::edit::{self, Operation, Slot};
use crate::vault::headings::{self, Scope};
use crate::vault::patch::{MoveTo, PatchSpec, Spelling};

/// The plugin's numbers for the PATCH refusals its clients route on.
/// A 1.x request without `Target-Type`.
const ERR_TARGET_TYPE_MISSING: u32 = 40053;
/// A 1.x `Target-Type` other than heading, block or frontmatter.
const ERR_TARGET_TYPE_INVALID: u32 = 40054;
/// A 1.x request without `Target`.
const ERR_TARGET_MISSING: u32 = 40055;
/// A 1.x request without `Operation`.
const ERR_OPERATION_MISSING: u32 = 40056;
/// A 1.x `Operation` other than append, prepend or replace.
const ERR_OPERATION_INVALID: u32 = 40057;
/// A 2.x instruction that is not well formed (a field missing, unknown or out of its algebra).
const ERR_INSTRUCTION_INVALID: u32 = 40081;
/// A `Markdown-Patch-Version` other than 1 or 2.
const ERR_VERSION_INVALID: u32 = 40082;
/// Target headers without a version: 1.x and raw-content mode both read them, so the request
/// must pick one.
const ERR_VERSION_AMBIGUOUS: u32 = 40084;
/// Header targeting on a read, PUT or POST without `Markdown-Patch-Version: 1`.
const ERR_WRITE_VERSION_MISSING: u32 = 40083;
/// A read `Target-Scope` other than content, marker or markerAndContent.
const ERR_READ_SCOPE_INVALID: u32 = 40059;
/// A `Within` header that is not an integer.
const ERR_WITHIN_INVALID: u32 = 40023;

/// The response header that carries an edit's warnings (see [`warnings_header`]).
const WARNINGS_HEADER: &str = "markdown-patch-warnings";

/// The content type that marks a body as a 2.x instruction whatever else the request says.
const INSTRUCTION_TYPE: &str = "application/vnd.olrapi.patch-instruction+json";

/// The plugin's target kinds: raw-content mode's URL path elements after the note's name, and
/// the values of `Target-Type` and `targetType`.
const URL_KINDS: [&str; 3] = ["heading", "block", "frontmatter"];

/// One request, whatever its format, as the service will see it.
struct Instruction {
    kind: String,
    /// Heading path segments, or the one block id or frontmatter key.
    target: Vec<String>,
    operation: String,
    scope: Option<String>,
    content: Option<String>,
    value: Option<Value>,
    create: bool,
    reject_if_present: bool,
    allow_empty: bool,
    if_match: Option<String>,
    within: Option<i64>,
    /// Where a `scope: parent` replace moves a heading's section (the plugin's destination
    /// object, `{"parent": [...] | null, "place": ...}`).
    destination: Option<Value>,
    /// The 2.x JSON body: errors name its fields rather than headers.
    from_body: bool,
}

fn invalid(msg: impl Into<String>) -> Error {
    bad(msg).with_compat(ERR_INSTRUCTION_INVALID)
}

/// True for the plugin's operation names, exactly as written (lowercase, untrimmed): the
/// patch's own (`Operation`) and `delete`, which a typed patch spells as a replace with nothing
/// (`PatchSpec::delete`).
fn known_operation(name: &str) -> bool {
    name == "delete" || name.parse::<Operation>().is_ok_and(|op| op.as_str() == name)
}

/// `note.md/heading/A/B` split into the note and its URL target, when the path has one.
pub(crate) fn url_target(path: &str) -> Option<(String, String, Vec<String>)> {
    URL_KINDS.iter().find_map(|kind| {
        let marker = format!(".md/{kind}/");
        let at = path.find(&marker)?;
        let note = path[..at + 3].to_string();
        let rest = &path[at + marker.len()..];
        let segments: Vec<String> =
            rest.split('/').filter(|s| !s.is_empty()).map(str::to_string).collect();
        Some((note, kind.to_string(), segments))
    })
}

fn truthy(v: Option<&str>) -> bool {
    v.is_some_and(|v| matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes" | "on"))
}

/// True when a PUT or POST addresses part of a note (a URL target, or `Target-Type`).
pub(crate) fn targets_part(path: &str, headers: &HeaderMap) -> bool {
    url_target(path).is_some() || headers.contains_key("target-type")
}

/// True when a PATCH is mdvault's own whole-note kind (`body`, `text`), which `rest.rs` serves.
pub(crate) fn is_mdvault_kind(headers: &HeaderMap) -> bool {
    header_str(headers, "target-type")
        .ok()
        .flatten()
        .is_some_and(|k| matches!(k.to_ascii_lowercase().as_str(), "body" | "text"))
}

/// PATCH in the plugin's formats; see the module header for how the format is chosen.
pub(crate) async fn route(
    engine: Arc<Engine>,
    target: Target,
    path: String,
    headers: &HeaderMap,
    body: std::result::Result<Bytes, BytesRejection>,
    forced: Option<&'static str>,
) -> Result<Response> {
    let version = header_str(headers, "markdown-patch-version")?;
    if let Some(v) = version
        && v != "1"
        && v != "2"
    {
        return Err(bad(format!("Markdown-Patch-Version {v} is not one of 1 or 2; send 2 (or 1 for the deprecated header format)"))
            .with_compat(ERR_VERSION_INVALID));
    }
    let ctype = header_str(headers, "content-type")?.unwrap_or("").to_ascii_lowercase();
    let kind_header = header_str(headers, "target-type")?;
    let target_header = header_str(headers, "target")?;
    let (note, ins, legacy) = if let Some((note, kind, segments)) = url_target(&path) {
        if kind_header.is_some() || target_header.is_some() {
            return Err(conflicting(
                "the URL names a target and so does a Target-Type or Target header; name it once (drop the headers, or PATCH the note itself)",
            ));
        }
        if ctype.starts_with(INSTRUCTION_TYPE) {
            return Err(conflicting(
                "the URL names a target and the body is an instruction that names one too; PATCH the note itself with the instruction, or send the raw content",
            ));
        }
        let mut ins = raw_instruction(&engine, headers, &ctype, kind, segments, body)?;
        if let Some(op) = forced {
            ins.operation = op.to_string();
        }
        (note, ins, false)
    } else if version == Some("1") {
        let mut ins = legacy_instruction(&engine, headers, body, forced, Defaults::Plugin)?;
        if let Some(op) = forced {
            ins.operation = op.to_string();
        }
        (path, ins, true)
    } else if kind_header.is_some() || target_header.is_some() {
        if version.is_none() {
            let strict = engine.config().server.strict_patch_version;
            if strict && forced.is_some() {
                return Err(bad(
                    "a Target-Type header on a PUT or POST needs Markdown-Patch-Version: 1 (deprecated); target a section in the URL instead, as /vault/note.md/heading/Name",
                )
                .with_compat(ERR_WRITE_VERSION_MISSING));
            }
            if strict {
                return Err(bad(
                    "Target-Type and Target headers need Markdown-Patch-Version: 1 (the deprecated header format) or 2 (raw-content mode, Target as percent-encoded JSON); send one",
                )
                .with_compat(ERR_VERSION_AMBIGUOUS));
            }
            // Why not refuse: the predecessor's scripts and the plugin's most-used clients send
            // these headers with no version, and the 1.x format is the one meaning they have.
            // Their defaults are the predecessor's; the answer is marked deprecated as 1.x is.
            let mut ins =
                legacy_instruction(&engine, headers, body, forced, Defaults::Predecessor)?;
            if let Some(op) = forced {
                ins.operation = op.to_string();
            }
            (path, ins, true)
        } else {
            let kind = kind_header.unwrap_or("heading").to_ascii_lowercase();
            let raw = target_header.ok_or_else(|| {
                invalid("raw-content mode needs a Target header naming the target")
            })?;
            let segments = json_target(raw)?;
            (path, raw_instruction(&engine, headers, &ctype, kind, segments, body)?, false)
        }
    } else {
        let raw = body_text(&engine, body)?;
        let v: Value = serde_json::from_str(&raw).map_err(|e| {
            invalid(format!("a PATCH without target headers takes a JSON instruction body {{\"targetType\", \"target\", \"operation\", ...}}: {e}"))
        })?;
        (path, body_instruction(v)?, false)
    };
    apply(engine, target, note, headers, ins, legacy).await
}

/// A raw-content `Target` header: percent-encoded JSON, an array of heading segments or one
/// string; anything else is the decoded text itself.
fn json_target(raw: &str) -> Result<Vec<String>> {
    let decoded = percent_encoding::percent_decode_str(raw).decode_utf8_lossy().into_owned();
    Ok(match serde_json::from_str::<Value>(&decoded) {
        Ok(Value::Array(items)) => items
            .iter()
            .map(|i| i.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| invalid("the Target JSON array must hold strings"))?,
        Ok(Value::String(s)) => vec![s],
        _ => vec![decoded],
    })
}

/// Which defaults a header-format request gets for the headers it leaves out.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Defaults {
    /// `Markdown-Patch-Version: 1`: the plugin's rules, `Operation` and `Target-Type` required.
    Plugin,
    /// No version at all: the predecessor's defaults, `Target-Type: heading` and
    /// `Operation: replace`, and a `Target` that is a percent-encoded JSON array (as 2.x
    /// clients write it) read as its heading segments.
    Predecessor,
}

fn conflicting(msg: &str) -> Error {
    Error::new(ErrorCode::ConflictingTarget, msg)
}

/// A targeted read: a URL target (`/vault/note.md/heading/A/B`, `/block/id`,
/// `/frontmatter/key`) or, deprecated, 1.x `Target-Type`/`Target` headers. `None` when the
/// request targets nothing, so the whole note is read as usual.
pub(crate) async fn read(
    engine: Arc<Engine>,
    target: Target,
    path: &str,
    headers: &HeaderMap,
) -> Result<Option<Response>> {
    let version = header_str(headers, "markdown-patch-version")?;
    let kind_header = header_str(headers, "target-type")?;
    let target_header = header_str(headers, "target")?;
    let (note, kind, segments, legacy) = match url_target(path) {
        Some(_) if kind_header.is_some() || target_header.is_some() => {
            return Err(conflicting(
                "the URL names a target and so does a Target-Type or Target header; name it once (drop the headers)",
            ));
        }
        Some((note, kind, segments)) => (note, kind, segments, false),
        None if kind_header.is_none() => return Ok(None),
        None => {
            let kind = kind_header.unwrap_or("").to_ascii_lowercase();
            if !URL_KINDS.contains(&kind.as_str()) {
                return Err(bad(format!(
                    "unknown Target-Type {kind}; use heading, block or frontmatter"
                ))
                .with_compat(ERR_TARGET_TYPE_INVALID));
            }
            // A version-less header read is the 1.x format (see `route`), unless the server
            // is set to refuse it as the plugin 5.1 does.
            if version != Some("1")
                && (version.is_some() || engine.config().server.strict_patch_version)
            {
                return Err(bad("a Target-Type header on a read needs Markdown-Patch-Version: 1 (deprecated); target a section in the URL instead, as /vault/note.md/heading/Name")
                    .with_compat(ERR_WRITE_VERSION_MISSING));
            }
            let raw = target_header.filter(|t| !t.is_empty()).ok_or_else(|| {
                bad(format!("Target-Type {kind} needs a Target header"))
                    .with_compat(ERR_TARGET_MISSING)
            })?;
            let decoded =
                percent_encoding::percent_decode_str(raw).decode_utf8_lossy().into_owned();
            let segments = if kind == "heading" {
                let d = header_str(headers, "target-delimiter")?
                    .filter(|d| !d.is_empty())
                    .unwrap_or("::");
                decoded.split(d).map(str::to_string).collect()
            } else {
                vec![decoded]
            };
            (path.to_string(), kind, segments, true)
        }
    };
    let scope: Scope = match header_str(headers, "target-scope")? {
        None => Scope::Content,
        Some(s) => s.parse().map_err(|_| {
            bad(format!("Target-Scope {s} cannot be read; use content, marker or markerAndContent"))
                .with_compat(ERR_READ_SCOPE_INVALID)
        })?,
    };
    let missing = |e: Error| match e.code() {
        ErrorCode::NoSuchHeading => Error::new(ErrorCode::NotFound, e.message()),
        _ => e,
    };
    check_frontmatter(&engine, &target, &note).await?;
    let mut resp = if kind == "frontmatter" {
        let key = segments.join("/");
        let a = tools::ReadArgs { vault: None, path: note.clone(), section: None };
        let r = blocking(move || tools::read(&engine, &target, a)).await?;
        let value = r.frontmatter.get(&key).cloned().ok_or_else(|| {
            Error::new(
                ErrorCode::NotFound,
                format!(
                    "{note} has no frontmatter key `{key}`; its keys are: {}",
                    r.frontmatter.keys().cloned().collect::<Vec<_>>().join(", ")
                ),
            )
        })?;
        let body = if scope == Scope::MarkerAndContent {
            let mut m = serde_json::Map::new();
            m.insert(key, value);
            Value::Object(m)
        } else {
            value
        };
        with_etag(axum::Json(body).into_response(), Some(&r.etag))
    } else {
        let joined = if kind == "block" {
            format!("^{}", segments.join("").trim_start_matches('^'))
        } else {
            segments.iter().map(|s| s.trim()).collect::<Vec<_>>().join("::")
        };
        let a = tools::ReadArgs { vault: None, path: note, section: Some(joined) };
        let r = blocking(move || tools::read(&engine, &target, a)).await.map_err(missing)?;
        // The service reads a section as its heading line and content; the scope picks. A
        // 2.x read gives heading levels relative to the span, as a 2.x PATCH takes them, so
        // what is read can be written back unchanged: the content's levels less the
        // heading's, a markerAndContent subtree at its parent's baseline (1.x: as written).
        let depth = headings::headings(&r.content).first().map_or(0, |h| i32::from(h.depth));
        let relative = |text: &str, offset: i32| {
            if legacy { text.to_string() } else { edit::relevel(text, -offset).0 }
        };
        let text = if kind == "block" {
            r.content.clone()
        } else {
            let (first, rest) = r.content.split_once('\n').unwrap_or((r.content.as_str(), ""));
            match scope {
                Scope::Marker => first.trim().trim_start_matches('#').trim().to_string(),
                Scope::Content => relative(rest.trim_start_matches(['\n', '\r']), depth),
                Scope::MarkerAndContent => relative(&r.content, (depth - 1).max(0)),
            }
        };
        with_etag(
            ([(header::CONTENT_TYPE, "text/markdown; charset=utf-8")], text).into_response(),
            Some(&r.etag),
        )
    };
    if legacy {
        resp.headers_mut().insert("deprecation", HeaderValue::from_static(compat::DEPRECATED_1X));
    }
    Ok(Some(resp))
}

/// The 1.x header format, with the plugin's rules or the predecessor's defaults.
fn legacy_instruction(
    engine: &Engine,
    headers: &HeaderMap,
    body: std::result::Result<Bytes, BytesRejection>,
    forced: Option<&'static str>,
    defaults: Defaults,
) -> Result<Instruction> {
    let lenient = defaults == Defaults::Predecessor;
    let operation = forced
        .or(header_str(headers, "operation")?)
        .or(lenient.then_some("replace"))
        .ok_or_else(|| {
            bad("PATCH needs an Operation header: append, prepend or replace")
                .with_compat(ERR_OPERATION_MISSING)
        })?
        .trim()
        .to_ascii_lowercase();
    if !known_operation(&operation) {
        return Err(bad(format!(
            "unknown Operation {operation}; use append, prepend or replace (delete for a frontmatter key)"
        ))
        .with_compat(ERR_OPERATION_INVALID));
    }
    let kind = header_str(headers, "target-type")?
        .or(lenient.then_some("heading"))
        .ok_or_else(|| {
            bad("PATCH needs a Target-Type header: heading, block or frontmatter")
                .with_compat(ERR_TARGET_TYPE_MISSING)
        })?
        .trim()
        .to_ascii_lowercase();
    if !URL_KINDS.contains(&kind.as_str()) {
        return Err(bad(format!(
            "unknown Target-Type {kind}; use heading, block or frontmatter (or mdvault's body, text)"
        ))
        .with_compat(ERR_TARGET_TYPE_INVALID));
    }
    let raw = header_str(headers, "target")?
        .filter(|t| !t.is_empty())
        .ok_or_else(|| {
            bad(format!("PATCH with Target-Type {kind} needs a Target header (the heading path, as ?map shows it, the block id or the key)"))
                .with_compat(ERR_TARGET_MISSING)
        })?;
    let mut decoded = percent_encoding::percent_decode_str(raw).decode_utf8_lossy().into_owned();
    if lenient || truthy(header_str(headers, "trim-target-whitespace")?) {
        decoded = decoded.trim().to_string();
    }
    let target = if kind == "heading" {
        let array = lenient && decoded.starts_with('[');
        match json_target(&decoded) {
            Ok(segments) if array => segments,
            _ => {
                let delimiter = header_str(headers, "target-delimiter")?
                    .filter(|d| !d.is_empty())
                    .unwrap_or("::");
                decoded.split(delimiter).map(str::to_string).collect()
            }
        }
    } else {
        vec![decoded]
    };
    let text = body_text(engine, body)?;
    let (content, value) = if kind == "frontmatter" {
        // The plugin takes JSON, and plain text as a string.
        let v = serde_json::from_str(&text)
            .unwrap_or_else(|_| Value::String(text.trim_end_matches('\n').to_string()));
        (None, (operation != "delete").then_some(v))
    } else {
        (Some(text), None)
    };
    Ok(Instruction {
        kind,
        target,
        operation,
        scope: header_str(headers, "target-scope")?.map(str::to_string),
        content,
        value,
        create: truthy(header_str(headers, "create-target-if-missing")?),
        reject_if_present: truthy(header_str(headers, "reject-if-content-preexists")?),
        allow_empty: truthy(header_str(headers, "allow-empty")?),
        if_match: None,
        within: None,
        destination: None,
        from_body: false,
    })
}

/// Raw-content mode: the target from the URL or headers, the body the payload (text is
/// `content`, JSON is `value`, an empty body carries nothing).
fn raw_instruction(
    engine: &Engine,
    headers: &HeaderMap,
    ctype: &str,
    kind: String,
    target: Vec<String>,
    body: std::result::Result<Bytes, BytesRejection>,
) -> Result<Instruction> {
    let operation = header_str(headers, "operation")?.unwrap_or("append").to_ascii_lowercase();
    let text = body_text(engine, body)?;
    let (content, value) = if text.is_empty() {
        (None, None)
    } else if ctype.contains("json") {
        let v: Value = serde_json::from_str(&text)
            .map_err(|e| invalid(format!("the body is declared JSON but does not parse: {e}")))?;
        (None, Some(v))
    } else {
        (Some(text), None)
    };
    let within = match header_str(headers, "within")? {
        None => None,
        Some(w) => Some(w.parse::<i64>().map_err(|_| {
            bad(format!(
                "the Within header must be an integer block index (0 first, -1 last), not {w:?}"
            ))
            .with_compat(ERR_WITHIN_INVALID)
        })?),
    };
    let destination = match header_str(headers, "destination")? {
        None => None,
        Some(raw) => {
            let decoded = percent_encoding::percent_decode_str(raw).decode_utf8_lossy();
            Some(serde_json::from_str::<Value>(&decoded).map_err(|e| {
                invalid(format!("the Destination header must be percent-encoded JSON such as {{\"parent\": [\"A\"], \"place\": \"last\"}}: {e}"))
            })?)
        }
    };
    Ok(Instruction {
        kind,
        target,
        operation,
        scope: header_str(headers, "target-scope")?.map(str::to_string),
        content,
        value,
        create: truthy(header_str(headers, "create-target-if-missing")?),
        reject_if_present: truthy(header_str(headers, "reject-if-content-preexists")?),
        allow_empty: true,
        if_match: None,
        within,
        destination,
        from_body: false,
    })
}

/// The 2.x JSON instruction body.
fn body_instruction(v: Value) -> Result<Instruction> {
    let Value::Object(o) = v else {
        return Err(invalid(
            "the PATCH instruction must be a JSON object with targetType, target and operation",
        ));
    };
    let s = |k: &str| o.get(k).and_then(Value::as_str).map(str::to_string);
    let kind = s("targetType").ok_or_else(|| {
        invalid("the instruction needs targetType: heading, block or frontmatter")
    })?;
    let target = match o.get("target") {
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| i.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| invalid("target must be a string or an array of strings"))?,
        Some(Value::String(t)) => vec![t.clone()],
        _ => {
            return Err(invalid(
                "the instruction needs target (a heading path array, a block id or a frontmatter key)",
            ));
        }
    };
    let within = match o.get("within") {
        None | Some(Value::Null) => None,
        Some(w) => {
            Some(w.as_i64().ok_or_else(|| invalid("within must be an integer block index"))?)
        }
    };
    Ok(Instruction {
        kind,
        target,
        operation: s("operation").ok_or_else(|| {
            invalid("the instruction needs operation: append, prepend, replace or delete")
        })?,
        scope: s("scope"),
        content: s("content"),
        value: o.get("value").cloned(),
        create: o.get("createTargetIfMissing").and_then(Value::as_bool).unwrap_or(false),
        reject_if_present: o
            .get("rejectIfContentPreexists")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        allow_empty: true,
        if_match: s("ifMatch"),
        within,
        destination: o.get("destination").cloned(),
        from_body: true,
    })
}

/// The plugin's destination object as mdvault's: `parent` a heading path array (or a `::`
/// string, or null for the top level), `place` "first", "last", or `{"before": path}` /
/// `{"after": path}`.
fn destination(v: &Value) -> Result<MoveTo> {
    let path = |p: &Value| -> Option<String> {
        match p {
            Value::String(s) => Some(s.clone()),
            Value::Array(items) => items
                .iter()
                .map(|i| i.as_str().map(|s| s.trim().to_string()))
                .collect::<Option<Vec<_>>>()
                .map(|parts| parts.join("::")),
            _ => None,
        }
    };
    let shape = || {
        invalid(
            "destination must be {\"parent\": [\"A\"] or null, \"place\": \"first\" | \"last\" | {\"before\": [...]} | {\"after\": [...]}}",
        )
    };
    let Value::Object(o) = v else { return Err(shape()) };
    let parent = match o.get("parent") {
        None | Some(Value::Null) => None,
        Some(p) => Some(path(p).ok_or_else(shape)?),
    };
    let slot = match o.get("place") {
        None => Slot::Last,
        Some(Value::String(s)) if s == "first" => Slot::First,
        Some(Value::String(s)) if s == "last" => Slot::Last,
        Some(Value::Object(p)) if p.len() == 1 => match p.iter().next() {
            Some((k, h)) if k == "before" => Slot::Before(path(h).ok_or_else(shape)?),
            Some((k, h)) if k == "after" => Slot::After(path(h).ok_or_else(shape)?),
            _ => return Err(shape()),
        },
        Some(_) => return Err(shape()),
    };
    Ok(MoveTo { parent, slot })
}

/// A table row per inner array (`| a | b |`), or the lines of a list of strings: how a JSON
/// `value` becomes Markdown for a heading or block target.
fn value_markdown(v: &Value) -> Option<String> {
    let cell = |c: &Value| match c {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Array(rows) if rows.iter().all(Value::is_array) => Some(
            rows.iter()
                .map(|r| {
                    let cells: Vec<String> = r.as_array().into_iter().flatten().map(cell).collect();
                    format!("| {} |", cells.join(" | "))
                })
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        Value::Array(items) => Some(items.iter().map(cell).collect::<Vec<_>>().join("\n")),
        _ => None,
    }
}

/// What a request's syntax says, checked: the target kind and operation (lowercase), the
/// scope, and whether it asks for a move (`scope: parent`, which needs a destination).
struct Parsed {
    kind: String,
    operation: String,
    scope: Scope,
    moving: bool,
}

/// The plugin's syntax of an instruction, checked: the kind and operation among the names it
/// knows, a scope mdvault reads, and a `parent` scope exactly when there is a destination.
/// What those values may be combined into is the patch's own rule (`PatchSpec::build`).
fn parse(ins: &Instruction, names: &Spelling) -> Result<Parsed> {
    let field = |body: &str, header: &str| {
        if ins.from_body { body.to_string() } else { header.to_string() }
    };
    let kind = ins.kind.to_ascii_lowercase();
    if !URL_KINDS.contains(&kind.as_str()) {
        return Err(invalid(format!(
            "{} {} is not one of heading, block or frontmatter",
            field("targetType", "Target-Type"),
            ins.kind
        )));
    }
    let operation = ins.operation.to_ascii_lowercase();
    if !known_operation(&operation) {
        return Err(invalid(format!(
            "{} {} is not one of append, prepend, replace or delete",
            names.operation, ins.operation
        )));
    }
    let moving = ins.scope.as_deref().is_some_and(|s| s.eq_ignore_ascii_case("parent"));
    // A frontmatter key has no section to carry; the patch's own rules (`PatchSpec::build`)
    // take heading and block moves from here.
    if moving != ins.destination.is_some() || (moving && kind == "frontmatter") {
        return Err(invalid(format!(
            "a move is {} parent with operation replace, a heading target and a {}; {} {} with {} {} is outside the operation×scope algebra",
            names.scope,
            names.destination,
            kind,
            field("target", "Target"),
            names.operation,
            operation
        )));
    }
    let scope: Scope = match ins.scope.as_deref() {
        _ if moving => Scope::Content,
        None => Scope::Content,
        Some(s) => s.parse().map_err(|_| {
            invalid(format!(
                "{} {s} is outside the operation×scope algebra mdvault supports: use content, marker or markerAndContent",
                names.scope
            ))
        })?,
    };
    Ok(Parsed { kind, operation, scope, moving })
}

/// A heading or block instruction as the one typed patch: the content from `content` or a JSON
/// `value`, the target joined as the resolver reads it, and the rules applied by
/// `PatchSpec::build` (its refusals carry the plugin's 40081).
fn section_patch(
    ins: &Instruction,
    p: &Parsed,
    legacy: bool,
    names: &Spelling,
) -> Result<PatchRequest> {
    let (kind, operation) = (&p.kind, &p.operation);
    let content = match (&ins.content, &ins.value) {
        (Some(c), _) => c.clone(),
        (None, Some(v)) => value_markdown(v).ok_or_else(|| {
            invalid(format!("a {kind} target takes {} as Markdown text, or a JSON value that is a string or an array of rows", names.content))
        })?,
        (None, None) if operation == "delete" || p.moving => String::new(),
        (None, None) => {
            return Err(invalid(format!(
                "a {operation} of a {kind} target needs {}: the Markdown to put in",
                if ins.from_body { "content" } else { "a body" }
            )));
        }
    };
    let target = if kind == "block" {
        let id = ins.target.join("");
        format!("^{}", id.trim_start_matches('^'))
    } else {
        ins.target.iter().map(|s| s.trim()).collect::<Vec<_>>().join("::")
    };
    let delete = operation == "delete";
    let spec = PatchSpec {
        target,
        operation: if delete { Operation::Replace } else { operation.parse()? },
        delete,
        scope: p.scope,
        content,
        allow_empty: ins.allow_empty,
        create_missing: ins.create,
        reject_if_present: ins.reject_if_present,
        within: ins.within,
        // 2.x content takes its heading levels relative to the target; 1.x as written.
        relative_levels: !legacy,
        move_to: ins.destination.as_ref().map(destination).transpose()?,
    };
    spec.build(names).map_err(|e| e.with_compat(ERR_INSTRUCTION_INVALID))
}

async fn apply(
    engine: Arc<Engine>,
    target: Target,
    path: String,
    headers: &HeaderMap,
    ins: Instruction,
    legacy: bool,
) -> Result<Response> {
    let names = if ins.from_body { &Spelling::JSON } else { &Spelling::HEADERS };
    let parsed = parse(&ins, names)?;
    let section = match parsed.kind.as_str() {
        "frontmatter" => None,
        _ => Some(section_patch(&ins, &parsed, legacy, names)?),
    };
    // The version token a 2.x client sends (`ifMatch`, or `If-Match`) is the note's etag.
    let expected = ins.if_match.clone().or(if_match(headers)?);
    // 2.x answers in the plugin's statuses: a stale version is 412, a missing target 404.
    let v2 = !legacy;
    let plugin_status = move |e: Error| -> Error {
        match e.code() {
            ErrorCode::Conflict if v2 => Error::new(ErrorCode::VersionMismatch, e.message()),
            ErrorCode::NoSuchHeading if v2 => Error::new(ErrorCode::NotFound, e.message()),
            _ => e,
        }
    };
    if v2 {
        check_frontmatter(&engine, &target, &path).await?;
    }
    let change = match section {
        None => frontmatter_patch(&engine, &target, &path, &ins, &parsed, expected).await,
        Some(req) => {
            let (e, t, p) = (engine.clone(), target.clone(), path.clone());
            blocking(move || tools::patch_built(&e, &t, None, &p, &req, expected.as_deref())).await
        }
    }
    .map_err(plugin_status)?;
    respond(engine, target, path, headers, change, legacy).await
}

/// The answer to a PATCH: the confirmation when asked for, else the whole note as it now is
/// (as the plugin answers), marked deprecated for 1.x and carrying the edit's warnings.
async fn respond(
    engine: Arc<Engine>,
    target: Target,
    path: String,
    headers: &HeaderMap,
    change: crate::vault::Change,
    legacy: bool,
) -> Result<Response> {
    let warned = warnings_header(&change.warnings);
    if wants_confirmation(headers) {
        let mut resp = change_response(headers, change);
        if legacy {
            resp.headers_mut()
                .insert("deprecation", HeaderValue::from_static(compat::DEPRECATED_1X));
        }
        if let Some(w) = warned {
            resp.headers_mut().insert(WARNINGS_HEADER, w);
        }
        return Ok(resp);
    }
    // The plugin answers a PATCH with the whole note as it now is.
    let a = tools::ReadArgs { vault: None, path, section: None };
    let r = blocking(move || tools::read(&engine, &target, a)).await?;
    let mut resp =
        (StatusCode::OK, [(header::CONTENT_TYPE, "text/markdown; charset=utf-8")], r.content)
            .into_response();
    if legacy {
        resp.headers_mut().insert("deprecation", HeaderValue::from_static(compat::DEPRECATED_1X));
    }
    if let Some(w) = warned {
        resp.headers_mut().insert(WARNINGS_HEADER, w);
    }
    Ok(with_etag(resp, Some(&r.etag)))
}

/// The plugin's `Markdown-Patch-Warnings` value: the warnings as JSON, percent-encoded,
/// because a message quotes note text and a header value must be ASCII. None without any.
fn warnings_header(ws: &[edit::Warning]) -> Option<HeaderValue> {
    if ws.is_empty() {
        return None;
    }
    let json = crate::wire::warnings(ws).to_string();
    let encoded = percent_encoding::utf8_percent_encode(&json, percent_encoding::NON_ALPHANUMERIC)
        .to_string();
    HeaderValue::from_str(&encoded).ok()
}

/// A note whose frontmatter is not YAML is refused before any 2.x edit (40005), as the plugin
/// does, rather than patched around.
async fn check_frontmatter(engine: &Arc<Engine>, target: &Target, path: &str) -> Result<()> {
    let a = tools::ReadArgs { vault: None, path: path.to_string(), section: None };
    let (e, t) = (engine.clone(), target.clone());
    let r = blocking(move || tools::read(&e, &t, a)).await?;
    if let Err(why) = crate::vault::frontmatter::parse_strict(&r.content) {
        return Err(bad(format!(
            "the frontmatter of {path} is not valid YAML ({why}); fix it (PUT the note) before patching"
        ))
        .with_compat(compat::ERR_FRONTMATTER_YAML));
    }
    Ok(())
}

/// Frontmatter: replace sets, delete removes, append and prepend extend a list (or a string).
async fn frontmatter_patch(
    engine: &Arc<Engine>,
    target: &Target,
    path: &str,
    ins: &Instruction,
    parsed: &Parsed,
    expected: Option<String>,
) -> Result<crate::vault::Change> {
    let operation = parsed.operation.as_str();
    let key = ins.target.join("");
    match parsed.scope {
        Scope::Content => {}
        Scope::Marker => {
            return rename_key(engine, target, path, ins, operation, key, expected).await;
        }
        Scope::MarkerAndContent if operation != "delete" => {
            return put_entries(engine, target, path, ins, operation, key, expected).await;
        }
        // Deleting the entry is what a content delete already does: the key goes.
        Scope::MarkerAndContent => {}
    }
    if ins.content.is_some() && ins.value.is_none() && ins.from_body {
        return Err(invalid(format!(
            "a frontmatter write takes value (a JSON value), not content; send {{\"value\": ...}} for `{key}`"
        )));
    }
    let value = match operation {
        "delete" => None,
        _ => {
            Some(ins.value.clone().or_else(|| ins.content.clone().map(Value::String)).ok_or_else(
                || invalid(format!("a {operation} of frontmatter `{key}` needs value")),
            )?)
        }
    };
    let (value, expected) = match (operation, value) {
        ("append" | "prepend", Some(v)) => {
            let a = tools::ReadArgs { vault: None, path: path.to_string(), section: None };
            let (e, t) = (engine.clone(), target.clone());
            let r = blocking(move || tools::read(&e, &t, a)).await?;
            let merged = extend(r.frontmatter.get(&key), v, operation == "prepend", &key)?;
            // The read's etag guards the write, so a change in between is refused, not lost.
            (Some(merged), expected.or(Some(r.etag)))
        }
        (_, v) => (v, expected),
    };
    let delete = value.is_none();
    let a = tools::SetFrontmatterArgs { delete, value, ..tools::SetFrontmatterArgs::of(path, key) };
    let (e, t) = (engine.clone(), target.clone());
    blocking(move || tools::set_frontmatter(&e, &t, a, expected.as_deref())).await
}

/// Frontmatter `scope: marker`: a replace renames the key to the content (or a string value).
async fn rename_key(
    engine: &Arc<Engine>,
    target: &Target,
    path: &str,
    ins: &Instruction,
    operation: &str,
    key: String,
    expected: Option<String>,
) -> Result<crate::vault::Change> {
    if operation != "replace" {
        return Err(invalid(format!(
            "scope marker on frontmatter `{key}` renames the key, which is operation replace, not {operation}"
        )));
    }
    let new = ins
        .content
        .clone()
        .or_else(|| ins.value.as_ref().and_then(Value::as_str).map(str::to_string))
        .map(|n| n.trim().to_string())
        .filter(|n| !n.is_empty())
        .ok_or_else(|| {
            invalid(format!("renaming frontmatter `{key}` needs the new name as content"))
        })?;
    let a = tools::SetFrontmatterArgs {
        rename_to: Some(new),
        ..tools::SetFrontmatterArgs::of(path, key)
    };
    let (e, t) = (engine.clone(), target.clone());
    blocking(move || tools::set_frontmatter(&e, &t, a, expected.as_deref())).await
}

/// Frontmatter `scope: markerAndContent`: the value is an object of new entries, put after
/// (append), before (prepend) or in place of (replace) the target key.
async fn put_entries(
    engine: &Arc<Engine>,
    target: &Target,
    path: &str,
    ins: &Instruction,
    operation: &str,
    key: String,
    expected: Option<String>,
) -> Result<crate::vault::Change> {
    use crate::vault::frontmatter::Place;
    let Some(Value::Object(entries)) = &ins.value else {
        return Err(invalid(format!(
            "scope markerAndContent on frontmatter `{key}` takes value as an object of whole entries, {{\"key\": value}}"
        )));
    };
    let place = match operation {
        "append" => Place::After,
        "prepend" => Place::Before,
        _ => Place::Instead,
    };
    let entries: Vec<(String, Value)> =
        entries.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    let a = tools::EntriesArgs { vault: None, path: path.to_string(), anchor: key, place, entries };
    let (e, t) = (engine.clone(), target.clone());
    blocking(move || tools::frontmatter_entries(&e, &t, a, expected.as_deref())).await
}

/// `old` extended by `new`: a list gains the new items (once each), a string the new text.
fn extend(old: Option<&Value>, new: Value, front: bool, key: &str) -> Result<Value> {
    Ok(match (old, new) {
        (None | Some(Value::Null), v) => v,
        (Some(Value::Array(items)), v) => {
            let mut items = items.clone();
            let added = match v {
                Value::Array(more) => more,
                one => vec![one],
            };
            let fresh: Vec<Value> = added.into_iter().filter(|a| !items.contains(a)).collect();
            if front {
                items.splice(0..0, fresh);
            } else {
                items.extend(fresh);
            }
            Value::Array(items)
        }
        (Some(Value::String(s)), Value::String(t)) => {
            Value::String(if front { format!("{t}{s}") } else { format!("{s}{t}") })
        }
        (Some(other), v) => {
            return Err(bad(format!(
                "frontmatter `{key}` holds {other}, which {v} cannot be added to; replace it instead"
            )));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn url_targets_split_the_note_from_the_target() {
        let (note, kind, segs) = url_target("Notes/a.md/heading/A/B").unwrap();
        assert_eq!((note.as_str(), kind.as_str()), ("Notes/a.md", "heading"));
        assert_eq!(segs, ["A", "B"]);
        assert_eq!(url_target("a.md/block/x").unwrap().2, ["x"]);
        assert!(url_target("Notes/a.md").is_none());
    }

    #[test]
    fn json_rows_become_table_rows() {
        assert_eq!(value_markdown(&json!([["a", 1], ["b", 2]])).unwrap(), "| a | 1 |\n| b | 2 |");
        assert!(value_markdown(&json!({"k": 1})).is_none());
    }

    #[test]
    fn lists_gain_new_items_once_and_strings_grow() {
        let old = json!(["a", "b"]);
        assert_eq!(
            extend(Some(&old), json!(["b", "c"]), false, "k").unwrap(),
            json!(["a", "b", "c"])
        );
        assert_eq!(extend(Some(&old), json!("z"), true, "k").unwrap(), json!(["z", "a", "b"]));
        assert_eq!(extend(Some(&json!("x")), json!("y"), false, "k").unwrap(), json!("xy"));
        assert_eq!(extend(None, json!(1), false, "k").unwrap(), json!(1));
        assert!(extend(Some(&json!(3)), json!("y"), false, "k").is_err());
    }
}
