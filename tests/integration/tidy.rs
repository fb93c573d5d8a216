//! Layering and hygiene checks that run with `cargo test`.
//!
//! The engine (everything but the surfaces) must never know HTTP, MCP or clap, so that a
//! change to a surface cannot change what the engine does. Only `vault::fs` writes inside a
//! vault. Every module says what it owns in a `//!` header.

use std::path::{Path, PathBuf};

/// Folders and files that are surfaces: they may use any library.
const SURFACES: &[&str] = &["src/cli", "src/api", "src/main.rs"];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn sources() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
            let text = std::fs::read_to_string(&p).unwrap();
            (rel, text)
        })
        .collect()
}

fn is_surface(rel: &str) -> bool {
    SURFACES.iter().any(|s| rel == *s || rel.starts_with(&format!("{s}/")))
}

#[test]
fn the_engine_never_imports_a_surface_library() {
    // The web page's template crate, sanitiser, Markdown renderer and cookie signing are the
    // page's own business (`src/api/web`): the engine renders nothing and signs nothing.
    let banned = [
        "axum",
        "rmcp",
        "clap",
        "crate::cli",
        "crate::api",
        "tower",
        "hyper",
        "maud",
        "ammonia",
        "pulldown_cmark",
        "hmac",
    ];
    let mut offences = Vec::new();
    for (rel, text) in sources() {
        if is_surface(&rel) {
            continue;
        }
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for word in banned {
                let hit = code.match_indices(word).any(|(i, _)| {
                    let before = code[..i].chars().last();
                    let after = code[i + word.len()..].chars().next();
                    !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
                        && !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
                });
                if hit {
                    offences.push(format!("{rel}:{}: mentions `{word}`", n + 1));
                }
            }
        }
    }
    assert!(offences.is_empty(), "engine code reaches a surface:\n{}", offences.join("\n"));
}

#[test]
fn only_vault_fs_writes_inside_a_vault() {
    let raw_writes =
        ["std::fs::write", "std::fs::rename", "std::fs::remove", "File::create", "OpenOptions"];
    let mut offences = Vec::new();
    for (rel, text) in sources() {
        if !rel.starts_with("src/vault/") || rel == "src/vault/fs.rs" {
            continue;
        }
        let body = text.split("#[cfg(test)]").next().unwrap_or("");
        for word in raw_writes {
            if body.contains(word) {
                offences.push(format!("{rel} uses {word}; go through vault::fs"));
            }
        }
    }
    assert!(offences.is_empty(), "{}", offences.join("\n"));
}

#[test]
fn every_module_has_a_header() {
    let missing: Vec<String> = sources()
        .into_iter()
        .filter(|(_, text)| !text.trim_start().starts_with("//!"))
        .map(|(rel, _)| rel)
        .collect();
    assert!(missing.is_empty(), "modules without a //! header: {missing:?}");
}

#[test]
fn architecture_names_every_module() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let arch = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let mut missing = Vec::new();
    for (rel, _) in sources() {
        let name = rel.trim_start_matches("src/");
        if !arch.contains(name) {
            missing.push(name.to_string());
        }
    }
    assert!(missing.is_empty(), "ARCHITECTURE.md does not mention: {missing:?}");
}

/// The library's modules from the bottom up: a module may use only modules of lower layers
/// (and itself). Modules of one layer stay independent of each other. `markdown` is the pure
/// line model every text scanner shares. `auth` (the credentials file) sits beside `index`:
/// both keep a file in the data directory, and neither knows the other.
const LAYERS: &[&[&str]] = &[
    &["error"],
    &["docs", "embed", "markdown"],
    &["config"],
    &["vault"],
    &["index", "auth"],
    &["search", "upkeep"],
    &["engine", "wire"],
    &["service"],
    &["api"],
    &["cli"],
];

/// Inside `api`, the same rule between its files: the limits every surface applies, which
/// connections are admitted, TLS, the gate, then the MCP server (its prose first), then the
/// shared HTTP helpers, the plugin's PATCH formats and its periodic notes, then the router that
/// mounts them, then the entry points. The web page (`api/web/`, one entry here) sits beside REST: it uses the gate
/// and the limits, and only `mod` mounts it.
#[rustfmt::skip]
const API_LAYERS: &[&str] = &[
    "sanitize", "render", "accept", "compat", "logic", "limits", "admission", "tls", "scale", "preview",
    "guard", "prose", "mcp",
    "common", "ranges", "oauth", "patch", "periodic", "readiness", "rest", "web", "mod",
];

