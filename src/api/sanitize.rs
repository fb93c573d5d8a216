//! The one HTML sanitiser: every note rendered as HTML, on the web page (`/ui/`) and for a
//! REST `Accept: text/html`, goes through [`clean`] before it leaves the server, and a REST
//! HTML answer carries [`HTML_CSP`] and `nosniff` on top. So a note's `<script>`, event
//! attributes, `javascript:` URLs, frames and forms are inert on every surface alike. An SVG
//! attachment is served as it is, under [`SVG_CSP`].

/// The policy of a note served as HTML over REST: nothing runs, nothing loads from elsewhere,
/// no form posts; images, audio and video from the server itself (a note's attachments) may
/// show and play.
pub(crate) const HTML_CSP: &str = "default-src 'none'; img-src 'self' data:; media-src 'self'; \
    style-src 'unsafe-inline'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'";

/// The policy of an SVG attachment served over REST (`GET /vault/<file>.svg`): an SVG can
/// carry script and load resources, so nothing runs or loads; inline styles, which drawings
/// use, apply.
pub(crate) const SVG_CSP: &str = "default-src 'none'; style-src 'unsafe-inline'";

/// The sanitiser's rules: ammonia's safe defaults (no script, style, event attributes, frames,
/// forms or `javascript:` URLs; links get `rel="noopener noreferrer"`; `<mark>` for
/// highlights, `<details>`/`<summary>` for folding callouts and `<img>` for embedded images
/// are among its tags) plus classes, ids, the task-list checkboxes pulldown-cmark writes,
/// their `aria-label` (done or to do), `open` on an expanded callout's `<details>`, and `<audio>`/`<video>` with only `src` and
/// `controls` for embedded recordings (no `autoplay`, no `poster` or `<source>` to load from
/// elsewhere; `src` is held to the URL schemes as `href` is). Ids are kept as written, not prefixed: a link's `#fragment` (a heading's slug, a
/// block's `^id`) must name the id the renderer gave. The page's script looks up only the
/// search and health pages' own ids, and those pages show no note, so a note's own `id` can
/// at worst be a second target of a fragment.
/// `math_tags` and `math_attributes` are the MathML elements and presentation attributes the
/// renderer's math writes (`api::render::math`), kept as well; no other MathML is.
pub(crate) fn clean(html: &str, math_tags: &[&str], math_attributes: &[&str]) -> String {
    let mut builder = ammonia::Builder::default();
    builder.add_tags(math_tags.iter().copied());
    for tag in math_tags {
        builder.add_tag_attributes(*tag, math_attributes.iter().copied());
    }
    builder
        .add_generic_attributes(["class", "id"])
        .add_tags(["input"])
        .add_tag_attributes("input", ["type", "checked", "disabled", "aria-label"])
        .add_tag_attributes("details", ["open"])
        .add_tags(["audio", "video"])
        .add_tag_attributes("audio", ["src", "controls"])
        .add_tag_attributes("video", ["src", "controls"])
        .add_url_schemes(["obsidian"])
        .clean(html)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_handlers_frames_forms_and_javascript_urls_are_removed() {
        let html = "<p>ok</p><script>alert(1)</script><img src=x onerror=alert(2)>\
                    <a href=\"javascript:alert(3)\">a</a><iframe src=\"javascript:alert(4)\"></iframe>\
                    <form action=\"https://evil.example\"><input name=q></form>";
        let out = clean(html, &[], &[]);
        for bad in ["<script", "onerror", "javascript:", "<iframe", "<form", "evil.example"] {
            assert!(!out.contains(bad), "{bad} in {out}");
        }
        assert!(out.contains("<p>ok</p>"));
    }

    #[test]
    fn task_list_checkboxes_heading_and_block_ids_and_highlights_survive() {
        let out = clean(
            "<h2 id=\"x\">X</h2><input type=\"checkbox\" checked disabled aria-label=\"done\">\
             <p id=\"^b1\"><mark>hi</mark> <a href=\"#^b1\">b</a></p>",
            &[],
            &[],
        );
        assert!(out.contains("id=\"x\"") && out.contains("type=\"checkbox\""), "{out}");
        assert!(out.contains("aria-label=\"done\""), "{out}");
        assert!(out.contains("<p id=\"^b1\"><mark>hi</mark>"), "{out}");
        assert!(out.contains("href=\"#^b1\""), "{out}");
    }

    #[test]
    fn only_the_mathml_asked_for_is_kept_and_it_cannot_carry_script() {
        let html = "<math display=\"block\"><mi mathvariant=\"bold\" onclick=\"x()\">x</mi>\
                    <maction actiontype=\"statusline\">a</maction>\
                    <mtext><img src=x onerror=alert(1)></mtext></math>";
        let out = clean(html, &["math", "mi", "mtext"], &["display", "mathvariant"]);
        assert!(out.contains("<math display=\"block\"><mi mathvariant=\"bold\">x</mi>"), "{out}");
        for bad in ["onclick", "maction", "onerror"] {
            assert!(!out.contains(bad), "{bad} in {out}");
        }
        assert!(!clean(html, &[], &[]).contains("<math"));
    }
}
