//! The Local REST API's periodic note routes: `/periodic/<period>/` (today's note) and
//! `/periodic/<period>/<year>/<month>/<day>/` (the note holding that date), each optionally
//! followed by a URL target (`/periodic/daily/heading/Log`), with the verbs of `/vault/`.
//!
//! This module only finds the note (`service::periodic_note`, by the vault's own Obsidian
//! settings) and creates a missing one from its template before a write that edits part of it
//! (`service::periodic_create`); `rest.rs` then hands the request to its `/vault/` route for
//! that path, so reads, writes, PATCH formats, `If-Match` and the answers are exactly
//! `/vault/`'s, and [`settle`] finishes the answer. It decides nothing about notes itself. A
//! refused write leaves no note it created behind.

use std::sync::Arc;

use axum::http::{HeaderMap, HeaderValue, Method, Uri, header};
use axum::response::Response;
use chrono::NaiveDate;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

use super::common::{bad, blocking};
use crate::engine::Engine;
use crate::error::{Error, ErrorCode, Result};
use crate::service::{self as tools, Target};

/// The plugin's number for a period it does not know.
pub(crate) const ERR_NO_SUCH_PERIOD: u32 = 40460;
/// The plugin's number for a periodic note that is not there (a read or delete).
pub(crate) const ERR_NO_PERIODIC_NOTE: u32 = 40461;

/// The verbs these routes take, as an `Allow` value.
pub(crate) const ALLOWED: &str = "GET, HEAD, PUT, POST, PATCH, DELETE";

/// What a path segment keeps unencoded when the note's path becomes a `/vault/` URL or a
/// `Content-Location` (the characters JavaScript's `encodeURI`, which the plugin uses, keeps
/// in a path, less those that mean something in a URL).
const PATH_SEGMENT: &AsciiSet =
    &NON_ALPHANUMERIC.remove(b'/').remove(b'-').remove(b'_').remove(b'.').remove(b'~');

/// A request path after `/periodic/`, taken apart.
#[derive(Debug, PartialEq, Eq)]
struct Request {
    period: String,
    date: Option<NaiveDate>,
    /// The URL target after the note (`/heading/Log`), still percent-encoded; empty for the
    /// whole note.
    target: String,
}

/// Parses `daily/`, `daily/2026/1/2/` and either followed by a URL target. A segment of
/// digits after the period starts a date, which must then be a whole, real one.
fn parse(rest: &str) -> Result<Request> {
    let segments: Vec<&str> = rest.split('/').collect();
    let period = percent_encoding::percent_decode_str(segments[0])
        .decode_utf8()
        .map_err(|_| bad("the period is not valid UTF-8 once percent-decoded"))?
        .into_owned();
    if period.is_empty() {
        return Err(Error::new(
            ErrorCode::NotFound,
            "name a period: /periodic/daily/ (or weekly, monthly, quarterly, yearly)",
        )
        .with_compat(ERR_NO_SUCH_PERIOD));
    }
    let digits = |s: &&str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let (date, tail) = if segments.get(1).is_some_and(digits) {
        let form =
            "a date is /periodic/<period>/<year>/<month>/<day>/, as /periodic/daily/2026/1/31/";
        let [y, m, d] = [1, 2, 3].map(|i| segments.get(i).copied().filter(digits));
        let (Some(y), Some(m), Some(d)) = (y, m, d) else {
            return Err(bad(format!("{rest} is not a whole date; {form}")));
        };
        let date = match (y.parse::<i32>(), m.parse::<u32>(), d.parse::<u32>()) {
            (Ok(y), Ok(m), Ok(d)) if y.to_string().len() == 4 => NaiveDate::from_ymd_opt(y, m, d),
            _ => None,
        }
        .ok_or_else(|| bad(format!("{y}/{m}/{d} is not a date; {form}")))?;
        (Some(date), &segments[4..])
    } else {
        (None, &segments[1..])
    };
    let target = tail.join("/");
    let target = target.trim_end_matches('/');
    // Only a URL target may follow the note: anything else names no resource, as an unknown
    // route does (the `/vault/` route would read it as a folder under the note's name).
    let kind = target.split('/').next().unwrap_or("");
    let url_target =
        ["heading", "block", "frontmatter"].contains(&kind) && target.len() > kind.len() + 1;
    if !target.is_empty() && !url_target {
        return Err(Error::new(
            ErrorCode::NotFound,
            format!(
                "there is nothing at /periodic/{rest}: after the period (and date) only a URL \
                 target may follow, as heading/<name>, block/<id> or frontmatter/<key>"
            ),
        ));
    }
    let target = if target.is_empty() { String::new() } else { format!("/{target}") };
    Ok(Request { period, date, target })
}

/// The verbs these routes take.
pub(crate) const VERBS: [Method; 6] =
    [Method::GET, Method::HEAD, Method::PUT, Method::POST, Method::PATCH, Method::DELETE];

/// A request made ready for the `/vault/` route: the URL to hand it, and what to do after.
pub(crate) struct Prepared {
    /// `/vault/<note path><URL target>?<query>`.
    pub(crate) uri: Uri,
    /// The note's path, percent-encoded, for `Content-Location`.
    location: String,
    /// The note's path.
    path: String,
    /// The etag of the note this request created from its template, if it did.
    created: Option<Option<String>>,
}

