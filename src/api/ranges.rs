//! An attachment's bytes over HTTP, whole or by range (RFC 9110 §14): which bytes a request's
//! `Range` and `If-Range` ask for, and the answer that sends them (206), sends all of the file
//! (200) or says they lie past its end (416). Decided here once for REST's `/vault/` and the
//! page's `/ui/attachment`. Ranges matter to players: Safari, on a phone above all, will not
//! play audio or video from a server that answers its `Range: bytes=0-1` with the whole file.

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use http_range_header::{ParsedRanges, RangeUnsatisfiableError};

use crate::error::{Error, ErrorCode};
use crate::vault::attachment::{AttachmentKind, AttachmentType, Extent, Opened, Span, SpanRead};

/// What a request asks of an attachment's bytes, read from its headers once.
pub(super) struct Asked {
    /// The byte ranges of a `Range` header that parsed.
    ranges: Option<ParsedRanges>,
    /// The `If-Range` validator, as sent.
    if_range: Option<String>,
}

impl Asked {
    /// Reads `Range` and `If-Range`. A `Range` that does not parse (another unit, a typo) is
    /// ignored, as RFC 9110 §14.2 lets a server do: the whole file answers it, which every
    /// client can use, where a refusal would leave a player with nothing.
    pub(super) fn from_headers(h: &HeaderMap) -> Asked {
        let ranges = h
            .get(header::RANGE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| http_range_header::parse_range_header(v.trim()).ok());
        let if_range = h.get(header::IF_RANGE).map(|v| v.to_str().unwrap_or_default().to_string());
        Asked { ranges, if_range }
    }

    /// The bytes to read from a file of this extent.
    pub(super) fn span(&self, extent: &Extent) -> Span {
        let Some(ranges) = &self.ranges else { return Span::Whole };
        let span = self.ranged(ranges, extent);
        // An `If-Range` the file no longer matches asks for the whole file. A date is checked
        // here; an entity tag (Chromium's media cache resumes a video with the one it holds)
        // is the hash of all the file's bytes, so it is checked as the file is read. A weak
        // tag never matches: `If-Range` compares strongly (RFC 9110 §13.1.5).
        match self.if_range.as_deref().map(str::trim) {
            None => span,
            Some(_) if span == Span::Whole => Span::Whole,
            Some(tag) if tag.starts_with('"') => match tag[1..].strip_suffix('"') {
                Some(etag) => Span::IfTagged { etag: etag.to_string(), then: Box::new(span) },
                None => Span::Whole,
            },
            Some(date) if same_second(date, extent.modified) => span,
            Some(_) => Span::Whole,
        }
    }

    /// The bytes the ranges name in a file of this extent, whatever `If-Range` says.
    fn ranged(&self, ranges: &ParsedRanges, extent: &Extent) -> Span {
        match ranges.validate(extent.total) {
            Ok(v) if v.len() == 1 => Span::Bytes(v[0].clone()),
            // Several ranges would need a multipart answer, which no player asks for; the
            // whole file is the answer RFC 9110 allows instead. An empty file has no range.
            Ok(_) => Span::Whole,
            Err(RangeUnsatisfiableError::Unsatisfiable) => Span::Beyond,
            // Overlapping ranges may be ignored (RFC 9110 §14.2).
            Err(_) => Span::Whole,
        }
    }
}

/// Whether an `If-Range` date names the second the file was last modified.
fn same_second(if_range: &str, modified: Option<std::time::SystemTime>) -> bool {
    match (httpdate::parse_http_date(if_range.trim()), modified) {
        (Ok(asked), Some(m)) => httpdate::fmt_http_date(asked) == httpdate::fmt_http_date(m),
        _ => false,
    }
}