/// The `crate::NAME` and `super::NAME` modules a source text names outside comments.
fn references(text: &str, prefix: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        for (i, _) in code.match_indices(prefix) {
            let rest = &code[i + prefix.len()..];
            let name: String =
                rest.chars().take_while(|c| c.is_ascii_lowercase() || *c == '_').collect();
            let before = code[..i].chars().last();
            if !name.is_empty() && !before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                out.push((n + 1, name));
            }
        }
    }
    out
}

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

#[test]
fn modules_use_only_the_layers_below_them() {
    let mut offences = Vec::new();
    for (rel, text) in sources() {
        let Some(module) = rel
            .strip_prefix("src/")
            .and_then(|r| r.split(['/', '.']).next().filter(|m| *m != "lib" && *m != "main"))
        else {
            continue;
        };
        let Some(mine) = layer_of(module) else {
            offences.push(format!("{rel}: module `{module}` has no layer in LAYERS"));
            continue;
        };
        let body = text.split("#[cfg(test)]").next().unwrap_or("");
        for (line, used) in references(body, "crate::") {
            if used == module {
                continue;
            }
            match layer_of(&used) {
                Some(theirs) if theirs < mine => {}
                _ => offences.push(format!("{rel}:{line}: `{module}` uses `{used}`")),
            }
        }
    }
    assert!(offences.is_empty(), "layering broken:\n{}", offences.join("\n"));
}

#[test]
fn the_api_files_use_only_the_files_below_them() {
    let mut offences = Vec::new();
    for (rel, text) in sources() {
        let Some(file) = rel.strip_prefix("src/api/").and_then(|f| f.strip_suffix(".rs")) else {
            continue;
        };
        // Inside a folder module (`api/web/`, `api/render/`), a submodule's `super::` is the
        // folder's own `mod.rs`; only that file's `super::` reaches the other api files. Inside
        // `api/rest/`, `api/mcp/` and `api/oauth/`, a part's `super::` is the folder's `mod.rs`, and it
        // reaches the other api files as `crate::api::`, held to the folder's layer.
        let (file, prefix) = match file.split_once('/') {
            Some((folder @ ("rest" | "mcp" | "oauth"), "mod")) => (folder, "super::"),
            Some((folder @ ("rest" | "mcp" | "oauth"), _)) => (folder, "crate::api::"),
            Some((folder, "mod")) => (folder, "super::"),
            Some(_) => continue,
            None => (file, "super::"),
        };
        let mine = API_LAYERS.iter().position(|f| *f == file).expect("every api file is listed");
        let body = text.split("#[cfg(test)]").next().unwrap_or("");
        if prefix == "crate::api::" && body.contains("super::super::") {
            offences.push(format!("{rel}: reaches the api files through super::super::"));
        }
        for (line, used) in references(body, prefix) {
            match API_LAYERS.iter().position(|f| *f == used) {
                Some(theirs) if theirs < mine => {}
                _ => offences.push(format!("{rel}:{line}: `{file}` uses `{used}`")),
            }
        }
    }
    assert!(offences.is_empty(), "api layering broken:\n{}", offences.join("\n"));
}

#[test]
fn the_layer_check_notices_an_upward_import() {
    let found = references("use crate::upkeep::callouts; // crate::cli in a comment\n", "crate::");
    assert_eq!(found, vec![(1, "upkeep".to_string())]);
    assert!(layer_of("config") < layer_of("upkeep"), "config sits below upkeep");
}

