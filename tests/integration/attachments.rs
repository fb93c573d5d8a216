//! Attachments end to end on the real binary: an image, an SVG and an audio file served over
//! REST with their media types and ETags, a clip by the byte ranges a player asks for, a long
//! video sent (and described over MCP) without being held whole, every write of one refused (with the vault
//! unchanged), hidden, traversing and symlinked attachment paths refused, and MCP's
//! `vault_read` answering a large image with image content scaled to the bound.

use std::io::Cursor;

use base64::Engine as _;
use serde_json::json;

use crate::common::{Reply, Server, TempVault};
use crate::serve::mcp;

const HASHING: &[(&str, &str)] = &[("MDVAULT_EMBEDDING__BACKEND", "hashing")];

/// The bound MCP scales images to (`api/preview.rs`'s `MAX_SIDE`).
const MAX_SIDE: u32 = 1024;

const SVG: &str = r#"<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>"#;

/// A PNG of `width` x `height` with a gradient, so a scaled copy is not trivially blank.
pub fn png(width: u32, height: u32) -> Vec<u8> {
    let img = image::RgbImage::from_fn(width, height, |x, y| {
        image::Rgb([(x % 256) as u8, (y % 256) as u8, 90])
    });
    let mut out = Cursor::new(Vec::new());
    image::DynamicImage::ImageRgb8(img).write_to(&mut out, image::ImageFormat::Png).unwrap();
    out.into_inner()
}

/// The fixture vault with attachments beside its notes, served.
fn served() -> (TempVault, Server, Vec<u8>) {
    let v = TempVault::fixture();
    let big = png(3000, 1500);
    std::fs::write(v.root().join("Home/boiler.png"), &big).unwrap();
    std::fs::write(v.root().join("Home/diagram.svg"), SVG).unwrap();
    std::fs::write(v.root().join("Home/hum.mp3"), b"ID3 not really audio").unwrap();
    std::fs::create_dir_all(v.root().join(".obsidian")).unwrap();
    std::fs::write(v.root().join(".obsidian/icon.png"), png(4, 4)).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(v.root().join("Home/boiler.png"), v.root().join("Home/link.png"))
        .unwrap();
    let s = Server::start(&[format!("main={}", v.root().display())], HASHING);
    (v, s, big)
}

/// Asserts a refusal's status and code, and that the vault did not change.
#[track_caller]
fn refused(s: &Server, v: &TempVault, method: &str, path: &str, h: &[(&str, &str)], code: &str) {
    let before = v.snapshot();
    let r: Reply = s.call(method, path, h, Some(b"x"));
    assert_eq!((r.status, r.code().as_str()), (400, code), "{method} {path}: {}", r.body);
    assert_eq!(v.snapshot(), before, "{method} {path} changed the vault");
}

#[test]
fn attachments_are_served_read_only_with_their_media_type_and_etag() {
    let (v, s, big) = served();

    // The bytes as stored (their hash and length), whatever Accept asks for.
    for accept in ["*/*", "application/json", "text/html"] {
        let r = s.call("GET", "/vault/Home/boiler.png", &[("Accept", accept)], None);
        assert_eq!(r.status, 200, "{accept}: {}", r.body);
        assert_eq!(r.header("content-type"), Some("image/png"), "{accept}");
        let etag = format!("\"{}\"", mdvault::vault::content_hash(&big));
        assert_eq!(r.header("etag"), Some(etag.as_str()), "{accept}");
        assert_eq!(r.header("content-length"), Some(big.len().to_string().as_str()));
        assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
        assert_eq!(r.header("content-security-policy"), None);
    }
    // Another case of the name is the same file, as for notes.
    let r = s.call("GET", "/vault/home/BOILER.png", &[], None);
    assert_eq!((r.status, r.header("content-type")), (200, Some("image/png")), "{}", r.body);

    // An SVG is served as it is, under a policy that runs none of its script.
    let r = s.call("GET", "/vault/Home/diagram.svg", &[], None);
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body, SVG);
    assert_eq!(r.header("content-type"), Some("image/svg+xml"));
    assert_eq!(
        r.header("content-security-policy"),
        Some("default-src 'none'; style-src 'unsafe-inline'")
    );
    assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
    let r = s.call("GET", "/vault/Home/hum.mp3", &[], None);
    assert_eq!((r.status, r.header("content-type")), (200, Some("audio/mpeg")));

    // Every write of its bytes is refused, saying attachments are read-only; nothing changes.
    let png = "/vault/Home/boiler.png";
    for method in ["PUT", "POST", "DELETE"] {
        refused(&s, &v, method, png, &[], "attachment_read_only");
    }
    refused(&s, &v, "PUT", "/vault/Home/new.png", &[], "attachment_read_only");
    refused(
        &s,
        &v,
        "PATCH",
        png,
        &[("Target-Type", "body"), ("Operation", "replace")],
        "attachment_read_only",
    );
    // A move is the one write an attachment takes (native_canvas.rs shows its links follow).
    let r = s.call("DELETE", png, &[], None);
    assert!(r.json()["error"].as_str().unwrap().contains("read-only"), "{}", r.body);

    // The gate still stands: hidden, traversing and symlinked paths are refused.
    let mut hostile = vec![
        "/vault/.obsidian/icon.png",
        "/vault/Home/%2E%2E/%2E%2E/etc/x.png",
        "/vault/..%2Fx.png",
    ];
    #[cfg(unix)]
    hostile.push("/vault/Home/link.png");
    for p in hostile {
        let r = s.call("GET", p, &[], None);
        assert_eq!((r.status, r.code().as_str()), (400, "invalid_path"), "{p}: {}", r.body);
    }
    let r = s.call("GET", "/vault/Home/missing.png", &[], None);
    assert_eq!((r.status, r.code().as_str()), (404, "not_found"), "{}", r.body);
}