/// The answer to a span read: the whole file (200, with its `ETag`, or 304 when the request's
/// `If-None-Match` already names it), the part asked for (206, with `Content-Range`), or
/// `range_not_satisfiable` (416, with the length in `Content-Range`) made by the surface's own
/// `refuse`. The bytes are sent as they are read from the open file, so a long video costs a
/// buffer, not its length in memory. Every answer says ranges are taken, and carries
/// `Last-Modified` where the file system gives it, for a later `If-Range`.
pub(super) fn answer(
    read: SpanRead,
    request: &HeaderMap,
    refuse: impl FnOnce(&Error) -> Response,
) -> Response {
    let (mut resp, kind, extent) = match read {
        SpanRead::Whole { kind, extent, etag, body, .. } => {
            let quoted = format!("\"{etag}\"");
            // A phone shows a note's images again and again: the tag it holds costs a 304.
            let resp = if super::common::none_match(request, &quoted) {
                StatusCode::NOT_MODIFIED.into_response()
            } else {
                sent(StatusCode::OK, kind, body)
            };
            (super::common::with_etag(resp, Some(&etag)), kind, extent)
        }
        SpanRead::Part { kind, extent, start, body } => {
            let end = start + body.len - 1;
            let mut resp = sent(StatusCode::PARTIAL_CONTENT, kind, body);
            insert(
                &mut resp,
                header::CONTENT_RANGE,
                format!("bytes {start}-{end}/{}", extent.total),
            );
            (resp, kind, extent)
        }
        SpanRead::Beyond { path, extent } => {
            let e = Error::new(
                ErrorCode::RangeNotSatisfiable,
                format!(
                    "the range asked for starts past the end of {path}, which is {} bytes long; \
                     ask for bytes before that, or leave Range out for the whole file",
                    extent.total
                ),
            );
            let mut resp = refuse(&e);
            insert(&mut resp, header::CONTENT_RANGE, format!("bytes */{}", extent.total));
            insert(&mut resp, header::ACCEPT_RANGES, "bytes".into());
            return resp;
        }
    };
    let h = resp.headers_mut();
    h.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    last_modified(&mut resp, &extent);
    if is_vector(kind) {
        let csp = HeaderValue::from_static(super::sanitize::SVG_CSP);
        resp.headers_mut().insert(header::CONTENT_SECURITY_POLICY, csp);
    }
    resp
}

/// Marks an answer with the file's `Last-Modified`, where the file system gives it: what a
/// later `If-Range` names.
pub(super) fn last_modified(resp: &mut Response, extent: &Extent) {
    if let Some(m) = extent.modified
        && let Ok(v) = HeaderValue::from_str(&httpdate::fmt_http_date(m))
    {
        resp.headers_mut().insert(header::LAST_MODIFIED, v);
    }
}

/// How many bytes are read from the file per piece of the body sent.
const PIECE: usize = 256 * 1024;

/// An answer whose body is `body.len` bytes of the open file, read a piece at a time as the
/// client takes them. Its `Content-Length` is given, since a stream has no length of its own;
/// a file cut short meanwhile ends the body early, which the client sees as a broken answer
/// rather than as short bytes.
fn sent(status: StatusCode, kind: AttachmentType, body: Opened) -> Response {
    let file = tokio::io::AsyncReadExt::take(tokio::fs::File::from_std(body.file), body.len);
    let stream = tokio_util::io::ReaderStream::with_capacity(file, PIECE);
    let mut resp = (status, [(header::CONTENT_TYPE, kind.media_type)], Body::from_stream(stream))
        .into_response();
    resp.headers_mut().insert(header::CONTENT_LENGTH, HeaderValue::from(body.len));
    resp
}

/// An SVG is a document that can carry script: it is served under a policy that runs none
/// and loads nothing, and `nosniff` keeps every attachment the type its suffix says.
fn is_vector(kind: AttachmentType) -> bool {
    kind.kind == AttachmentKind::Vector
}

