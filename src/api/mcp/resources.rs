//! MCP resources: every note, filed document and raster image of the vaults a connection
//! reaches, addressed as `mdvault://{vault}/{+path}` (the one [`TEMPLATE`]).
//!
//! [`list`] pages through them in a fixed order (the vaults in configured order, each one's
//! files by path) with an opaque cursor that names the last resource sent, so a page is at
//! most [`PAGE`] resources however large the vault, and a file present throughout a walk is
//! listed exactly once even when others come and go between pages. [`read`] answers a note as
//! its Markdown, a filed document as its extracted text (or, with `?original`, its bytes), and
//! an image as [`crate::api::preview`] scales it (or, with `?original`, as it is).
//!
//! A URI is a caller's path like any other: [`Address::parse`] percent-decodes it and refuses
//! dot segments, then the read goes through the front door (`crate::service`), so the path
//! gate, the connection's vault binding and the forgiving lookup decide exactly as they do for
//! `vault_read`. Refusals become JSON-RPC errors: a missing file is resource-not-found
//! (-32002; rmcp sends -32602 for it to a client on 2026-07-28 or later, as that revision
//! says), anything else `invalid_params` with the house's code in the message.
//!
//! Subscriptions are not offered: over HTTP the server is stateless (every POST stands alone),
//! so there is no session to send `notifications/resources/updated` to, and a declared
//! `subscribe` that never fires would mislead a client.

use std::borrow::Cow;

use base64::Engine as _;
use rmcp::ErrorData;
use rmcp::model::{Resource, ResourceContents, ResourceTemplate};

use crate::api::preview::{self, Preview};
use crate::engine::Engine;
use crate::error::{Error, ErrorCode, Result};
use crate::service::{self as tools, Target};
use crate::vault::Vault;
use crate::vault::attachment::{self, AttachmentKind};
use crate::vault::path::Suffixes;

/// The URI template of every resource: the vault's name, then its path inside the vault
/// (RFC 6570 reserved expansion, so the path's slashes stay slashes).
pub(crate) const TEMPLATE: &str = "mdvault://{vault}/{+path}";

/// The scheme and authority marker every resource URI starts with.
const SCHEME: &str = "mdvault://";

/// The query that asks for a document's or an image's bytes as they are on disk.
const ORIGINAL: &str = "original";

/// Resources per `resources/list` page: a page of paths and sizes stays a few tens of
/// kilobytes, well under any client's message limit, while a 10,000-note vault lists in 50
/// round trips.
pub(crate) const PAGE: usize = 200;

/// Bytes the URI leaves as they are: RFC 3986's unreserved characters. Everything else in a
/// vault name or a path segment is percent-encoded, so `#`, `?` and `%` in a file name cannot
/// be read as a fragment, a query or an escape.
const ENCODED: &percent_encoding::AsciiSet =
    &percent_encoding::NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// The template as `resources/templates/list` shows it.
pub(crate) fn template() -> ResourceTemplate {
    ResourceTemplate::new(TEMPLATE, "note")
        .with_title("A note, document or image in a vault")
        .with_description(
            "Any note (text/markdown), filed document (its extracted text; add ?original for \
             the file) or image (scaled to at most 1024 pixels a side; ?original for the file) \
             of a served vault, by vault name and vault-relative path. completion/complete \
             completes both.",
        )
}

/// The URI of one file.
pub(crate) fn uri(vault: &str, path: &str) -> String {
    let encode = |s| percent_encoding::utf8_percent_encode(s, ENCODED).to_string();
    let path: Vec<String> = path.split('/').map(encode).collect();
    format!("{SCHEME}{}/{}", encode(vault), path.join("/"))
}

/// A resource URI, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Address {
    /// The vault's name.
    pub(crate) vault: String,
    /// The path inside it, percent-decoded.
    pub(crate) path: String,
    /// `?original`: the file's bytes rather than its text or preview.
    pub(crate) original: bool,
}