#[test]
fn only_the_line_model_decides_what_is_a_fence() {
    // Writers of fences (findings' `fenced`) are fine; a second reader of them is how the
    // scanners came to disagree on what is code.
    const WRITERS: &[(&str, &str)] = &[("src/upkeep/findings.rs", "fn fenced(")];
    let mut offences = Vec::new();
    for (rel, text) in sources() {
        if rel == "src/markdown.rs" {
            continue;
        }
        // Tests may well be named after fences; only the code they test is checked.
        let body = text.split("#[cfg(test)]").next().unwrap_or("");
        for (n, line) in body.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            let Some(at) = code.find("fn ") else { continue };
            let name = code[at + 3..].split(['(', '<']).next().unwrap_or("");
            let allowed = WRITERS.iter().any(|(file, def)| rel == *file && code.contains(def));
            if name.to_ascii_lowercase().contains("fence") && !allowed {
                offences.push(format!("{rel}:{}: defines `{name}`", n + 1));
            }
        }
    }
    assert!(
        offences.is_empty(),
        "fence logic outside src/markdown.rs; classify lines with markdown::lines instead:\n{}",
        offences.join("\n")
    );
}

/// The code of a source file: everything before its test module.
fn non_test(text: &str) -> &str {
    text.split("\n#[cfg(test)]").next().unwrap_or("")
}

#[test]
fn only_the_store_speaks_sqlite() {
    let mut offences = Vec::new();
    for (rel, text) in sources() {
        if rel == "src/index/store.rs"
            || rel.starts_with("src/index/store/")
            || rel.starts_with("src/auth/")
        {
            continue;
        }
        for (n, line) in text.lines().enumerate() {
            if line.split("//").next().unwrap_or("").contains("rusqlite") {
                offences.push(format!("{rel}:{}", n + 1));
            }
        }
    }
    assert!(
        offences.is_empty(),
        "rusqlite outside the two stores (src/index/store.rs, src/auth/); give a store a method instead:\n{}",
        offences.join("\n")
    );
}

/// The rules of a search's scope that a line of text shows: a clamp on `k`, a vault's own
/// default `k`, the empty-query refusal. Each is a copy anywhere but `search/scope.rs`.
fn scope_rule(line: &str) -> Option<&'static str> {
    let code = line.split("//").next().unwrap_or("");
    let words: Vec<&str> = code.split(|c: char| !c.is_alphanumeric() && c != '_').collect();
    let names_k = words.iter().any(|w| {
        *w == "k" || *w == "MAX_K" || w.ends_with("_k") && *w != "rrf_k" && *w != "fusion_k"
    });
    // A count is clamped from 1; a scale or a score is not.
    if names_k && code.contains("clamp(1,") {
        Some("a clamp on k")
    } else if words.contains(&"vault_k") {
        Some("a vault's own default k")
    } else if code.contains("the query is empty") {
        Some("the empty-query refusal")
    } else {
        None
    }
}

/// Files (or folders) and what their line says, where [`scope_rule`] matches a rule that is
/// not the search scope's.
const SCOPE_RULE_ELSEWHERE: &[(&str, &str)] = &[
    // The eval's own `--k`: how long a list a measurement ranks (its recall@100 needs a
    // hundred), which the scope then takes as asked.
    ("src/cli/eval.rs", "clamp(1, 100)"),
    // The setting itself, read from the file.
    ("src/config/", "vault_k"),
];

#[test]
fn a_search_scope_is_resolved_only_in_its_one_home() {
    let mut offences = Vec::new();
    for (rel, text) in sources() {
        if rel == "src/search/scope.rs" {
            continue;
        }
        for (n, line) in non_test(&text).lines().enumerate() {
            let Some(rule) = scope_rule(line) else { continue };
            if SCOPE_RULE_ELSEWHERE
                .iter()
                .any(|(file, seen)| rel.starts_with(file) && line.contains(seen))
            {
                continue;
            }
            offences.push(format!("{rel}:{}: {rule}: {}", n + 1, line.trim()));
        }
    }
    assert!(
        offences.is_empty(),
        "search scope rules outside src/search/scope.rs; resolve a SearchScope there and pass it \
         down:\n{}",
        offences.join("\n")
    );
}

#[test]
fn the_scope_check_sees_a_copy_of_the_k_clamp() {
    assert_eq!(scope_rule("    let k = a.k.unwrap_or(6).clamp(1, MAX_K);"), Some("a clamp on k"));
    assert_eq!(
        scope_rule("let k = req.k.filter(|k| *k > 0).unwrap_or(s.default_k).clamp(1, 100);"),
        Some("a clamp on k")
    );
    assert_eq!(
        scope_rule("        .map(|v| settings.vault_k.get(v))"),
        Some("a vault's own default k")
    );
    assert_eq!(scope_rule("x.clamp(-127.0, 127.0) // k"), None);
    assert_eq!(scope_rule("let rrf = s.rrf_k.clamp(1.0, 100.0);"), None);
    assert_eq!(scope_rule("fn is_mdvault_kind(headers: &HeaderMap) -> bool {"), None);
}