#[test]
fn a_player_gets_the_byte_range_it_asks_for_and_a_range_past_the_end_is_416_with_the_length() {
    let (v, s, _big) = served();
    let clip: String = (0..1000u32).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
    std::fs::write(v.root().join("Home/clip.mp4"), &clip).unwrap();
    let get = |range: &[(&str, &str)]| s.call("GET", "/vault/Home/clip.mp4", range, None);

    // Safari's first request of a video, then an open end and a suffix: each its bytes, 206.
    for (range, from, to) in [("bytes=0-1", 0, 1), ("bytes=990-", 990, 999), ("bytes=-3", 997, 999)]
    {
        let r = get(&[("Range", range)]);
        assert_eq!(r.status, 206, "{range}: {}", r.body);
        assert_eq!(r.body, clip[from..=to], "{range}");
        let content_range = format!("bytes {from}-{to}/1000");
        assert_eq!(r.header("content-range"), Some(content_range.as_str()), "{range}");
        assert_eq!(r.header("content-type"), Some("video/mp4"), "{range}");
        assert_eq!(r.header("accept-ranges"), Some("bytes"), "{range}");
        assert_eq!(r.header("x-content-type-options"), Some("nosniff"), "{range}");
    }

    // Without Range, or with one that does not parse or asks for two parts: all of it, 200,
    // saying ranges are taken.
    for range in [&[][..], &[("Range", "bytes=x-y")][..], &[("Range", "bytes=0-1,5-6")][..]] {
        let r = get(range);
        assert_eq!((r.status, r.body.len()), (200, 1000), "{range:?}");
        assert_eq!(r.header("accept-ranges"), Some("bytes"), "{range:?}");
        assert!(r.header("etag").is_some(), "{range:?}");
    }

    // If-Range: the file's own Last-Modified or ETag keeps the range (a player resuming the
    // copy it holds); another tag, a weak one or another date is answered with the whole
    // file, which is right whatever changed.
    let whole = get(&[]);
    let modified = whole.header("last-modified").expect("Last-Modified").to_string();
    let etag = whole.header("etag").expect("ETag").to_string();
    for validator in [&modified, &etag] {
        let r = get(&[("Range", "bytes=5-9"), ("If-Range", validator)]);
        assert_eq!((r.status, r.body.as_str()), (206, &clip[5..=9]), "{validator}");
    }
    let weak = format!("W/{etag}");
    for validator in ["\"abc\"", &weak, "Mon, 01 Jan 2001 00:00:00 GMT"] {
        let r = get(&[("Range", "bytes=5-9"), ("If-Range", validator)]);
        assert_eq!((r.status, r.body.len()), (200, 1000), "{validator}");
    }

    // Past the end: 416 with the length, in the closed error table, and nothing changes.
    let before = v.snapshot();
    let r = get(&[("Range", "bytes=1000-")]);
    assert_eq!((r.status, r.code().as_str()), (416, "range_not_satisfiable"), "{}", r.body);
    assert_eq!(r.header("content-range"), Some("bytes */1000"));
    assert!(r.json()["error"].as_str().unwrap().contains("1000 bytes long"), "{}", r.body);
    assert_eq!(v.snapshot(), before);

    // An image takes ranges too, under the same gate.
    let r = s.call("GET", "/vault/Home/diagram.svg", &[("Range", "bytes=0-3")], None);
    assert_eq!((r.status, r.body.as_str()), (206, "<svg"));
    assert!(r.header("content-security-policy").is_some());
    let r = s.call("GET", "/vault/Home/link.png", &[("Range", "bytes=0-3")], None);
    assert_eq!((r.status, r.code().as_str()), (400, "invalid_path"), "{}", r.body);
}

