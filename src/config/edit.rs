//! Surgical edits of the config file: set a few keys of one top-level section, leave every
//! other line (comments, order, other sections) exactly as the user wrote it.
//!
//! Used by `mdvault model use`. Nothing here parses YAML in full; the caller reloads the
//! edited file with [`crate::config::load`] and keeps the old text if that fails.

use super::ConfigError;

/// A string as a YAML scalar: JSON's double-quoted strings are valid YAML.
pub(crate) fn yaml_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string())
}

/// The ` # comment` at the end of a `key: value` line, with the spaces before it, if any
/// (a `#` inside quotes is part of the value).
fn trailing_comment(line: &str) -> Option<&str> {
    let mut quote = None;
    let mut prev_space = false;
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '#') if prev_space => {
                let start = line[..i].trim_end().len();
                return Some(&line[start..]);
            }
            _ => {}
        }
        prev_space = c.is_whitespace();
    }
    None
}

fn is_top_level(line: &str) -> bool {
    let t = line.trim_end();
    !t.is_empty() && !t.starts_with(char::is_whitespace) && !t.starts_with('#')
}

/// Sets `keys` (already rendered as YAML scalars) in the top-level block `section:`, replacing
/// a key's line where the block has it and adding it right under the header otherwise; a
/// missing section is appended. A section written inline (`embedding: {...}`) is refused,
/// since rewriting it would lose what the user wrote.
pub(crate) fn set_keys(
    text: &str,
    section: &str,
    keys: &[(&str, String)],
) -> Result<String, ConfigError> {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let header = format!("{section}:");
    let start = lines.iter().position(|l| l.starts_with(&header));
    let Some(start) = start else {
        let mut out = text.to_string();
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&header);
        out.push('\n');
        for (k, v) in keys {
            out.push_str(&format!("  {k}: {v}\n"));
        }
        return Ok(out);
    };
    let rest = lines[start][header.len()..].trim();
    if !rest.is_empty() && !rest.starts_with('#') {
        return Err(ConfigError(format!(
            "the config file writes `{section}:` on one line ({rest}); put each key on its own \
             line under `{section}:` and try again"
        )));
    }
    let block_end = |lines: &[String]| {
        lines[start + 1..]
            .iter()
            .position(|l| is_top_level(l))
            .map_or(lines.len(), |i| start + 1 + i)
    };
    let indent: String = lines[start + 1..block_end(&lines)]
        .iter()
        .find(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .map(|l| l.chars().take_while(|c| c.is_whitespace()).collect())
        .unwrap_or_else(|| "  ".to_string());
    let mut insert_at = start + 1;
    for (key, value) in keys {
        let prefix = format!("{indent}{key}:");
        let new = format!("{indent}{key}: {value}");
        match (start + 1..block_end(&lines)).find(|i| lines[*i].starts_with(&prefix)) {
            Some(i) => {
                // The user's note on the line stays with it.
                let comment = trailing_comment(&lines[i]).map(str::to_string).unwrap_or_default();
                lines[i] = format!("{new}{comment}");
            }
            None => {
                lines.insert(insert_at, new);
                insert_at += 1;
            }
        }
    }
    let mut out = lines.join("\n");
    out.push('\n');
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "# mine\nvault:\n  doc_ocr: false\n\nembedding:\n  # the backend\n  \
                        backend: local\n  model_dir: \"\"   # default\n  batch_size: 8\n\
                        search:\n  default_k: 4\n";

    #[test]
    fn keys_are_replaced_in_place_and_missing_ones_added_under_the_header() {
        let out = set_keys(
            FILE,
            "embedding",
            &[
                ("backend", "http".into()),
                ("url", yaml_string("http://h/v1/embeddings")),
                ("dims", "768".into()),
            ],
        )
        .unwrap();
        assert_eq!(
            out,
            "# mine\nvault:\n  doc_ocr: false\n\nembedding:\n  url: \"http://h/v1/embeddings\"\n  \
             dims: 768\n  # the backend\n  backend: http\n  model_dir: \"\"   # default\n  \
             batch_size: 8\nsearch:\n  default_k: 4\n"
        );
        let out = set_keys(FILE, "embedding", &[("model_dir", yaml_string("/m #1"))]).unwrap();
        assert!(out.contains("  model_dir: \"/m #1\"   # default\n"), "{out}");
        assert_eq!(trailing_comment("url: \"http://h/#x\" # note"), Some(" # note"));
        assert_eq!(trailing_comment("a: b#c"), None);
    }

    #[test]
    fn a_missing_section_is_appended_and_an_inline_one_refused() {
        let out = set_keys("search:\n  default_k: 4", "embedding", &[("backend", "local".into())])
            .unwrap();
        assert_eq!(out, "search:\n  default_k: 4\n\nembedding:\n  backend: local\n");
        assert_eq!(
            set_keys("", "embedding", &[("backend", "local".into())]).unwrap(),
            "embedding:\n  backend: local\n"
        );
        let e =
            set_keys("embedding: {backend: local}\n", "embedding", &[("backend", "http".into())])
                .unwrap_err();
        assert!(e.0.contains("on one line"), "{}", e.0);
    }

    #[test]
    fn a_four_space_block_keeps_its_indent_and_lookalike_keys_elsewhere_are_untouched() {
        let text = "embedding:\n    backend: local\nrerank:\n    model: x\n";
        let out = set_keys(text, "embedding", &[("model", yaml_string("m"))]).unwrap();
        assert_eq!(
            out,
            "embedding:\n    model: \"m\"\n    backend: local\nrerank:\n    model: x\n"
        );
        assert_eq!(yaml_string("a \"b\""), "\"a \\\"b\\\"\"");
    }
}