#[test]
fn the_data_directorys_file_names_are_spelled_only_in_its_layout() {
    const NAMES: &[&str] = &[
        "\"index.db\"",
        "\"auth.db\"",
        "\"vectors.bin\"",
        "\"owner.lock\"",
        "\"owner.token\"",
        "\"indexer.sock\"",
    ];
    let mut offences = Vec::new();
    for (rel, text) in sources() {
        if rel == "src/config/datadir.rs" {
            continue;
        }
        for (n, line) in non_test(&text).lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            if let Some(name) = NAMES.iter().find(|name| code.contains(*name)) {
                offences.push(format!("{rel}:{}: {name}", n + 1));
            }
        }
    }
    assert!(
        offences.is_empty(),
        "a data-directory file named outside src/config/datadir.rs; ask DataDir:\n{}",
        offences.join("\n")
    );
}

/// The files that may still read a leading dot outside `vault/census.rs`, each for a rule
/// that is not which vault files count (or is waiting to be wired to the census).
const DOT_READERS: &[(&str, &str)] = &[
    ("src/vault/path.rs", "the gate refuses a hidden component a caller names"),
    ("src/vault/find.rs", "a case-insensitive lookup never offers a hidden entry"),
    ("src/vault/sweep.rs", "the start-up sweep's own walk for our temporaries"),
    ("src/upkeep/scripts.rs", "which files in .scripts/ are scripts"),
    ("src/config/mod.rs", "a vault's name and a document suffix's dot"),
    ("src/config/migrate.rs", "an old exclusion list's hidden folders, dropped as redundant"),
];

#[test]
fn which_files_count_is_decided_only_in_the_census() {
    let mut offences = Vec::new();
    for (rel, text) in sources() {
        if rel == "src/vault/census.rs" || DOT_READERS.iter().any(|(file, _)| *file == rel) {
            continue;
        }
        for (n, line) in non_test(&text).lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            if code.contains("starts_with('.')") || code.contains("starts_with(\".\")") {
                offences.push(format!("{rel}:{}", n + 1));
            }
        }
    }
    assert!(
        offences.is_empty(),
        "a hidden-name rule outside src/vault/census.rs; ask vault::census (hidden, classify):\n{}",
        offences.join("\n")
    );
}

/// Files past the size one concept takes, each at most at its size when this ledger was
/// written: they may shrink (and leave the ledger once under the limit), never grow.
const OVERSIZED: &[(&str, usize)] = &[];

/// About what one concept takes, in lines before a file's tests.
const MAX_LINES: usize = 1000;

#[test]
fn no_source_file_grows_past_one_concept() {
    let mut offences = Vec::new();
    for (rel, text) in sources() {
        let lines = non_test(&text).lines().count();
        match OVERSIZED.iter().find(|(file, _)| *file == rel) {
            Some((_, ceiling)) if lines > *ceiling => offences.push(format!(
                "{rel}: {lines} lines, past its {ceiling}; split it rather than grow it"
            )),
            Some(_) if lines <= MAX_LINES => offences.push(format!(
                "{rel}: {lines} lines, under {MAX_LINES} now; take it out of OVERSIZED"
            )),
            None if lines > MAX_LINES => offences.push(format!(
                "{rel}: {lines} lines before its tests, past {MAX_LINES}; split it by concept"
            )),
            _ => {}
        }
    }
    assert!(offences.is_empty(), "{}", offences.join("\n"));
}