#[test]
#[cfg(target_os = "linux")]
fn a_long_video_is_never_held_whole_by_rest_or_mcp_and_a_held_copy_costs_a_304() {
    let (v, s, _big) = served();
    // 192 MiB, as a phone's recording might be: far above what sending it may hold.
    const LEN: usize = 192 << 20;
    let film: Vec<u8> = (0..LEN).map(|i| b'a' + (i % 26) as u8).collect();
    std::fs::write(v.root().join("Home/film.mp4"), &film).unwrap();
    let etag = format!("\"{}\"", mdvault::vault::content_hash(&film));
    let before = s.peak_resident();

    // Whole (a download) and from the start with an open end (a browser's player): every
    // byte, with the length given up front and the whole file's tag.
    let r = s.call("GET", "/vault/Home/film.mp4", &[], None);
    assert_eq!((r.status, r.body.len()), (200, LEN));
    assert!(r.body.as_bytes() == film.as_slice(), "the bytes sent are the file's");
    assert_eq!(r.header("content-length"), Some(LEN.to_string().as_str()));
    assert_eq!(r.header("etag"), Some(etag.as_str()));
    let r = s.call("GET", "/vault/Home/film.mp4", &[("Range", "bytes=0-")], None);
    assert_eq!((r.status, r.body.len()), (206, LEN));
    assert_eq!(r.header("content-range"), Some(format!("bytes 0-{}/{LEN}", LEN - 1).as_str()));
    assert_eq!(r.header("content-length"), Some(LEN.to_string().as_str()));
    // MCP describes it from its length and hash, read through without holding it.
    let r = mcp(
        &s,
        "/mcp",
        "tools/call",
        json!({"name": "vault_read", "arguments": {"path": "Home/film.mp4"}}),
    );
    let text = r["content"][0]["text"].as_str().unwrap_or_else(|| panic!("{r}"));
    let (bytes, tag) = (format!("{LEN} bytes"), etag.trim_matches('"'));
    assert!(text.contains("video/mp4") && text.contains(&bytes) && text.contains(tag), "{text}");
    let grew = s.peak_resident().saturating_sub(before);
    assert!(grew < 64 << 20, "sending {LEN} bytes grew the server by {grew} bytes");

    // A client holding the tag is told its copy is current, with no bytes.
    for held in [etag.clone(), format!("W/{etag}"), format!("\"other\", {etag}")] {
        let r = s.call("GET", "/vault/Home/film.mp4", &[("If-None-Match", &held)], None);
        assert_eq!((r.status, r.body.len()), (304, 0), "{held}");
        assert_eq!(r.header("etag"), Some(etag.as_str()), "{held}");
    }
    let r = s.call("GET", "/vault/Home/film.mp4", &[("If-None-Match", "\"stale\"")], None);
    assert_eq!((r.status, r.body.len()), (200, LEN));
}

#[test]
fn mcp_reads_a_large_image_as_image_content_scaled_to_the_bound_and_describes_the_rest() {
    let (_v, s, _big) = served();
    let read = |path: &str| {
        mcp(&s, "/mcp", "tools/call", json!({"name": "vault_read", "arguments": {"path": path}}))
    };

    let r = read("Home/boiler.png");
    assert_ne!(r["isError"], true, "{r}");
    let content = r["content"].as_array().unwrap();
    let image = content.iter().find(|c| c["type"] == "image").unwrap_or_else(|| panic!("{r}"));
    assert_eq!(image["mimeType"], "image/png");
    let bytes =
        base64::engine::general_purpose::STANDARD.decode(image["data"].as_str().unwrap()).unwrap();
    let shown = image::load_from_memory(&bytes).unwrap();
    assert_eq!((shown.width(), shown.height()), (MAX_SIDE, MAX_SIDE / 2));
    let caption = content.iter().find_map(|c| c["text"].as_str()).unwrap_or("");
    assert!(caption.contains("3000x1500"), "{caption}");

    // An SVG or an audio file is described, never sent as an image.
    for (path, says) in [("Home/diagram.svg", "image/svg+xml"), ("Home/hum.mp3", "audio/mpeg")] {
        let r = read(path);
        let content = r["content"].as_array().unwrap();
        assert!(content.iter().all(|c| c["type"] == "text"), "{path}: {r}");
        assert!(content[0]["text"].as_str().unwrap().contains(says), "{path}: {r}");
    }
    // The gate refuses a hidden one here too.
    let r = read(".obsidian/icon.png");
    assert_eq!(r["isError"], true, "{r}");
    assert!(r["content"][0]["text"].as_str().unwrap().contains("invalid_path"), "{r}");
}
