//! The page's own files, compiled into the binary: the stylesheet, the one script and the
//! icons. Each is answered with a strong `ETag` (a hash of its bytes, so a new build is a new
//! tag) and `304 Not Modified` when the browser already holds it, and the text files gzipped
//! for a browser that accepts it.
//!
//! The files never change while the server runs, so each is hashed and compressed once, on
//! first use, rather than per answer.

use std::io::Write;
use std::sync::OnceLock;

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

/// One compiled-in file and its answers, made once.
pub(crate) struct File {
    content_type: &'static str,
    bytes: &'static [u8],
    /// Text worth compressing (the icons are already small).
    compress: bool,
    made: OnceLock<Made>,
}

/// A file's tags and its gzipped bytes.
struct Made {
    etag: String,
    /// `None`: not compressed (an icon, or gzip would not make it smaller).
    gzip: Option<(String, Vec<u8>)>,
}

impl File {
    const fn new(content_type: &'static str, bytes: &'static [u8], compress: bool) -> File {
        File { content_type, bytes, compress, made: OnceLock::new() }
    }

    fn made(&self) -> &Made {
        self.made.get_or_init(|| {
            let hash = Sha256::digest(self.bytes);
            let hex: String = hash[..12].iter().map(|b| format!("{b:02x}")).collect();
            let gzip = self.compress.then(|| gzipped(self.bytes)).flatten();
            // A strong tag names one representation: the gzipped bytes get their own.
            Made { etag: format!("\"{hex}\""), gzip: gzip.map(|g| (format!("\"{hex}-gz\""), g)) }
        })
    }

    /// The answer to a GET: the bytes (gzipped when the request accepts it) with their tag,
    /// or `304` when `If-None-Match` already names it.
    pub(crate) fn answer(&'static self, request: &HeaderMap) -> Response {
        let made = self.made();
        let (etag, body, gzip) = match &made.gzip {
            Some((etag, bytes)) if accepts_gzip(request) => (etag, bytes.as_slice(), true),
            _ => (&made.etag, self.bytes, false),
        };
        let mut resp = if matches(request, etag) {
            StatusCode::NOT_MODIFIED.into_response()
        } else {
            ([(header::CONTENT_TYPE, self.content_type)], body).into_response()
        };
        let h = resp.headers_mut();
        if let Ok(v) = HeaderValue::from_str(etag) {
            h.insert(header::ETAG, v);
        }
        // `no-cache` is "ask before using": with the tag, asking costs a 304 and no bytes, and a
        // new build is picked up at once.
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        if self.compress {
            h.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
        }
        if gzip {
            h.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        }
        resp
    }
}

/// The stylesheet.
pub(crate) static CSS: File =
    File::new("text/css; charset=utf-8", include_bytes!("assets/app.css"), true);
/// The script: search as you type, copy buttons, the build progress poll. No framework.
pub(crate) static JS: File =
    File::new("text/javascript; charset=utf-8", include_bytes!("assets/app.js"), true);
/// The page's icon, for browsers that take SVG.
pub(crate) static ICON_SVG: File =
    File::new("image/svg+xml", include_bytes!("assets/icon.svg"), false);
/// `/favicon.ico`, which browsers and tools ask for on their own.
pub(crate) static FAVICON: File =
    File::new("image/x-icon", include_bytes!("assets/favicon.ico"), false);

fn gzipped(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(bytes).ok()?;
    enc.finish().ok().filter(|g| g.len() < bytes.len())
}

/// Whether `Accept-Encoding` takes gzip (named, or `*`, and not at `q=0`).
fn accepts_gzip(request: &HeaderMap) -> bool {
    request.get_all(header::ACCEPT_ENCODING).iter().filter_map(|v| v.to_str().ok()).any(|v| {
        v.split(',').any(|coding| {
            let mut parts = coding.split(';').map(str::trim);
            let name = parts.next().unwrap_or_default();
            let refused = parts.any(|p| {
                p.strip_prefix("q=").and_then(|q| q.parse::<f32>().ok()).is_some_and(|q| q == 0.0)
            });
            (name.eq_ignore_ascii_case("gzip") || name == "*") && !refused
        })
    })
}

/// Whether `If-None-Match` names `etag` (or is `*`); a weak form of the tag matches too, as
/// the comparison for `If-None-Match` is the weak one.
fn matches(request: &HeaderMap, etag: &str) -> bool {
    request.get_all(header::IF_NONE_MATCH).iter().filter_map(|v| v.to_str().ok()).any(|v| {
        v.split(',').map(str::trim).any(|t| t == "*" || t.strip_prefix("W/").unwrap_or(t) == etag)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, v.parse().unwrap());
        }
        h
    }

    #[test]
    fn gzip_is_taken_when_named_or_starred_and_not_refused() {
        assert!(accepts_gzip(&headers(&[("accept-encoding", "gzip, deflate, br")])));
        assert!(accepts_gzip(&headers(&[("accept-encoding", "br;q=1.0, *;q=0.5")])));
        assert!(!accepts_gzip(&headers(&[("accept-encoding", "gzip;q=0, br")])));
        assert!(!accepts_gzip(&headers(&[("accept-encoding", "identity")])));
        assert!(!accepts_gzip(&HeaderMap::new()));
    }

    #[test]
    fn if_none_match_names_the_tag_in_a_list_or_weakly() {
        let tag = "\"abc\"";
        assert!(matches(&headers(&[("if-none-match", "\"x\", \"abc\"")]), tag));
        assert!(matches(&headers(&[("if-none-match", "W/\"abc\"")]), tag));
        assert!(matches(&headers(&[("if-none-match", "*")]), tag));
        assert!(!matches(&headers(&[("if-none-match", "\"abcd\"")]), tag));
    }

    #[test]
    fn the_stylesheet_gzipped_is_smaller_and_has_its_own_tag() {
        let made = CSS.made();
        let (gz_tag, gz) = made.gzip.as_ref().expect("gzipped");
        assert!(gz.len() < CSS.bytes.len());
        assert_ne!(gz_tag, &made.etag);
        let mut out = String::new();
        std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(gz.as_slice()), &mut out)
            .unwrap();
        assert_eq!(out.as_bytes(), CSS.bytes);
    }
}