/// A count the prose states in words or digits, as a number.
fn stated_count(word: &str) -> Option<usize> {
    const UNITS: &[&str] =
        &["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"];
    const TEENS: &[&str] = &[
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
    ];
    const TENS: &[&str] = &["", "", "twenty", "thirty", "forty", "fifty"];
    let word = word.to_ascii_lowercase();
    if let Ok(n) = word.parse() {
        return Some(n);
    }
    let (tens, unit) = word.split_once('-').unwrap_or((&word, ""));
    if let Some(n) = TEENS.iter().position(|t| *t == tens) {
        return unit.is_empty().then_some(10 + n);
    }
    if let Some(n) = UNITS.iter().position(|u| *u == tens) {
        return unit.is_empty().then_some(n);
    }
    let t = TENS.iter().position(|t| !t.is_empty() && *t == tens)?;
    let u = if unit.is_empty() { 0 } else { UNITS.iter().position(|u| *u == unit)? };
    Some(t * 10 + u)
}

#[test]
fn the_prose_states_the_mcp_tool_count_the_server_has() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let code = std::fs::read_to_string(root.join("src/api/mcp/mod.rs")).unwrap();
    let tools = non_test(&code).matches("#[tool(").count();
    let mut prose = vec!["README.md".to_string(), "ARCHITECTURE.md".to_string()];
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            prose.push(path.strip_prefix(root).unwrap().to_string_lossy().into_owned());
        }
    }
    let (mut stated, mut offences) = (0, Vec::new());
    for rel in prose {
        let text = std::fs::read_to_string(root.join(&rel)).unwrap().replace('\n', " ");
        let words: Vec<&str> = text.split(' ').collect();
        for (i, w) in words.iter().enumerate() {
            // "N tools", "N vault tools", "N MCP tools".
            let noun = words.get(i + 1).copied().unwrap_or("");
            let after = words.get(i + 2).copied().unwrap_or("");
            let names_tools = noun.starts_with("tools")
                || (matches!(noun, "vault" | "MCP") && after.starts_with("tools"));
            let Some(n) = stated_count(w.trim_start_matches(['(', '*'])) else { continue };
            if names_tools {
                stated += 1;
                if n != tools {
                    offences.push(format!("{rel}: says {w} tools; the server has {tools}"));
                }
            }
        }
    }
    assert!(stated > 0, "no prose states the tool count any more; drop this test or restate it");
    assert!(offences.is_empty(), "{}", offences.join("\n"));
}

#[test]
fn counts_are_read_from_words_and_digits() {
    assert_eq!(stated_count("twenty-two"), Some(22));
    assert_eq!(stated_count("Twenty"), Some(20));
    assert_eq!(stated_count("nineteen"), Some(19));
    assert_eq!(stated_count("7"), Some(7));
    assert_eq!(stated_count("tools"), None);
    assert_eq!(stated_count("twenty-x"), None);
}

/// The tunables table of `docs/internals.md`: each row names a constant, its value and its
/// file, and the file still declares it with that value, so the page cannot drift from the code.
#[test]
fn the_internals_page_states_each_tunable_as_the_code_declares_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let page = std::fs::read_to_string(root.join("docs/internals.md")).unwrap();
    let (mut rows, mut offences) = (0, Vec::new());
    for line in page.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let [_, name, value, file, ..] = cells[..] else { continue };
        let (name, value, file) =
            (name.trim_matches('`'), value.trim_matches('`'), file.trim_matches('`'));
        rows += 1;
        let Ok(code) = std::fs::read_to_string(root.join(file)) else {
            offences.push(format!("{name}: {file} does not exist"));
            continue;
        };
        let declared = non_test(&code).lines().any(|l| {
            let l = l.trim();
            l.contains(&format!("const {name}:")) && l.ends_with(&format!("= {value};"))
        });
        if !declared {
            offences.push(format!("{name}: {file} does not declare it as {value}"));
        }
    }
    assert!(rows >= 10, "the tunables table lost its rows ({rows} read)");
    assert!(offences.is_empty(), "docs/internals.md is out of step:\n{}", offences.join("\n"));
}

