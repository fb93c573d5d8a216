//! Math in the reading view: a note's `$...$` and `$$...$$` (pulldown-cmark's math events) as
//! MathML, written server-side by `pulldown-latex`, so the web page and a REST HTML answer
//! both show typeset math with no script. A formula that does not parse is shown as written,
//! marked as math (`<code class="math">`). The sanitiser keeps the MathML elements this
//! writes ([`TAGS`], [`ATTRIBUTES`]) and nothing else of MathML.

use pulldown_latex::config::DisplayMode;
use pulldown_latex::{Parser, RenderConfig, Storage, push_mathml};

/// The MathML elements `pulldown-latex` writes, which the sanitiser lets through.
pub(crate) const TAGS: &[&str] = &[
    "math",
    "semantics",
    "annotation",
    "mrow",
    "mi",
    "mn",
    "mo",
    "mtext",
    "mspace",
    "msub",
    "msup",
    "msubsup",
    "munder",
    "mover",
    "munderover",
    "mfrac",
    "msqrt",
    "mroot",
    "mtable",
    "mtr",
    "mtd",
    "merror",
    "mstyle",
    "mpadded",
    "mphantom",
    "menclose",
];

/// The presentation attributes it writes on them (`style`, for colours, is left out: the
/// page allows no inline style).
pub(crate) const ATTRIBUTES: &[&str] = &[
    "display",
    "displaystyle",
    "mathvariant",
    "stretchy",
    "largeop",
    "movablelimits",
    "symmetric",
    "maxsize",
    "minsize",
    "linethickness",
    "scriptlevel",
    "width",
    "height",
    "depth",
    "encoding",
];

/// A formula as MathML (`display`: a `$$` block), or marked as math when it does not parse.
pub(crate) fn html(tex: &str, display: bool) -> String {
    let storage = Storage::new();
    let parses = Parser::new(tex, &storage).all(|event| event.is_ok());
    let marked = || format!("<code class=\"math\">{}</code>", super::esc(tex));
    if !parses {
        return marked();
    }
    let storage = Storage::new();
    let config = RenderConfig {
        display_mode: if display { DisplayMode::Block } else { DisplayMode::Inline },
        // The source rides along, as an annotation a reader can copy.
        annotation: Some(tex),
        ..RenderConfig::default()
    };
    let mut out = String::new();
    match push_mathml(&mut out, Parser::new(tex, &storage), config) {
        Ok(()) => out,
        Err(_) => marked(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_formula_becomes_mathml_and_one_that_does_not_parse_is_marked() {
        let inline = html("e^{i\\pi} + 1 = 0", false);
        assert!(inline.starts_with("<math"), "{inline}");
        assert!(inline.contains("<msup>") && !inline.contains("display=\"block\""), "{inline}");
        let block = html("\\frac{n(n+1)}{2}", true);
        assert!(block.contains("display=\"block\"") && block.contains("<mfrac"), "{block}");
        assert_eq!(html("\\frac{1}{", false), "<code class=\"math\">\\frac{1}{</code>");
        assert_eq!(
            html("a < b \\nocommand", false),
            "<code class=\"math\">a &lt; b \\nocommand</code>"
        );
    }
}
