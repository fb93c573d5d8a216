//! The Local REST API's JsonLogic search (`POST /search/`): a rule evaluated by datalogic-rs
//! over every note's data (`compat::logic_data`), with the plugin's `glob` and `regexp`
//! operators, under a budget.
//!
//! It owns what one request may cost. Every pattern written in the rule is compiled once,
//! before any note is read, and an invalid or oversized one is refused with 400 naming it
//! (never silently false); a pattern computed from a note is compiled once per request too
//! (a per-request cache). The evaluation stops at its time budget
//! ([`BUDGET`]) with a refusal that says how far it got, and at once when the client has
//! gone ([`Cancel`]), so an abandoned request does not keep a core busy.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use datalogic_rs::bumpalo::Bump;
use datalogic_rs::operator::EvalContext;
use datalogic_rs::{ArenaExt, CustomOperator, DataValue};
use regex::Regex;
use serde_json::Value;

use crate::error::{Error, ErrorCode, Result};

/// The longest pattern the two operators compile, so one request cannot build a huge automaton.
pub(crate) const MAX_PATTERN_BYTES: usize = 1024;
/// The compiled size one pattern may reach (regex's own limit, in bytes).
const MAX_COMPILED_BYTES: usize = 1 << 20;
/// How many distinct patterns one request may compile.
pub(crate) const MAX_PATTERNS: usize = 256;
/// How long one request may evaluate before it is refused.
pub(crate) const BUDGET: Duration = Duration::from_secs(10);

/// Set when the request that started an evaluation is gone: the evaluation stops at the next
/// note. The route keeps a [`CancelOnDrop`] in its future, which axum drops when the client
/// disconnects. `/search/simple/` stops its scan of every note the same way.
#[derive(Clone, Default)]
pub(crate) struct Cancel(Arc<AtomicBool>);

impl Cancel {
    /// Whether the client has gone, for a loop over notes to stop at once. When it has, this
    /// says so in the log (at `info`), so that an operator, and a test, can see an abandoned
    /// request let go of its core rather than run on: `what` stopped after `done` of `total`
    /// notes, `started` when.
    pub(crate) fn client_left(
        &self,
        what: &str,
        done: usize,
        total: usize,
        started: Instant,
    ) -> bool {
        let left = self.0.load(Ordering::Relaxed);
        if left {
            tracing::info!(
                "{what} stopped after {done} of {total} notes and {:.1} s: its client went away",
                started.elapsed().as_secs_f64()
            );
        }
        left
    }

    /// A guard that cancels when dropped.
    pub(crate) fn on_drop(&self) -> CancelOnDrop {
        CancelOnDrop(self.clone())
    }
}

/// Cancels its evaluation when dropped (the request's future ended, finished or abandoned).
pub(crate) struct CancelOnDrop(Cancel);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.0.store(true, Ordering::Relaxed);
    }
}

/// Which operator a pattern belongs to: a glob is translated to a regex first.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Kind {
    Glob,
    Regexp,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Glob => "glob",
            Kind::Regexp => "regexp",
        }
    }
}

/// The patterns of one request, each compiled once.
#[derive(Default)]
struct Patterns(Mutex<HashMap<(Kind, String), Arc<Regex>>>);

impl Patterns {
    fn get(&self, kind: Kind, pattern: &str) -> std::result::Result<Arc<Regex>, String> {
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(re) = map.get(&(kind, pattern.to_string())) {
            return Ok(re.clone());
        }
        if map.len() >= MAX_PATTERNS {
            return Err(format!(
                "the query uses more than {MAX_PATTERNS} distinct patterns; combine them"
            ));
        }
        let re = compile(kind, pattern)?;
        let re = Arc::new(re);
        map.insert((kind, pattern.to_string()), re.clone());
        Ok(re)
    }
}

fn compile(kind: Kind, pattern: &str) -> std::result::Result<Regex, String> {
    if pattern.len() > MAX_PATTERN_BYTES {
        return Err(format!(
            "a {} pattern is {} bytes, over the {MAX_PATTERN_BYTES}-byte limit; shorten it",
            kind.name(),
            pattern.len()
        ));
    }
    let source = match kind {
        Kind::Glob => glob_regex(pattern),
        Kind::Regexp => pattern.to_string(),
    };
    regex::RegexBuilder::new(&source)
        .size_limit(MAX_COMPILED_BYTES)
        .build()
        .map_err(|e| format!("the {} pattern {pattern:?} is not valid: {e}", kind.name()))
}

