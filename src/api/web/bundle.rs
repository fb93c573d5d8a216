//! The page's own files, compiled into the binary: the stylesheet, the one script and the
//! icons. Each is answered with a strong `ETag` (a hash of its bytes, so a new build is a new
//! tag) and `304 Not Modified` when the browser already holds it, and the text files brotli-
//! or gzip-compressed for a browser that accepts either (`Accept-Encoding`, its `q` values
//! respected), each encoding with a tag of its own.
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

/// How a file's bytes are sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Coding {
    Br,
    Gzip,
    Identity,
}

impl Coding {
    /// The name in `Accept-Encoding` and `Content-Encoding`.
    fn name(self) -> &'static str {
        match self {
            Coding::Br => "br",
            Coding::Gzip => "gzip",
            Coding::Identity => "identity",
        }
    }
}

/// A file's tag and its compressed forms, each with its own tag.
struct Made {
    etag: String,
    /// Each compressed form that came out smaller, best first: brotli, then gzip.
    compressed: Vec<(Coding, String, Vec<u8>)>,
}

impl File {
    const fn new(content_type: &'static str, bytes: &'static [u8], compress: bool) -> File {
        File { content_type, bytes, compress, made: OnceLock::new() }
    }

    fn made(&self) -> &Made {
        self.made.get_or_init(|| {
            let hash = Sha256::digest(self.bytes);
            let hex: String = hash[..12].iter().map(|b| format!("{b:02x}")).collect();
            let mut compressed = Vec::new();
            if self.compress {
                // A strong tag names one representation: each encoding gets its own.
                if let Some(b) = brotlied(self.bytes) {
                    compressed.push((Coding::Br, format!("\"{hex}-br\""), b));
                }
                if let Some(g) = gzipped(self.bytes) {
                    compressed.push((Coding::Gzip, format!("\"{hex}-gz\""), g));
                }
            }
            Made { etag: format!("\"{hex}\""), compressed }
        })
    }