impl Address {
    /// Reads `mdvault://VAULT/PATH[?original]`. A `?` starts the query only when what follows
    /// is one this server knows, so a client that expanded `{+path}` without encoding a `?` in
    /// a file name still names that file; `#` is never a fragment, for the same reason. Dot
    /// segments are refused rather than resolved: a resource names a file as it is listed.
    pub(crate) fn parse(raw: &str) -> Result<Address> {
        let bad = |why: &str| {
            Error::new(
                ErrorCode::InvalidRequest,
                format!("'{raw}' is not a resource URI: {why}; resources read as {TEMPLATE}"),
            )
        };
        let Some(rest) = raw.strip_prefix(SCHEME) else {
            return Err(bad("it does not start with mdvault://"));
        };
        let (rest, original) = match rest.rsplit_once('?') {
            Some((before, ORIGINAL)) => (before, true),
            _ => (rest, false),
        };
        let Some((vault, path)) = rest.split_once('/') else {
            return Err(bad("it names no path after the vault"));
        };
        let decode = |s: &str| {
            percent_encoding::percent_decode_str(s).decode_utf8().map(Cow::into_owned).map_err(
                |_| {
                    Error::new(
                        ErrorCode::InvalidPath,
                        format!("'{raw}' is not valid UTF-8 once percent-decoded"),
                    )
                },
            )
        };
        let (vault, path) = (decode(vault)?, decode(path)?);
        if vault.is_empty() {
            return Err(bad("it names no vault"));
        }
        if path.is_empty() {
            return Err(bad("it names no path after the vault"));
        }
        if path.split('/').any(|s| s == "." || s == "..") {
            return Err(Error::new(
                ErrorCode::InvalidPath,
                format!("'{path}' has a . or .. segment; name the file by its path from the root"),
            ));
        }
        Ok(Address { vault, path, original })
    }

    /// The path as the front door reads it: prefixed with the vault's name, which picks that
    /// vault by the one rule (`Vaults::locate`) and keeps any colon in the path its own.
    fn prefixed(&self) -> String {
        format!("{}:{}", self.vault, self.path)
    }
}

/// What a listed file is, which decides its media type and how it reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A `.md` note.
    Note,
    /// A filed document (a configured document suffix).
    Document,
    /// A raster image, with its media type.
    Image(&'static str),
}

impl Kind {
    /// What a file is as a resource, or `None` when it is not one (audio, video, an SVG,
    /// anything else): a resource is something a model can read.
    pub(crate) fn of(v: &Vault, rel: &str) -> Option<Kind> {
        if Suffixes::is_note(rel) {
            return Some(Kind::Note);
        }
        if v.is_document(rel) {
            return Some(Kind::Document);
        }
        attachment::kind_of(rel)
            .filter(|a| a.kind == AttachmentKind::Image)
            .map(|a| Kind::Image(a.media_type))
    }

    /// The media type `resources/list` shows.
    fn media_type(self, rel: &str) -> &'static str {
        match self {
            Kind::Note => "text/markdown",
            Kind::Document if rel.to_ascii_lowercase().ends_with(".pdf") => "application/pdf",
            Kind::Document => "application/octet-stream",
            Kind::Image(media_type) => media_type,
        }
    }
}

/// One listed file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Listed {
    /// Vault-relative path.
    pub(crate) path: String,
    /// Size in bytes.
    pub(crate) size: u64,
    /// What it is.
    pub(crate) kind: Kind,
}

/// Where a listing goes on: after this file of this vault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cursor {
    vault: String,
    after: String,
}

impl Cursor {
    /// Opaque to the client: base64 of the vault and the path, which no vault name contains
    /// a NUL to confuse.
    pub(crate) fn encode(&self) -> String {
        let plain = format!("{}\0{}", self.vault, self.after);
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(plain)
    }

    /// A cursor this server gave, or the refusal of one it did not.
    pub(crate) fn decode(raw: &str) -> Result<Cursor> {
        let bad = || {
            Error::new(
                ErrorCode::InvalidRequest,
                format!(
                    "'{raw}' is not a cursor resources/list gave; start again without a cursor"
                ),
            )
        };
        let bytes =
            base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(raw).map_err(|_| bad())?;
        let plain = String::from_utf8(bytes).map_err(|_| bad())?;
        let (vault, after) = plain.split_once('\0').ok_or_else(bad)?;
        Ok(Cursor { vault: vault.to_string(), after: after.to_string() })
    }
}

/// One page: each listed file with its vault, and the cursor of the next page when there is
/// more.
type Page = (Vec<(String, Listed)>, Option<Cursor>);

