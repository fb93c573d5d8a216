//! The small HTTP helpers every REST route shares: headers, query pairs, bodies held to
//! their limits, `ETag`s, the 204-or-confirmation answer of a write, and the refusals of a
//! file verb on a folder. Shapes only; the routes that use them are `rest/` and `patch.rs`, and
//! `ranges.rs` takes its `ETag`.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};

use super::compat;
use super::guard::refusal;
use crate::engine::Engine;
use crate::error::{Error, ErrorCode, Result};
use crate::wire;

pub(super) fn text(s: impl Into<String>) -> Response {
    ([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], s.into()).into_response()
}

pub(super) fn json_body(v: impl serde::Serialize) -> Response {
    axum::Json(v).into_response()
}

pub(super) fn bad(msg: impl Into<String>) -> Error {
    Error::new(ErrorCode::InvalidRequest, msg)
}

/// A parameter of a query or form read as a map, trimmed; empty is none. The web page and
/// OAuth's authorization request read theirs so.
pub(super) fn trimmed_param<'a>(
    q: &'a std::collections::HashMap<String, String>,
    name: &str,
) -> Option<&'a str> {
    q.get(name).map(|s| s.trim()).filter(|s| !s.is_empty())
}

/// Runs a blocking engine call off the async workers.
pub(super) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(f).await.unwrap_or_else(|e| {
        Err(Error::new(ErrorCode::InternalError, format!("the request failed unexpectedly: {e}")))
    })
}

/// The query string as ordered pairs.
/// The query string as decoded pairs. A name given twice is refused: every parameter is
/// a single value, and quietly taking one of two would answer a question nobody asked.
pub(super) fn pairs(q: &Option<String>) -> Result<Vec<(String, String)>> {
    let dec = |s: &str| {
        percent_encoding::percent_decode_str(&s.replace('+', " ")).decode_utf8_lossy().into_owned()
    };
    let mut out: Vec<(String, String)> = Vec::new();
    for p in q.as_deref().unwrap_or_default().split('&').filter(|p| !p.is_empty()) {
        let (k, v) = p.split_once('=').unwrap_or((p, ""));
        let (k, v) = (dec(k), dec(v));
        if out.iter().any(|(seen, _)| *seen == k) {
            return Err(bad(format!(
                "the query parameter {k} is given more than once; give it once"
            )));
        }
        out.push((k, v));
    }
    Ok(out)
}

pub(super) fn param<'a>(q: &'a [(String, String)], name: &str) -> Option<&'a str> {
    q.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

/// A boolean flag: present and empty, or 1/true/yes/on.
pub(super) fn flag(q: &[(String, String)], name: &str) -> bool {
    param(q, name).is_some_and(|v| {
        let v = v.trim().to_ascii_lowercase();
        v.is_empty() || matches!(v.as_str(), "1" | "true" | "yes" | "on")
    })
}

pub(super) fn header_str<'a>(h: &'a HeaderMap, name: &str) -> Result<Option<&'a str>> {
    match h.get(name) {
        None => Ok(None),
        Some(v) => v
            .to_str()
            .map(|s| Some(s.trim()))
            .map_err(|_| bad(format!("the {name} header is not readable text"))),
    }
}

pub(super) fn wants_json(h: &HeaderMap) -> bool {
    h.get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|a| a.contains("application/json") || a.contains("+json"))
}

/// `If-Match` as a bare content hash (quotes and a weak prefix removed).
pub(super) fn if_match(h: &HeaderMap) -> Result<Option<String>> {
    Ok(header_str(h, "if-match")?
        .map(|v| v.trim_start_matches("W/").trim_matches('"').to_string())
        .filter(|v| !v.is_empty() && v != "*"))
}

/// The decoded vault path after a route prefix such as `/vault`.
pub(super) fn tail(uri: &Uri, prefix: &str) -> Result<String> {
    let raw = uri.path().strip_prefix(prefix).unwrap_or("");
    let raw = raw.strip_prefix('/').unwrap_or(raw);
    percent_encoding::percent_decode_str(raw).decode_utf8().map(|s| s.into_owned()).map_err(|_| {
        Error::new(ErrorCode::InvalidPath, "the path is not valid UTF-8 once percent-decoded")
    })
}

pub(super) fn too_large() -> Error {
    Error::new(
        ErrorCode::PayloadTooLarge,
        "the request body is larger than server.max_body_bytes allows; send less, or raise the \
         limit",
    )
}

/// Whether reading the body failed because it stopped arriving (see `limits::BODY_READ_TIMEOUT`).
pub(super) fn stalled(rejection: &BytesRejection) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(rejection);
    while let Some(e) = cause {
        if e.is::<tower_http::timeout::TimeoutError>() {
            return true;
        }
        cause = e.source();
    }
    false
}

