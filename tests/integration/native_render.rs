//! Obsidian's reading view over the fixture vault of real Obsidian syntax
//! (`tests/fixtures/obsidian/render-*`), on both surfaces that show a note as HTML: the web
//! page's note route and REST's `Accept: text/html`. Each construct is checked on each: images
//! at their size from a route that serves them through the path gate, a missing attachment
//! shown missing (never offered as a note to create), note embeds of a section and a block one
//! level deep with a self-embed refused, callouts with their own and default titles and
//! folding, math as MathML, Mermaid labelled, and heading links that land. What a browser does
//! with it (the image loads, the callout opens, the link lands) is `tests/browser_test.py`.

use std::path::Path;

use crate::common::{Server, TempVault};
use crate::web::{browser, sign_in};

const HASHING: &[(&str, &str)] = &[("MDVAULT_EMBEDDING__BACKEND", "hashing")];

fn served() -> (TempVault, Server) {
    let v =
        TempVault::copy_of(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/obsidian"));
    let s = Server::start(&[format!("main={}", v.root().display())], HASHING);
    (v, s)
}

/// What both surfaces show alike, whatever their URLs.
#[track_caller]
fn shows_the_reading_view(html: &str) {
    for want in [
        // Embedded notes: a section with its subsections, a block, each labelled with a link.
        "<div class=\"embed\"><div class=\"embed-title\">",
        ">render-boiler#Service</a></div>",
        "<h2 id=\"service\">Service</h2>",
        "The valve is stiff.",
        ">render-boiler#^yearly</a></div>",
        "Once a year, before the winter.",
        // The note embeds itself: refused, shown as a link with the reason.
        ">render-reading</a> <em class=\"embed-refused\">(not embedded: a note cannot embed itself)</em>",
        "<span class=\"embed-missing\">render-nowhere.png (not in the vault)</span>",
        // Callouts.
        "<details class=\"callout callout-tip\"><summary class=\"callout-title\">Folded tip</summary>",
        "<details class=\"callout callout-warning\" open=\"\"><summary class=\"callout-title\">Warning</summary>",
        "<div class=\"callout callout-note\"><div class=\"callout-title\">Outer</div>",
        "<div class=\"callout callout-todo\"><div class=\"callout-title\">Inner</div>",
        // Math and Mermaid.
        "<math display=\"inline\"><semantics>",
        "<annotation encoding=\"application/x-tex\">e^{i\\pi} + 1 = 0</annotation></semantics></math> and a price of $5.",
        "<math display=\"block\"><semantics>",
        "<mfrac>",
        "<figure class=\"mermaid\"><figcaption>Mermaid diagram</figcaption>",
        "A[Boiler] --&gt; B[Radiator]",
    ] {
        assert!(html.contains(want), "{want}\nnot in\n{html}");
    }
    // The embedded section stops at the next heading of its level.
    assert!(!html.contains("The meter is by the door."), "{html}");
    assert!(!html.contains("[!tip]") && !html.contains("$$"), "{html}");
}

#[test]
fn the_web_page_shows_images_embeds_callouts_math_and_mermaid() {
    let (_v, s) = served();
    let session = sign_in(&s);
    let cookie = [("Cookie", session.as_str())];
    let r = browser(&s, "GET", "/ui/note?path=render-reading.md", &cookie, "");
    assert_eq!(r.status, 200, "{}", r.body);
    let page = &r.body;
    shows_the_reading_view(page);
    // Each image is fetched fitted to twice its shown width (a rung of `fitted::rung`), and
    // links to its original.
    let original = "/ui/attachment?vault=main&amp;path=render-pixel.png";
    let link = format!(
        "<a class=\"embed-image-link\" href=\"{original}\" \
         title=\"Open render-pixel.png at full size\" rel=\"noopener noreferrer\">"
    );
    let src = format!("src=\"{original}&amp;fit=320\"");
    for want in [
        format!("{link}<img class=\"embed-image\" {src} alt=\"\" width=\"120\"></a>"),
        format!("{link}<img class=\"embed-image\" {src} alt=\"\" width=\"96\" height=\"64\"></a>"),
        format!("{link}<img class=\"embed-image\" {src} alt=\"A pixel\" width=\"60\"></a>"),
        "href=\"/ui/note?vault=main&amp;path=render-boiler.md#service\"".to_string(),
        "href=\"/ui/note?vault=main&amp;path=render-boiler.md#gas\"".to_string(),
        "href=\"/ui/note?vault=main&amp;path=render-boiler.md#parts\"".to_string(),
    ] {
        assert!(page.contains(&want), "{want}\nnot in\n{page}");
    }
    assert!(!page.contains("/ui/new?vault=main&amp;path=render-nowhere"), "{page}");

    // The image is served under the session, with its media type.
    let img = browser(&s, "GET", "/ui/attachment?vault=main&path=render-pixel.png", &cookie, "");
    assert_eq!(img.status, 200, "{}", img.body);
    assert_eq!(img.header("content-type"), Some("image/png"));
    assert!(img.body.contains("PNG"), "{:?}", img.body);
    assert_eq!(img.header("accept-ranges"), Some("bytes"));
    // The browser may keep it for this user and asks again with its tag: a 304, no bytes.
    assert_eq!(img.header("cache-control"), Some("private, no-cache"));
    let etag = img.header("etag").expect("an ETag").to_string();
    let url = "/ui/attachment?vault=main&path=render-pixel.png";
    let again = browser(&s, "GET", url, &[cookie[0], ("If-None-Match", &etag)], "");
    assert_eq!((again.status, again.body.as_str()), (304, ""));
    assert_eq!(again.header("cache-control"), Some("private, no-cache"));
    // The note's page itself is never stored.
    assert_eq!(r.header("cache-control"), Some("no-store"));
    // A player's range request is answered with that range, as REST's is.
    let part = browser(&s, "GET", url, &[cookie[0], ("Range", "bytes=1-3")], "");
    assert_eq!((part.status, part.body.as_str()), (206, "PNG"), "{}", part.body);
    let length = img.header("content-length").unwrap();
    assert_eq!(part.header("content-range"), Some(format!("bytes 1-3/{length}").as_str()));
    let past = browser(&s, "GET", url, &[cookie[0], ("Range", "bytes=999999-")], "");
    assert_eq!(past.status, 416, "{}", past.body);
    assert!(past.body.contains("range_not_satisfiable"), "{}", past.body);
    // Not without a session, and not outside the vault.
    let r = browser(&s, "GET", "/ui/attachment?vault=main&path=render-pixel.png", &[], "");
    assert_eq!(r.status, 303, "{}", r.body);
    for path in ["../render-pixel.png", "/etc/hostname.png", "render-reading.md"] {
        let r = browser(&s, "GET", &format!("/ui/attachment?path={path}"), &cookie, "");
        assert!(matches!(r.status, 400 | 404), "{path}: {} {}", r.status, r.body);
    }
}

#[test]
fn rest_html_shows_the_same_reading_view_with_images_from_the_vault_route() {
    let (_v, s) = served();
    let r = s.call("GET", "/vault/render-reading.md", &[("Accept", "text/html")], None);
    assert_eq!(r.status, 200, "{}", r.body);
    shows_the_reading_view(&r.body);
    for want in [
        "<img class=\"embed-image\" src=\"/vault/render-pixel.png\" alt=\"\" width=\"120\">",
        "<img class=\"embed-image\" src=\"/vault/render-pixel.png\" alt=\"A pixel\" width=\"60\">",
        "href=\"render-boiler#gas\"",
    ] {
        assert!(r.body.contains(want), "{want}\nnot in\n{}", r.body);
    }
    let img = s.call("GET", "/vault/render-pixel.png", &[], None);
    assert_eq!((img.status, img.header("content-type")), (200, Some("image/png")));
}

#[test]
fn obsidian_help_s_embeds_render_and_every_note_renders_over_rest() {
    let Some(vaults) = crate::eval_data::find(&crate::eval_data::EVAL_VAULTS) else { return };
    let v = TempVault::copy_of(&vaults.join("obsidian-help"));
    let s = Server::start(&[format!("help={}", v.root().display())], HASHING);
    let session = sign_in(&s);
    let note = "/ui/note?path=Linking%20notes%20and%20files/Embed%20files.md";
    let r = browser(&s, "GET", note, &[("Cookie", &session)], "");
    assert_eq!(r.status, 200, "{}", r.body);
    // `![[Internal links#^b15695]]`: the block, inline.
    let at = r.body.find(">Internal links#^b15695</a></div>").expect("the block embed's label");
    assert!(r.body[at..].contains("By linking notes, you can create a network of knowledge."));
    // The copy holds no images: each embed of one is shown missing, never offered as a note.
    assert!(r.body.contains("Engelbart.jpg (not in the vault)"), "{}", r.body);
    assert!(!r.body.contains("/ui/new?vault=help&amp;path=Engelbart"), "{}", r.body);
    let mut notes = 0;
    for entry in walkdir::WalkDir::new(v.root()).into_iter().filter_map(Result::ok) {
        let rel = entry.path().strip_prefix(v.root()).unwrap().to_string_lossy().into_owned();
        if !rel.ends_with(".md") || rel.starts_with('.') {
            continue;
        }
        let path = rel.replace(' ', "%20");
        let r = s.call("GET", &format!("/vault/{path}"), &[("Accept", "text/html")], None);
        assert_eq!(r.status, 200, "{rel}: {}", r.body);
        notes += 1;
    }
    assert!(notes > 100, "{notes} notes");
}

/// A phone's portrait photo: stored `width` x `height` on its side, with EXIF orientation 6
/// (shown turned 90° clockwise), the stored left half red and the right half blue.
fn photo_on_its_side(width: u32, height: u32) -> Vec<u8> {
    use image::ImageEncoder as _;
    let img = image::RgbImage::from_fn(width, height, |x, _| {
        if x < width / 2 { image::Rgb([255, 0, 0]) } else { image::Rgb([0, 0, 255]) }
    });
    let mut out = Vec::new();
    let mut encoder = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 90);
    // A little-endian TIFF header and one IFD entry: Orientation (0x0112), SHORT, 1, value 6.
    let exif = b"II*\0\x08\0\0\0\x01\0\x12\x01\x03\0\x01\0\0\0\x06\0\0\0\0\0\0\0".to_vec();
    encoder.set_exif_metadata(exif).unwrap();
    encoder.write_image(img.as_raw(), width, height, image::ExtendedColorType::Rgb8).unwrap();
    out
}