fn glob_regex(glob: &str) -> String {
    let mut re = String::from("^");
    let mut chars = glob.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '*' if chars.peek() == Some(&'*') => {
                chars.next();
                re.push_str(".*");
            }
            '*' => re.push_str("[^/]*"),
            '?' => re.push_str("[^/]"),
            c => re.push_str(&regex::escape(&c.to_string())),
        }
    }
    re.push('$');
    re
}

/// The plugin's `glob` (`{"glob": [pattern, value]}`: `*` and `?` within a path segment, `**`
/// across segments) and `regexp` (`{"regexp": [pattern, value]}`) operators.
struct Operator {
    kind: Kind,
    patterns: Arc<Patterns>,
}

impl CustomOperator for Operator {
    fn evaluate<'a>(
        &self,
        args: &[&'a DataValue<'a>],
        _ctx: &mut EvalContext<'_, 'a>,
        arena: &'a Bump,
    ) -> datalogic_rs::Result<&'a DataValue<'a>> {
        let (Some(p), Some(v)) = (args.first(), args.get(1)) else {
            return Err(datalogic_rs::Error::custom_message(format!(
                "{} takes two arguments, [pattern, value]",
                self.kind.name()
            )));
        };
        let Some(p) = p.as_str() else {
            return Err(datalogic_rs::Error::custom_message(format!(
                "the first argument of {} must be a string pattern",
                self.kind.name()
            )));
        };
        let re = self.patterns.get(self.kind, p).map_err(datalogic_rs::Error::custom_message)?;
        let hit = match v {
            DataValue::String(s) => re.is_match(s),
            // A list (tags, say) matches when one of its strings does.
            DataValue::Array(items) => {
                items.iter().any(|i| i.as_str().is_some_and(|s| re.is_match(s)))
            }
            _ => false,
        };
        Ok(arena.bool(hit))
    }
}

/// Every `{"glob"|"regexp": ["literal", ...]}` pattern written in the rule, compiled now, so
/// a bad one is refused before any note is read.
fn precompile(rule: &Value, patterns: &Patterns) -> std::result::Result<(), String> {
    match rule {
        Value::Object(o) => {
            for (op, args) in o {
                let kind = match op.as_str() {
                    "glob" => Some(Kind::Glob),
                    "regexp" => Some(Kind::Regexp),
                    _ => None,
                };
                if let (Some(kind), Some(Value::String(p))) =
                    (kind, args.as_array().and_then(|a| a.first()))
                {
                    patterns.get(kind, p)?;
                }
                precompile(args, patterns)?;
            }
            Ok(())
        }
        Value::Array(items) => items.iter().try_for_each(|i| precompile(i, patterns)),
        _ => Ok(()),
    }
}

fn invalid(msg: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorCode::InvalidRequest,
        format!("the JsonLogic query cannot be evaluated: {msg}; see jsonlogic.com for the syntax"),
    )
}

/// One note a JsonLogic rule matched, in the plugin's shape; `result` is whatever the rule
/// evaluated to. The router answers a list of `Value`s, so each match becomes one here.
#[derive(serde::Serialize)]
struct Match<'a> {
    filename: &'a str,
    result: Value,
}