/// One page of the resources of `vaults` (in order) after `cursor`, at most `size` long, and
/// the cursor of the next page when there is more. `files` lists one vault's resources sorted
/// by path; it is called only for the vaults this page reaches, so a page costs one or two
/// walks, not one per vault.
pub(crate) fn page(
    vaults: &[&str],
    mut files: impl FnMut(&str) -> Vec<Listed>,
    cursor: Option<&Cursor>,
    size: usize,
) -> Result<Page> {
    let start = match cursor {
        None => 0,
        Some(c) => vaults.iter().position(|v| *v == c.vault).ok_or_else(|| {
            Error::new(
                ErrorCode::InvalidRequest,
                format!(
                    "the cursor is in vault '{}', which this connection does not reach; start \
                     again without a cursor",
                    c.vault
                ),
            )
        })?,
    };
    let mut out: Vec<(String, Listed)> = Vec::new();
    for (i, vault) in vaults.iter().enumerate().skip(start) {
        let after = cursor.filter(|_| i == start).map(|c| c.after.as_str());
        let rest = files(vault).into_iter().filter(|f| after.is_none_or(|a| f.path.as_str() > a));
        for f in rest {
            if out.len() == size {
                // One more exists: the page is full and the cursor points past its last item.
                let (vault, last) =
                    out.last().map(|(v, l)| (v.clone(), l.path.clone())).unwrap_or_default();
                return Ok((out, Some(Cursor { vault, after: last })));
            }
            out.push((vault.to_string(), f));
        }
    }
    Ok((out, None))
}

/// A vault's resources, sorted by path.
pub(crate) fn files(v: &Vault) -> Vec<Listed> {
    v.scan()
        .into_iter()
        .filter(|f| !f.path.split('/').any(crate::vault::census::barren))
        .filter_map(|f| Some(Listed { kind: Kind::of(v, &f.path)?, path: f.path, size: f.size }))
        .collect()
}

/// `resources/list`: one page after `cursor`, and the next page's cursor.
pub(crate) fn list(
    e: &Engine,
    t: &Target,
    cursor: Option<&str>,
) -> Result<(Vec<Resource>, Option<String>)> {
    let cursor = cursor.filter(|c| !c.is_empty()).map(Cursor::decode).transpose()?;
    let vaults = tools::reachable(e, t)?;
    let names: Vec<&str> = vaults.iter().map(|v| v.name()).collect();
    // What the client's grant cannot see is no resource (a read of it is `not_found`).
    let walk = |name: &str| match vaults.iter().find(|v| v.name() == name) {
        Some(v) => {
            let mut found = files(v);
            found.retain(|f| !tools::hidden(v, &t.grant, &f.path));
            found
        }
        None => Vec::new(),
    };
    let (listed, next) = page(&names, walk, cursor.as_ref(), PAGE)?;
    let resources = listed
        .into_iter()
        .map(|(vault, f)| {
            let name = f.path.rsplit('/').next().unwrap_or(&f.path).to_string();
            Resource::new(uri(&vault, &f.path), name)
                .with_title(f.path.clone())
                .with_mime_type(f.kind.media_type(&f.path))
                .with_size(f.size)
        })
        .collect();
    Ok((resources, next.map(|c| c.encode())))
}

/// Whether `resources/read` of `uri` decodes an image: a preview of a raster image (not its
/// `?original` bytes). A URI that does not parse decodes nothing; `read` refuses it.
pub(crate) fn decodes(uri: &str) -> bool {
    Address::parse(uri).is_ok_and(|at| !at.original && preview::decodes(&at.path))
}

/// `resources/read`: the file `uri` names, in the form its kind and query ask for.
pub(crate) fn read(e: &Engine, t: &Target, uri: &str) -> Result<Vec<ResourceContents>> {
    let at = Address::parse(uri)?;
    // A name that is no vault would otherwise be read as part of a path in the default vault.
    let v = e.vaults().get(Some(&at.vault))?;
    let raw = at.prefixed();
    let blob = |bytes: &[u8], media_type: &str| {
        let data = base64::engine::general_purpose::STANDARD.encode(bytes);
        ResourceContents::blob(data, uri).with_mime_type(media_type)
    };
    if let Some(kind) = attachment::kind_of(&at.path) {
        if at.original {
            let a = preview::original(e, t, None, &raw)?;
            return Ok(vec![blob(&a.bytes, kind.media_type)]);
        }
        let args = tools::ReadArgs { vault: None, path: raw, section: None };
        return Ok(vec![match preview::read(e, t, args)? {
            Preview::Image { bytes, media_type, .. } => blob(&bytes, media_type),
            Preview::Described(text) => ResourceContents::text(text, uri),
        }]);
    }
    if v.is_document(&at.path) && at.original {
        let (rel, bytes) = tools::document_bytes(e, t, None, &raw)?;
        return Ok(vec![blob(&bytes, Kind::Document.media_type(&rel))]);
    }
    let args = tools::ReadArgs { vault: None, path: raw, section: None };
    let read = tools::read(e, t, args)?;
    let media_type = if read.extraction.is_some() { "text/plain" } else { "text/markdown" };
    Ok(vec![ResourceContents::text(read.content, uri).with_mime_type(media_type)])
}