/// The router's public-route list as the prose states it: a probe by its path (any method
/// goes), a read as `GET <path>`, joined as a sentence ("`a`, `b` and `c`").
fn public_routes_in_words() -> String {
    use mdvault::api::guard::Access;
    let named: Vec<String> = mdvault::api::rest::PUBLIC
        .iter()
        .map(|(path, access)| match access {
            Access::Probe => format!("`{path}`"),
            Access::Read => format!("`GET {path}`"),
        })
        .collect();
    match named.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// Whether a paragraph states which routes go without the key: the two phrasings the prose
/// uses for that list ("every route but ... needs the key", "only ... go without").
fn states_the_public_routes(paragraph: &str) -> bool {
    let p = paragraph.to_ascii_lowercase();
    p.contains("every route but") || p.contains("go without")
}

#[test]
fn the_prose_states_the_public_routes_the_router_serves() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let want = public_routes_in_words();
    let mut prose = vec!["README.md".to_string(), "ARCHITECTURE.md".to_string()];
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            prose.push(path.strip_prefix(root).unwrap().to_string_lossy().into_owned());
        }
    }
    let (mut stated, mut offences) = (0, Vec::new());
    for rel in prose {
        let text = std::fs::read_to_string(root.join(&rel)).unwrap();
        // A paragraph is lines between blank ones; a table row or list item stands alone.
        let mut paragraphs: Vec<String> = vec![String::new()];
        for line in text.lines() {
            let t = line.trim_start();
            if t.is_empty() || t.starts_with('|') || t.starts_with("- ") {
                paragraphs.push(String::new());
            }
            let last = paragraphs.last_mut().unwrap();
            last.push(' ');
            last.push_str(line);
        }
        for p in paragraphs.iter().filter(|p| states_the_public_routes(p)) {
            stated += 1;
            let p = p.split_whitespace().collect::<Vec<_>>().join(" ");
            if !p.contains(&want) {
                offences.push(format!("{rel}: \"{p}\"\n  should name exactly {want}"));
            }
        }
    }
    assert!(stated > 0, "no prose states the public routes any more; drop this test or restate it");
    assert!(offences.is_empty(), "{}", offences.join("\n"));
}

#[test]
fn the_public_routes_read_as_one_sentence() {
    assert_eq!(
        public_routes_in_words(),
        "`/healthz`, `GET /`, `GET /openapi.yaml` and `GET /obsidian-local-rest-api.crt`"
    );
    assert!(states_the_public_routes("Every route but `/healthz` needs the key"));
    assert!(!states_the_public_routes("`/readyz` needs the key"));
}

/// Where a JSON document may be spelled with `json!`: the wire shapes and the Local REST API
/// plugin's own shapes. Everywhere else a shape is a typed struct, so its keys are decided in
/// one place and a typo is a compile error.
const JSON_MACRO_HOMES: &[&str] = &["src/wire.rs", "src/api/compat.rs"];

#[test]
fn json_documents_are_spelled_only_in_the_wire_shapes() {
    let mut offences = Vec::new();
    for (rel, text) in sources() {
        if JSON_MACRO_HOMES.contains(&rel.as_str()) {
            continue;
        }
        for (n, line) in non_test(&text).lines().enumerate() {
            if line.split("//").next().unwrap_or("").contains("json!") {
                offences.push(format!("{rel}:{}", n + 1));
            }
        }
    }
    assert!(
        offences.is_empty(),
        "json! outside src/wire.rs and src/api/compat.rs; give the shape a #[derive(Serialize)] \
         struct in src/wire.rs (or beside the client that sends it):\n{}",
        offences.join("\n")
    );
}

/// The library's public surface is what the binary and the integration tests use; everything
/// else is `pub(crate)`. The count may fall, never rise: a new `pub` item must be one a test or
/// the binary reaches from outside, and then this ceiling is raised on purpose.
const PUBLIC_ITEMS_MAX: usize = 210;

#[test]
fn items_are_crate_private_unless_the_binary_or_the_tests_use_them() {
    let mut public = Vec::new();
    for (rel, text) in sources() {
        for (n, line) in non_test(&text).lines().enumerate() {
            let t = line.trim_start();
            let item = ["fn ", "struct ", "enum ", "const ", "static ", "type ", "trait ", "mod "]
                .iter()
                .chain(["use ", "async fn ", "unsafe fn "].iter())
                .any(|k| t.strip_prefix("pub ").is_some_and(|rest| rest.starts_with(k)));
            if item {
                public.push(format!("{rel}:{}", n + 1));
            }
        }
    }
    assert!(
        public.len() <= PUBLIC_ITEMS_MAX,
        "{} pub items, past the ceiling of {PUBLIC_ITEMS_MAX}; make the new ones pub(crate) unless \
         the binary or tests/integration reaches them:\n{}",
        public.len(),
        public.join("\n")
    );
}