/// Runs a JsonLogic rule over each note's data; the notes whose result is truthy, as the
/// plugin's `[{"filename", "result"}]`. Stops with a refusal past `budget`, and with
/// `not_ready`-free silence (an empty answer nobody reads) once `cancel` is set.
pub(crate) fn search(
    rule: &Value,
    notes: &[(String, Value)],
    budget: Duration,
    cancel: &Cancel,
) -> Result<Vec<Value>> {
    let patterns = Arc::new(Patterns::default());
    precompile(rule, &patterns).map_err(invalid)?;
    let engine = datalogic_rs::Engine::builder()
        .add_operator("glob", Operator { kind: Kind::Glob, patterns: patterns.clone() })
        .add_operator("regexp", Operator { kind: Kind::Regexp, patterns })
        .build();
    let compiled = engine.compile(rule).map_err(invalid)?;
    let started = Instant::now();
    tracing::debug!("a JsonLogic search started over {} notes", notes.len());
    let mut out = Vec::new();
    for (done, (path, data)) in notes.iter().enumerate() {
        if cancel.client_left("a JsonLogic search", done, notes.len(), started) {
            return Ok(Vec::new());
        }
        if started.elapsed() > budget {
            return Err(Error::new(
                ErrorCode::InvalidRequest,
                format!(
                    "the JsonLogic query ran past its {} s budget after {done} of {} notes; \
                     narrow it (fewer or simpler regexp operators, or a glob on the path first, \
                     which `and` evaluates before the rest)",
                    budget.as_secs(),
                    notes.len()
                ),
            ));
        }
        let arena = Bump::new();
        let got = engine.evaluate(&compiled, data, &arena).map_err(invalid)?;
        if !engine.truthy(got) {
            continue;
        }
        let result: Value =
            serde_json::from_str(&got.to_json_string()).unwrap_or(Value::Bool(true));
        out.push(serde_json::to_value(Match { filename: path, result }).map_err(invalid)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn notes() -> Vec<(String, Value)> {
        vec![
            (
                "a/x.md".to_string(),
                json!({"path": "a/x.md", "tags": ["t1"], "frontmatter": {"n": 42}}),
            ),
            ("b/y.md".to_string(), json!({"path": "b/y.md", "tags": [], "frontmatter": {}})),
        ]
    }

    fn run(rule: Value) -> Result<Vec<Value>> {
        search(&rule, &notes(), BUDGET, &Cancel::default())
    }

    fn names(rule: Value) -> Vec<String> {
        run(rule).unwrap().iter().map(|v| v["filename"].as_str().unwrap().to_string()).collect()
    }

    #[test]
    fn jsonlogic_runs_with_the_glob_and_regexp_operators() {
        assert_eq!(names(json!({"glob": ["a/*.md", {"var": "path"}]})), ["a/x.md"]);
        assert_eq!(names(json!({"regexp": ["^b/", {"var": "path"}]})), ["b/y.md"]);
        assert_eq!(names(json!({"regexp": ["^t", {"var": "tags"}]})), ["a/x.md"]);
        assert_eq!(names(json!({"in": ["t1", {"var": "tags"}]})), ["a/x.md"]);
        assert_eq!(names(json!({"==": [{"var": "frontmatter.n"}, 42]})), ["a/x.md"]);
        assert!(run(json!({"nonsense-op": [1]})).is_err());
    }

    #[test]
    fn an_invalid_or_oversized_pattern_is_refused_naming_it_not_silently_false() {
        let e = run(json!({"regexp": ["(unclosed", {"var": "path"}]})).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidRequest);
        assert!(e.message().contains("(unclosed"), "{e:?}");
        let long = "a".repeat(MAX_PATTERN_BYTES + 1);
        let e = run(json!({"or": [false, {"regexp": [long, {"var": "path"}]}]})).unwrap_err();
        assert!(e.message().contains("byte limit"), "{e:?}");
        // A pattern too big once compiled, though short to write.
        let e = run(json!({"regexp": ["\\w{1000}\\w{1000}\\w{1000}", {"var": "path"}]}));
        assert!(e.is_err(), "{e:?}");
    }

    #[test]
    fn each_pattern_is_compiled_once_however_many_notes_it_meets() {
        let patterns = Patterns::default();
        precompile(
            &json!({"and": [{"regexp": ["^a", {"var": "p"}]}, {"regexp": ["^a", 1]}]}),
            &patterns,
        )
        .unwrap();
        assert_eq!(patterns.0.lock().unwrap().len(), 1);
        let first = patterns.get(Kind::Regexp, "^a").unwrap();
        let again = patterns.get(Kind::Regexp, "^a").unwrap();
        assert!(Arc::ptr_eq(&first, &again));
    }

    #[test]
    fn too_many_distinct_patterns_are_refused() {
        let ops: Vec<Value> = (0..=MAX_PATTERNS)
            .map(|i| json!({"regexp": [format!("^x{i}"), {"var": "path"}]}))
            .collect();
        let e = run(json!({"or": ops})).unwrap_err();
        assert!(e.message().contains("distinct patterns"), "{e:?}");
    }

    #[test]
    fn the_budget_stops_an_evaluation_and_says_how_far_it_got() {
        let many: Vec<(String, Value)> =
            (0..50).map(|i| (format!("n{i}.md"), json!({"path": format!("n{i}.md")}))).collect();
        let e = search(
            &json!({"glob": ["*.md", {"var": "path"}]}),
            &many,
            Duration::ZERO,
            &Cancel::default(),
        )
        .unwrap_err();
        assert!(e.message().contains("budget after"), "{e:?}");
    }

    #[test]
    fn a_cancelled_evaluation_stops_at_once() {
        let cancel = Cancel::default();
        drop(cancel.on_drop());
        let got =
            search(&json!({"glob": ["*", {"var": "path"}]}), &notes(), BUDGET, &cancel).unwrap();
        assert!(got.is_empty());
    }
}