    /// The answer to a GET: the bytes (compressed as the request prefers, among the forms
    /// made) with their tag, or `304` when `If-None-Match` already names it.
    pub(crate) fn answer(&'static self, request: &HeaderMap) -> Response {
        let made = self.made();
        let offered: Vec<Coding> = made.compressed.iter().map(|(c, _, _)| *c).collect();
        let coding = choose(request, &offered);
        let (etag, body) = match made.compressed.iter().find(|(c, _, _)| *c == coding) {
            Some((_, etag, bytes)) => (etag, bytes.as_slice()),
            None => (&made.etag, self.bytes),
        };
        let mut resp = if crate::api::common::none_match(request, etag) {
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
        if coding != Coding::Identity {
            h.insert(header::CONTENT_ENCODING, HeaderValue::from_static(coding.name()));
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

/// The brotli form at its best quality: the work is done once, and the smallest bytes are
/// sent on every page load after.
fn brotlied(bytes: &[u8]) -> Option<Vec<u8>> {
    let params = brotli::enc::BrotliEncoderParams { quality: 11, ..Default::default() };
    let mut out = Vec::new();
    brotli::BrotliCompress(&mut &bytes[..], &mut out, &params).ok()?;
    (out.len() < bytes.len()).then_some(out)
}

/// How much the request wants `coding`, from 0 (refused or not named) to 1: its own entry's
/// `q` (1 when it gives none, or one that does not parse), else the `*` entry's, else 0.
/// Identity, when neither names it, is acceptable at a little above 0.
fn quality(request: &HeaderMap, coding: Coding) -> f32 {
    let mut named = None;
    let mut star = None;
    for value in request.get_all(header::ACCEPT_ENCODING).iter().filter_map(|v| v.to_str().ok()) {
        for entry in value.split(',') {
            let mut parts = entry.split(';').map(str::trim);
            let name = parts.next().unwrap_or_default();
            let q = parts
                .find_map(|p| p.strip_prefix("q=").or_else(|| p.strip_prefix("Q=")))
                .map_or(1.0, |q| q.trim().parse::<f32>().unwrap_or(1.0));
            if name.eq_ignore_ascii_case(coding.name()) {
                named = Some(q);
            } else if name == "*" {
                star = Some(q);
            }
        }
    }
    let fallback = if coding == Coding::Identity { 0.001 } else { 0.0 };
    named.or(star).unwrap_or(fallback)
}

/// The coding to send among those `offered` (the compressed forms made, best first) and
/// identity: the one the request wants most, the smaller one on a tie, never one at `q=0`.
/// Identity is the answer when nothing offered is acceptable, even if the request refuses it
/// too: a body the browser may reject beats a `406` for the page's own stylesheet.
fn choose(request: &HeaderMap, offered: &[Coding]) -> Coding {
    let mut best = (Coding::Identity, quality(request, Coding::Identity));
    for &coding in offered {
        let q = quality(request, coding);
        // Offered best first, so only a strictly higher want displaces a smaller form; identity
        // gives way to a compressed form wanted as much.
        if q > 0.0 && (q > best.1 || (q == best.1 && best.0 == Coding::Identity)) {
            best = (coding, q);
        }
    }
    best.0
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

    fn chosen(accept: &str) -> Coding {
        choose(&headers(&[("accept-encoding", accept)]), &[Coding::Br, Coding::Gzip])
    }

    #[test]
    fn brotli_is_chosen_when_accepted_and_gzip_when_only_it_is() {
        assert_eq!(chosen("gzip, deflate, br"), Coding::Br);
        assert_eq!(chosen("gzip, deflate"), Coding::Gzip);
        assert_eq!(chosen("*"), Coding::Br);
        assert_eq!(chosen("identity"), Coding::Identity);
        assert_eq!(choose(&HeaderMap::new(), &[Coding::Br, Coding::Gzip]), Coding::Identity);
        // Only what was made is offered: an icon is never compressed.
        assert_eq!(choose(&headers(&[("accept-encoding", "br")]), &[]), Coding::Identity);
        assert_eq!(
            choose(&headers(&[("accept-encoding", "gzip, br")]), &[Coding::Gzip]),
            Coding::Gzip
        );
    }

    #[test]
    fn q_values_rank_the_codings_and_q_zero_refuses_one() {
        assert_eq!(chosen("br;q=0, gzip"), Coding::Gzip);
        assert_eq!(chosen("gzip;q=0, br"), Coding::Br);
        assert_eq!(chosen("br;q=0.5, gzip;q=0.8"), Coding::Gzip);
        assert_eq!(chosen("br;q=0.8, gzip;q=0.8"), Coding::Br);
        assert_eq!(chosen("*;q=0.5, gzip;q=0"), Coding::Br);
        assert_eq!(chosen("br;q=0, gzip;q=0"), Coding::Identity);
        assert_eq!(chosen("br;q=0, *;q=0"), Coding::Identity);
        assert_eq!(chosen("gzip; q=0.000, br; q=0"), Coding::Identity);
        // Header lines add up, and names are not case-sensitive.
        let two = headers(&[("accept-encoding", "gzip"), ("accept-encoding", "BR;q=1")]);
        assert_eq!(choose(&two, &[Coding::Br, Coding::Gzip]), Coding::Br);
    }

    fn made_as(made: &Made, coding: Coding) -> (&str, &[u8]) {
        let (_, tag, bytes) =
            made.compressed.iter().find(|(c, _, _)| *c == coding).expect("compressed");
        (tag, bytes)
    }

    #[test]
    fn the_script_compressed_each_way_is_smaller_reads_back_and_has_its_own_tag() {
        let made = JS.made();
        let (br_tag, br) = made_as(made, Coding::Br);
        let (gz_tag, gz) = made_as(made, Coding::Gzip);
        assert!(br.len() < gz.len() && gz.len() < JS.bytes.len(), "{} {}", br.len(), gz.len());
        assert!(br_tag != gz_tag && br_tag != made.etag && gz_tag != made.etag);
        let mut out = Vec::new();
        brotli::BrotliDecompress(&mut &br[..], &mut out).unwrap();
        assert_eq!(out, JS.bytes);
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(gz), &mut out).unwrap();
        assert_eq!(out, JS.bytes);
        assert!(ICON_SVG.made().compressed.is_empty(), "an icon is sent as it is");
    }

    #[test]
    fn each_encoding_answers_with_its_tag_and_304_to_that_tag_only() {
        let ask = |accept: &str, tag: Option<&str>| {
            let mut pairs = vec![("accept-encoding", accept)];
            pairs.extend(tag.map(|t| ("if-none-match", t)));
            CSS.answer(&headers(&pairs))
        };
        let etag = |r: &Response| r.headers()[header::ETAG].to_str().unwrap().to_string();
        let br = ask("gzip, br", None);
        assert_eq!(br.status(), StatusCode::OK);
        assert_eq!(br.headers()[header::CONTENT_ENCODING], "br");
        assert_eq!(br.headers()[header::VARY], "accept-encoding");
        let gz = ask("gzip", None);
        assert_eq!(gz.headers()[header::CONTENT_ENCODING], "gzip");
        let plain = ask("identity", None);
        assert!(plain.headers().get(header::CONTENT_ENCODING).is_none());
        let tags = [etag(&br), etag(&gz), etag(&plain)];
        assert!(tags.iter().all(|t| t.starts_with('"')), "{tags:?}");
        assert!(tags[0] != tags[1] && tags[1] != tags[2] && tags[0] != tags[2], "{tags:?}");
        assert_eq!(ask("gzip, br", Some(&tags[0])).status(), StatusCode::NOT_MODIFIED);
        // A gzip tag held from before does not stand for the brotli bytes.
        assert_eq!(ask("gzip, br", Some(&tags[1])).status(), StatusCode::OK);
        assert_eq!(ask("gzip", Some(&tags[1])).status(), StatusCode::NOT_MODIFIED);
    }
}