#[test]
fn a_phone_fetches_a_notes_photo_fitted_to_its_shown_width_upright_and_only_once() {
    let v =
        TempVault::copy_of(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/obsidian"));
    let original = photo_on_its_side(3000, 2000);
    std::fs::write(v.root().join("photo.jpg"), &original).unwrap();
    v.write("photos.md", "# Photos\n\n![[photo.jpg]]\n\n![[photo.jpg|300]]\n");
    let s = Server::start(&[format!("main={}", v.root().display())], HASHING);
    let session = sign_in(&s);
    let cookie = ("Cookie", session.as_str());

    let page = browser(&s, "GET", "/ui/note?path=photos.md", &[cookie], "").body;
    let at = "/ui/attachment?vault=main&amp;path=photo.jpg";
    for want in [format!("src=\"{at}&amp;fit=1600\""), format!("src=\"{at}&amp;fit=640\"")] {
        assert!(page.contains(&want), "{want}\nnot in\n{page}");
    }

    // Fitted: upright (2000 x 3000 as shown), 640 wide, a JPEG far smaller than the original.
    let url = "/ui/attachment?vault=main&path=photo.jpg&fit=640";
    let r = browser(&s, "GET", url, &[cookie], "");
    assert_eq!((r.status, r.header("content-type")), (200, Some("image/jpeg")), "{}", r.body);
    let shown = image::load_from_memory(&r.bytes).unwrap().to_rgb8();
    assert_eq!((shown.width(), shown.height()), (640, 960));
    let (top, bottom) = (shown.get_pixel(320, 100), shown.get_pixel(320, 860));
    assert!(top[0] > 200 && bottom[2] > 200, "not upright: top {top:?}, bottom {bottom:?}");
    assert!(r.bytes.len() * 4 < original.len(), "{} of {} bytes", r.bytes.len(), original.len());
    assert_eq!(r.header("cache-control"), Some("private, no-cache"));

    // Shown again, the browser asks with its tag and is sent nothing.
    let etag = r.header("etag").expect("an ETag").to_string();
    let again = browser(&s, "GET", url, &[cookie, ("If-None-Match", &etag)], "");
    assert_eq!((again.status, again.bytes.len()), (304, 0));
    // Another width is another copy, with its own tag; one the photo fits already is the
    // original's bytes, which the browser turns upright itself.
    let url = "/ui/attachment?vault=main&path=photo.jpg&fit=2048";
    let wide = browser(&s, "GET", url, &[cookie], "");
    assert!(wide.bytes == original, "2,000 pixels wide upright fits in 2,048");
    assert_ne!(wide.header("etag"), Some(etag.as_str()));

    // The original is a tap away, byte for byte; a small image is sent as it is; a width that
    // is no width is refused, saying what fit takes.
    let r = browser(&s, "GET", "/ui/attachment?vault=main&path=photo.jpg", &[cookie], "");
    assert!(r.bytes == original, "the original's bytes");
    let pixel = std::fs::read(v.root().join("render-pixel.png")).unwrap();
    let url = "/ui/attachment?vault=main&path=render-pixel.png&fit=320";
    assert!(browser(&s, "GET", url, &[cookie], "").bytes == pixel);
    let r = browser(&s, "GET", "/ui/attachment?vault=main&path=photo.jpg&fit=0", &[cookie], "");
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.body.contains("width in pixels"), "{}", r.body);
}