/// Finds the note `uri` (`/periodic/...`) names and, for a write that edits part of it,
/// creates it from its template when missing. Refuses an unknown period (40460), a read or
/// delete of a note not there (40461), a disabled period and a malformed date.
pub(crate) async fn prepare(
    engine: Arc<Engine>,
    target: &Target,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
) -> Result<Prepared> {
    let rest = uri.path().strip_prefix("/periodic/").unwrap_or("");
    let req = parse(rest)?;
    let (e, t, period, date) = (engine.clone(), target.clone(), req.period.clone(), req.date);
    let note =
        blocking(move || tools::periodic_note(&e, &t, &period, date)).await.map_err(|e| {
            if e.code() == ErrorCode::NotFound { e.with_compat(ERR_NO_SUCH_PERIOD) } else { e }
        })?;
    let missing = || {
        let when = req.date.map_or_else(|| "today".to_string(), |d| d.to_string());
        let from = if note.settings.template.is_some() { " from its template" } else { "" };
        Error::new(
            ErrorCode::NotFound,
            format!(
                "there is no {} note for {when} yet (it would be {}); PUT or POST to this URL \
                 creates it{from}",
                note.settings.period, note.path
            ),
        )
        .with_compat(ERR_NO_PERIODIC_NOTE)
    };
    // The URL is made before the note is: nothing after creating it may fail here, since
    // only `settle` removes a note this request made.
    let location = utf8_percent_encode(&note.path, PATH_SEGMENT).to_string();
    let pq = match uri.query() {
        Some(q) => format!("/vault/{location}{}?{q}", req.target),
        None => format!("/vault/{location}{}", req.target),
    };
    let uri = pq.parse().map_err(|_| bad(format!("{} does not make a valid URL", req.target)))?;
    let mut created = None;
    match *method {
        Method::GET | Method::HEAD | Method::DELETE if !note.exists => return Err(missing()),
        Method::DELETE if !req.target.is_empty() => {
            return Err(Error::new(
                ErrorCode::MethodNotAllowed,
                "DELETE removes a whole periodic note; to empty a section, PATCH it with \
                 Operation: replace",
            ));
        }
        // A whole-note PUT replaces everything, so a template would be written only to be
        // overwritten; every other write edits the note the template starts.
        Method::PUT if req.target.is_empty() && !headers.contains_key("target-type") => {}
        Method::PUT | Method::POST | Method::PATCH if !note.exists => {
            let (e, t, n, d) = (engine.clone(), target.clone(), note.clone(), req.date);
            created =
                blocking(move || tools::periodic_create(&e, &t, &n, d)).await?.map(|c| c.etag);
        }
        _ => {}
    }
    Ok(Prepared { uri, location, path: note.path, created })
}

/// The `/vault/` route's answer, finished: `Content-Location` on a success, as the plugin
/// answers; on a refusal, the note this request created is removed again (unless someone
/// changed it since: its etag no longer matches), so the refusal leaves the vault as it was.
pub(crate) async fn settle(
    engine: Arc<Engine>,
    target: Target,
    prepared: Prepared,
    mut resp: Response,
) -> Response {
    if resp.status().is_success() {
        if let Ok(v) = HeaderValue::from_str(&prepared.location) {
            resp.headers_mut().insert(header::CONTENT_LOCATION, v);
        }
    } else if let Some(etag) = prepared.created {
        let path = prepared.path.clone();
        let undone = blocking(move || {
            let a = tools::DeleteArgs { vault: None, path, permanent: true };
            tools::delete(&engine, &target, a, etag.as_deref())
        })
        .await;
        if let Err(e) = undone {
            tracing::warn!("kept {} after a refused edit: {e}", prepared.path);
        }
    }
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_split_into_period_date_and_url_target() {
        let today = parse("daily/").unwrap();
        assert_eq!((today.period.as_str(), today.date, today.target.as_str()), ("daily", None, ""));
        assert_eq!(parse("weekly").unwrap().period, "weekly");
        let dated = parse("daily/2026/1/31/").unwrap();
        assert_eq!(dated.date, NaiveDate::from_ymd_opt(2026, 1, 31));
        assert_eq!(dated.target, "");
        let targeted = parse("daily/2026/01/02/heading/Log%20Book/").unwrap();
        assert_eq!(targeted.date, NaiveDate::from_ymd_opt(2026, 1, 2));
        assert_eq!(targeted.target, "/heading/Log%20Book");
        assert_eq!(parse("daily/heading/Log").unwrap().target, "/heading/Log");
    }

    #[test]
    fn an_unknown_tail_after_the_period_names_nothing() {
        for tail in ["daily/foo", "daily/foo/bar/", "daily/2026/1/2/extra", "daily/heading/"] {
            let e = parse(tail).unwrap_err();
            assert_eq!(e.code(), ErrorCode::NotFound, "{tail}: {e:?}");
            assert!(e.message().contains("heading/<name>"), "{tail}: {e:?}");
        }
    }

    #[test]
    fn a_date_must_be_whole_and_real() {
        for bad in ["daily/2026/2/30/", "daily/2026/13/1/", "daily/2026/1/", "daily/26/1/2/"] {
            let e = parse(bad).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidRequest, "{bad}: {e:?}");
            assert!(e.message().contains("/periodic/daily/2026/1/31/"), "{bad}: {e:?}");
        }
        assert_eq!(parse("").unwrap_err().code(), ErrorCode::NotFound);
    }
}