fn insert(resp: &mut Response, name: header::HeaderName, value: String) {
    if let Ok(v) = HeaderValue::from_str(&value) {
        resp.headers_mut().insert(name, v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, SystemTime};

    fn asked(range: Option<&str>, if_range: Option<&str>) -> Asked {
        let mut h = HeaderMap::new();
        if let Some(r) = range {
            h.insert(header::RANGE, HeaderValue::from_str(r).unwrap());
        }
        if let Some(r) = if_range {
            h.insert(header::IF_RANGE, HeaderValue::from_str(r).unwrap());
        }
        Asked::from_headers(&h)
    }

    fn extent(total: u64) -> Extent {
        Extent {
            total,
            modified: Some(SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000)),
        }
    }

    #[test]
    fn a_players_probe_an_open_end_and_a_suffix_each_pick_their_bytes() {
        assert_eq!(asked(Some("bytes=0-1"), None).span(&extent(100)), Span::Bytes(0..=1));
        assert_eq!(asked(Some("bytes=40-"), None).span(&extent(100)), Span::Bytes(40..=99));
        assert_eq!(asked(Some("bytes=-10"), None).span(&extent(100)), Span::Bytes(90..=99));
        // An end past the file is the file's end (RFC 9110 §14.1.2).
        assert_eq!(asked(Some("bytes=90-500"), None).span(&extent(100)), Span::Bytes(90..=99));
    }

    #[test]
    fn no_range_a_range_that_does_not_parse_several_ranges_or_an_empty_file_read_it_whole() {
        assert_eq!(asked(None, None).span(&extent(100)), Span::Whole);
        assert_eq!(asked(Some("pages=1-2"), None).span(&extent(100)), Span::Whole);
        assert_eq!(asked(Some("bytes=5-2"), None).span(&extent(100)), Span::Whole);
        assert_eq!(asked(Some("bytes=0-1,10-20"), None).span(&extent(100)), Span::Whole);
        assert_eq!(asked(Some("bytes=-5"), None).span(&extent(0)), Span::Whole);
    }

    #[test]
    fn a_range_starting_past_the_end_is_beyond() {
        assert_eq!(asked(Some("bytes=100-"), None).span(&extent(100)), Span::Beyond);
        assert_eq!(asked(Some("bytes=0-0"), None).span(&extent(0)), Span::Beyond);
    }

    #[test]
    fn if_range_keeps_the_range_only_for_the_files_own_second() {
        let e = extent(100);
        let same = httpdate::fmt_http_date(e.modified.unwrap());
        let other = httpdate::fmt_http_date(e.modified.unwrap() + Duration::from_secs(1));
        assert_eq!(asked(Some("bytes=0-1"), Some(&same)).span(&e), Span::Bytes(0..=1));
        assert_eq!(asked(Some("bytes=0-1"), Some(&other)).span(&e), Span::Whole);
        let unknown = Extent { modified: None, ..e };
        assert_eq!(asked(Some("bytes=0-1"), Some(&same)).span(&unknown), Span::Whole);
    }

    #[test]
    fn if_range_with_a_strong_tag_keeps_the_range_only_if_the_file_hashes_to_it() {
        let e = extent(100);
        let tagged = |then: Span| Span::IfTagged { etag: "abc".into(), then: Box::new(then) };
        assert_eq!(asked(Some("bytes=0-1"), Some("\"abc\"")).span(&e), tagged(Span::Bytes(0..=1)));
        assert_eq!(asked(Some("bytes=100-"), Some(" \"abc\" ")).span(&e), tagged(Span::Beyond));
        // A weak tag, a malformed one, or a range that asks for all of it: the whole file.
        for tag in ["W/\"abc\"", "\"abc", "abc"] {
            assert_eq!(asked(Some("bytes=0-1"), Some(tag)).span(&e), Span::Whole, "{tag}");
        }
        assert_eq!(asked(Some("bytes=0-1,4-5"), Some("\"abc\"")).span(&e), Span::Whole);
    }
}