/// A refusal as a JSON-RPC error: a missing file is resource-not-found, with what to do next;
/// anything else keeps the house's code in its message.
pub(crate) fn rpc_error(e: &Error) -> ErrorData {
    match e.code() {
        ErrorCode::NotFound => ErrorData::resource_not_found(
            format!(
                "Refused (not_found): {}. resources/list lists what there is, and \
                 completion/complete completes a path",
                e.message().trim_end_matches('.')
            ),
            None,
        ),
        ErrorCode::InternalError => {
            tracing::error!("a resource read failed with internal_error: {}", e.message());
            ErrorData::internal_error(format!("Refused (internal_error): {}", e.message()), None)
        }
        code => ErrorData::invalid_params(format!("Refused ({code}): {}", e.message()), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_round_trip_through_encoding_for_every_tricky_path() {
        for (vault, path) in [
            ("main", "Home/Boiler.md"),
            ("main", "Home/My Note.md"),
            ("main", "Personal/Recipes/麻婆豆腐.md"),
            ("main", "Ideas/#1 idea.md"),
            ("main", "Finance/50% off.md"),
            ("main", "What?.md"),
            ("main", "a/b/c/d/e.pdf"),
            ("my vault", "Home/x:y.md"),
            ("main", "Mortgage — Tallowmere Building Society.md"),
        ] {
            let u = uri(vault, path);
            assert!(!u[SCHEME.len()..].contains([' ', '#', '?']), "{u}");
            let at = Address::parse(&u).unwrap_or_else(|e| panic!("{u}: {}", e.message()));
            assert_eq!((at.vault.as_str(), at.path.as_str(), at.original), (vault, path, false));
            let at = Address::parse(&format!("{u}?original")).unwrap();
            assert_eq!((at.path.as_str(), at.original), (path, true));
        }
    }

    #[test]
    fn a_uri_a_client_expanded_without_encoding_still_names_the_file() {
        let cases = [
            ("mdvault://main/Home/My Note.md", "Home/My Note.md", false),
            ("mdvault://main/Ideas/#1 idea.md", "Ideas/#1 idea.md", false),
            ("mdvault://main/What?.md", "What?.md", false),
            ("mdvault://main/What?.md?original", "What?.md", true),
            ("mdvault://main/Files/a.pdf?original", "Files/a.pdf", true),
            ("mdvault://main/Home/Boiler%2Emd", "Home/Boiler.md", false),
        ];
        for (raw, path, original) in cases {
            let at = Address::parse(raw).unwrap_or_else(|e| panic!("{raw}: {}", e.message()));
            assert_eq!((at.path.as_str(), at.original), (path, original), "{raw}");
        }
    }

    #[test]
    fn only_a_raster_images_preview_waits_for_an_image_turn() {
        let cases = [
            ("mdvault://main/Home/boiler.png", true),
            ("mdvault://main/Home/photo.JPG", true),
            ("mdvault://main/Home/boiler.png?original", false),
            ("mdvault://main/Home/plan.svg", false),
            ("mdvault://main/Home/clip.mp4", false),
            ("mdvault://main/Home/Boiler.md", false),
            ("mdvault://main/../boiler.png", false),
        ];
        for (uri, decodes) in cases {
            assert_eq!(super::decodes(uri), decodes, "{uri}");
        }
    }

    #[test]
    fn dot_segments_and_malformed_uris_are_refused_with_the_house_codes() {
        let cases = [
            ("mdvault://main/../etc/passwd", ErrorCode::InvalidPath),
            ("mdvault://main/Home/%2E%2E/%2E%2E/x.md", ErrorCode::InvalidPath),
            ("mdvault://main/./x.md", ErrorCode::InvalidPath),
            ("mdvault://main/Home/%FF.md", ErrorCode::InvalidPath),
            ("file:///etc/passwd", ErrorCode::InvalidRequest),
            ("mdvault://main", ErrorCode::InvalidRequest),
            ("mdvault://main/", ErrorCode::InvalidRequest),
            ("mdvault:///Home/Boiler.md", ErrorCode::InvalidRequest),
        ];
        for (raw, code) in cases {
            let err = Address::parse(raw).err().unwrap_or_else(|| panic!("{raw} was accepted"));
            assert_eq!(err.code(), code, "{raw}: {}", err.message());
        }
    }

    fn listed(paths: &[&str]) -> Vec<Listed> {
        paths.iter().map(|p| Listed { path: p.to_string(), size: 1, kind: Kind::Note }).collect()
    }

    /// Every page of a walk to the end, with the vaults' files as given.
    fn walk(vaults: &[(&str, Vec<Listed>)], size: usize) -> Vec<Vec<(String, String)>> {
        let names: Vec<&str> = vaults.iter().map(|(n, _)| *n).collect();
        let files = |n: &str| vaults.iter().find(|(v, _)| *v == n).unwrap().1.clone();
        let mut pages = Vec::new();
        let mut cursor: Option<Cursor> = None;
        loop {
            let (items, next) = page(&names, files, cursor.as_ref(), size).unwrap();
            pages.push(items.into_iter().map(|(v, f)| (v, f.path)).collect());
            match next {
                // Through its wire form, as a client hands it back.
                Some(c) => cursor = Some(Cursor::decode(&c.encode()).unwrap()),
                None => return pages,
            }
        }
    }

    #[test]
    fn paging_reaches_every_file_of_every_vault_once_in_bounded_pages() {
        let a: Vec<String> = (0..7).map(|i| format!("a/{i:02}.md")).collect();
        let b: Vec<String> = (0..5).map(|i| format!("b {i}/#%?.md")).collect();
        let a_refs: Vec<&str> = a.iter().map(String::as_str).collect();
        let b_refs: Vec<&str> = b.iter().map(String::as_str).collect();
        let vaults = [("one", listed(&a_refs)), ("empty", Vec::new()), ("two", listed(&b_refs))];
        for size in [1, 2, 3, 5, 7, 12, 100] {
            let pages = walk(&vaults, size);
            assert!(pages.iter().all(|p| p.len() <= size), "{size}: {pages:?}");
            assert!(pages[..pages.len() - 1].iter().all(|p| p.len() == size), "{size}");
            let all: Vec<(String, String)> = pages.into_iter().flatten().collect();
            let expected: Vec<(String, String)> = a
                .iter()
                .map(|p| ("one".to_string(), p.clone()))
                .chain(b.iter().map(|p| ("two".to_string(), p.clone())))
                .collect();
            assert_eq!(all, expected, "{size}");
        }
        assert_eq!(walk(&[("empty", Vec::new())], 3), vec![Vec::new()]);
    }

    #[test]
    fn a_file_added_or_removed_between_pages_does_not_repeat_or_skip_the_others() {
        let names = ["v"];
        let first = listed(&["a.md", "b.md", "c.md", "d.md"]);
        let (page1, next) = page(&names, |_| first.clone(), None, 2).unwrap();
        assert_eq!(
            page1.iter().map(|(_, f)| f.path.as_str()).collect::<Vec<_>>(),
            ["a.md", "b.md"]
        );
        // b.md is deleted and a new file sorts before the cursor: neither disturbs the rest.
        let later = listed(&["a.md", "aa.md", "c.md", "d.md"]);
        let (page2, next) = page(&names, |_| later.clone(), next.as_ref(), 2).unwrap();
        assert_eq!(
            page2.iter().map(|(_, f)| f.path.as_str()).collect::<Vec<_>>(),
            ["c.md", "d.md"]
        );
        assert_eq!(next, None);
    }

    #[test]
    fn a_cursor_this_server_did_not_give_is_refused_with_what_to_do() {
        for raw in ["not base64!", "aGVsbG8", ""] {
            let err = Cursor::decode(raw).err().unwrap_or_else(|| panic!("{raw} was taken"));
            assert_eq!(err.code(), ErrorCode::InvalidRequest);
            assert!(err.message().contains("start again without a cursor"), "{}", err.message());
        }
        let elsewhere = Cursor { vault: "other".into(), after: "a.md".into() };
        let err = page(&["v"], |_| Vec::new(), Some(&elsewhere), 2).err().unwrap();
        assert!(err.message().contains("start again without a cursor"), "{}", err.message());
    }
}