/// The body as bytes. The transport limit is the larger of `server.max_body_bytes` and
/// `vault.doc_max_bytes`, so an oversized document is refused with `document_too_large`.
pub(super) fn body_bytes(body: std::result::Result<Bytes, BytesRejection>) -> Result<Bytes> {
    body.map_err(|r| {
        if r.status() == StatusCode::PAYLOAD_TOO_LARGE {
            too_large()
        } else if stalled(&r) {
            Error::new(
                ErrorCode::RequestTimeout,
                format!(
                    "the request body stopped arriving for {} seconds before it was whole; \
                     send a Content-Length that matches the body, and all of the body at once",
                    super::limits::BODY_READ_TIMEOUT.as_secs()
                ),
            )
        } else {
            bad(format!("the request body could not be read: {r}"))
        }
    })
}

/// The body of a note verb as UTF-8, held to `server.max_body_bytes`.
pub(super) fn body_text(
    engine: &Engine,
    body: std::result::Result<Bytes, BytesRejection>,
) -> Result<String> {
    let bytes = body_bytes(body)?;
    if bytes.len() as u64 > engine.config().server.max_body_bytes {
        return Err(too_large());
    }
    String::from_utf8(bytes.to_vec())
        .map_err(|_| bad("the request body is not valid UTF-8; send Markdown as UTF-8 text"))
}

pub(super) fn with_etag(mut resp: Response, etag: Option<&str>) -> Response {
    if let Some(e) = etag
        && let Ok(v) = HeaderValue::from_str(&format!("\"{e}\""))
    {
        resp.headers_mut().insert(header::ETAG, v);
    }
    resp
}

/// Whether `If-None-Match` names `etag` (quoted, as sent in `ETag`) or is `*`: the copy the
/// client holds is current, and a `304` answers it. A weak form of the tag matches too, as the
/// comparison for `If-None-Match` is the weak one (RFC 9110 §13.1.2).
pub(super) fn none_match(request: &HeaderMap, etag: &str) -> bool {
    request.get_all(header::IF_NONE_MATCH).iter().filter_map(|v| v.to_str().ok()).any(|v| {
        v.split(',').map(str::trim).any(|t| t == "*" || t.strip_prefix("W/").unwrap_or(t) == etag)
    })
}

/// Whether the client asked for a confirmation of a write: `Accept` naming JSON or plain text.
/// Without one a write is answered 204, as the Local REST API answers its clients.
pub(super) fn wants_confirmation(h: &HeaderMap) -> bool {
    h.get(header::ACCEPT).and_then(|v| v.to_str().ok()).is_some_and(|a| {
        a.contains("application/json") || a.contains("+json") || a.contains("text/plain")
    })
}

/// A whole-file write's answer: the confirmation when asked for (see [`wants_confirmation`]),
/// else 204 with the new etag.
pub(super) fn write_response(h: &HeaderMap, c: crate::vault::Change) -> Response {
    if wants_confirmation(h) {
        return change_response(h, c);
    }
    with_etag(StatusCode::NO_CONTENT.into_response(), c.etag.as_deref())
}

/// The refusal of a file verb sent to a folder path (one ending in `/`).
pub(super) fn files_only(method: &Method) -> Response {
    let mut resp = refusal(
        &Error::new(
            ErrorCode::MethodNotAllowed,
            format!(
                "{method} works on files, and a path ending in / names a folder; name a note, \
                 or use /folder/ for folders"
            ),
        )
        .with_compat(compat::ERR_FILES_ONLY),
    );
    resp.headers_mut().insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
    resp
}

pub(super) fn change_response(h: &HeaderMap, c: crate::vault::Change) -> Response {
    let etag = c.etag.clone();
    let resp = if wants_json(h) { json_body(wire::change(&c)) } else { text(c.message + "\n") };
    with_etag(resp, etag.as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_flags_follow_the_predecessor() {
        let q = pairs(&Some("a&b=&c=YES&d=0&e=on+&f=maybe&g=%31".into())).unwrap();
        let set: Vec<bool> =
            ["a", "b", "c", "d", "e", "f", "g", "h"].iter().map(|n| flag(&q, n)).collect();
        assert_eq!(set, [true, true, true, false, true, false, true, false]);
    }

    #[test]
    fn a_query_parameter_given_twice_is_refused_rather_than_guessed() {
        let e = pairs(&Some("q=a&k=&k=5".into())).unwrap_err();
        assert_eq!(e.code().as_str(), "invalid_request");
        assert!(e.message().contains("k is given more than once"), "{}", e.message());
        assert_eq!(pairs(&Some("q=a&k=5".into())).unwrap().len(), 2);
    }

    #[test]
    fn if_none_match_names_the_tag_in_a_list_or_weakly() {
        let headers = |v: &str| {
            let mut h = HeaderMap::new();
            h.append(header::IF_NONE_MATCH, v.parse().unwrap());
            h
        };
        let tag = "\"abc\"";
        assert!(none_match(&headers("\"x\", \"abc\""), tag));
        assert!(none_match(&headers("W/\"abc\""), tag));
        assert!(none_match(&headers("*"), tag));
        assert!(!none_match(&headers("\"abcd\""), tag));
        assert!(!none_match(&HeaderMap::new(), tag));
    }
}
