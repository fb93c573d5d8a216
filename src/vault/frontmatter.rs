//! Frontmatter: finding the `---` block, reading its YAML, and editing single keys in place.
//!
//! A note has frontmatter when its first line (after an optional BOM) is `---` and a later line
//! is `---` (trailing spaces and tabs allowed on both). Such a leading block is always
//! frontmatter, even if the author meant horizontal rules. That rule lives in `markdown`, so the
//! line model and this module cannot disagree on where the YAML ends.
//!
//! Reads go through serde-saphyr into JSON values. Edits never re-dump YAML: they replace,
//! insert or remove the lines of one key and copy every other byte, so comments, key order and
//! hand formatting survive, and a block whose YAML does not parse can still be edited. The lines
//! of the edited key are written with the note's line ending (`text::Style`); nothing else is
//! normalised. This module does not decide when a timestamp is due; callers do.

use std::ops::Range;

use serde_json::{Map, Value};

use super::text::{BOM, Style};
use crate::error::{Error, ErrorCode, Result};

/// Where the frontmatter block sits in a note's text (the rule lives in `markdown`, which
/// every line scanner shares).
pub(crate) use crate::markdown::FrontmatterBlock as Block;

/// Finds the frontmatter block, if the note has one.
pub fn locate(text: &str) -> Option<Block> {
    crate::markdown::frontmatter_block(text)
}

/// Splits a note into its head (the block and the blank lines after it) and its body.
/// A note without frontmatter has an empty head (a BOM, if present, stays in the head).
pub(crate) fn split(text: &str) -> (&str, &str) {
    let Some(block) = locate(text) else {
        let bom = if text.starts_with(BOM) { BOM.len_utf8() } else { 0 };
        return text.split_at(bom);
    };
    let mut end = block.end;
    for line in text[block.end..].split_inclusive('\n') {
        if line.trim().is_empty() && line.ends_with('\n') {
            end += line.len();
        } else {
            break;
        }
    }
    text.split_at(end)
}

// ---------------------------------------------------------------------------------------------
// Reading

/// Lenient parsed view: the block's YAML as a JSON object. No block, malformed YAML, or a
/// top level that is not a mapping => empty map. Never an error.
pub(crate) fn parse(text: &str) -> Map<String, Value> {
    parse_strict(text).ok().flatten().unwrap_or_default()
}

/// Strict view for checkers: Ok(None) without a block, Ok(Some(map)) when it parses to a
/// mapping (an empty block is an empty map), Err(message with line/column) otherwise.
pub fn parse_strict(text: &str) -> std::result::Result<Option<Map<String, Value>>, String> {
    let Some(block) = locate(text) else {
        return Ok(None);
    };
    // A leading newline stands in for the opening fence, so the parser's line numbers are the
    // note's own line numbers without rewriting its messages.
    let yaml = format!("\n{}", &text[block.yaml_start..block.yaml_end]);
    // Numbers a float would change are read as the text they were written as.
    let yaml = super::exact::quote_inexact_numbers(&yaml);
    match serde_saphyr::from_str::<Value>(&yaml) {
        Ok(Value::Object(map)) => Ok(Some(map)),
        Ok(Value::Null) => Ok(Some(Map::new())),
        Ok(other) => Err(format!(
            "the frontmatter is {}, not a mapping of keys to values; write it as `key: value` lines",
            kind_of(&other)
        )),
        Err(err) => {
            let detail = err.without_snippet().to_string();
            // The parser's hint names a Rust option; a vault author cannot act on it.
            let detail = detail.replace(", set DuplicateKeyPolicy in Options if acceptable", "");
            Err(format!(
                "the frontmatter is not valid YAML: {detail} (lines count from the note's first \
                 line); fix that line"
            ))
        }
    }
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "empty",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a single string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

// ---------------------------------------------------------------------------------------------
// Editing

/// The order a missing key is inserted in; keys outside this list go to the end of the block.
const CANONICAL_ORDER: [&str; 7] =
    ["type", "title", "description", "tags", "timestamp", "expires", "expires_reason"];

/// Sets `key` to `value`, line-surgically. Returns the new text. Any key can be set: one
/// that would not read back as itself from a plain `key:` line is written double-quoted.
pub fn set(text: &str, key: &str, value: &Value) -> Result<String> {
    let rendered = render(key, value)?;
    let block = locate(text).ok_or_else(|| no_block(key))?;
    Ok(apply(text, &block, key, Some(&rendered)))
}

/// Removes `key` (and its continuation lines), written plain or quoted. Absent key =>
/// Ok(text unchanged).
pub fn delete(text: &str, key: &str) -> Result<String> {
    let block = locate(text).ok_or_else(|| no_block(key))?;
    Ok(apply(text, &block, key, None))
}

/// Sets `timestamp: <now>` bare (now is already formatted `YYYY-MM-DDTHH:MM:SSZ`).
/// None when the note has no frontmatter block.
pub fn bump_timestamp(text: &str, now: &str) -> Option<String> {
    bump_key(text, TIMESTAMP, now)
}

/// Sets `<key>: <now>` bare, as [`bump_timestamp`] does for the default key. None when the
/// note has no frontmatter block or `key` is empty (stamping turned off).
pub(crate) fn bump_key(text: &str, key: &str, now: &str) -> Option<String> {
    if key.is_empty() {
        return None;
    }
    let block = locate(text)?;
    Some(apply(text, &block, key, Some(&format!("{key}: {now}\n"))))
}

/// Where [`insert`] puts new entries, relative to an existing key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    /// Just above the key's line.
    Before,
    /// Just below the key's last line.
    After,
    /// In the key's place: the key and its lines go.
    Instead,
}

/// Renames `key` to `new`: only the name on the key's line changes (written bare or quoted as
/// [`set`] would write it); its value, comment and continuation lines keep their bytes. A
/// missing `key` is `not_found`; a `new` the block already has is `key_exists`, since the
/// rename would make it a duplicate key, which YAML refuses.
pub(crate) fn rename(text: &str, key: &str, new: &str) -> Result<String> {
    let block = locate(text).ok_or_else(|| no_block(key))?;
    let lines = yaml_lines(text, &block);
    let Some(span) = key_spans(&lines, key).into_iter().next() else {
        return Err(missing_key(key));
    };
    if new.trim().is_empty() {
        return Err(Error::new(
            ErrorCode::InvalidRequest,
            format!("the new name for `{key}` is empty; send the key's new name"),
        ));
    }
    if new != key && !key_spans(&lines, new).is_empty() {
        return Err(taken(new));
    }
    let line = lines[span.start];
    let rest = if line.starts_with(['"', '\'']) {
        quoted_key(line).map_or("", |(_, rest)| rest)
    } else {
        &line[key.len()..]
    };
    let renamed = format!("{}{rest}", key_text(new));
    let key_line = span.start..span.start + 1;
    Ok(splice(text, &block, &lines, std::slice::from_ref(&key_line), Some(span.start), &renamed))
}

/// Inserts `entries` (each `key: value`, in order) beside the existing `anchor` key, or in
/// its place. Every other line keeps its bytes. A missing `anchor` is `not_found`; an entry
/// whose key the block already has (other than the anchor it replaces) is `key_exists`, so an
/// insert never silently overwrites a value; set that key instead.
pub(crate) fn insert(
    text: &str,
    anchor: &str,
    place: Place,
    entries: &[(String, Value)],
) -> Result<String> {
    let block = locate(text).ok_or_else(|| no_block(anchor))?;
    let lines = yaml_lines(text, &block);
    let Some(span) = key_spans(&lines, anchor).into_iter().next() else {
        return Err(missing_key(anchor));
    };
    let mut rendered = String::new();
    for (n, (key, value)) in entries.iter().enumerate() {
        let replaced = place == Place::Instead && key == anchor;
        if (!replaced && !key_spans(&lines, key).is_empty())
            || entries[..n].iter().any(|(k, _)| k == key)
        {
            return Err(taken(key));
        }
        rendered.push_str(&render(key, value)?);
    }
    if entries.is_empty() {
        return Err(Error::new(
            ErrorCode::InvalidRequest,
            format!("no entries to put beside `{anchor}`; send at least one key and value"),
        ));
    }
    let rendered = Style::of(text.as_bytes()).endings(&rendered).into_owned();
    let (drop, at) = match place {
        Place::Before => (Vec::new(), span.start),
        Place::After => (Vec::new(), span.end),
        Place::Instead => (vec![span.clone()], span.start),
    };
    Ok(splice(text, &block, &lines, &drop, Some(at), &rendered))
}

fn missing_key(key: &str) -> Error {
    Error::new(
        ErrorCode::NotFound,
        format!("the frontmatter has no key `{key}`; read the note's map for the keys it has"),
    )
}

fn taken(key: &str) -> Error {
    Error::new(
        ErrorCode::KeyExists,
        format!(
            "the frontmatter already has a key `{key}`; choose another name, or set `{key}` \
             itself"
        ),
    )
}

fn no_block(key: &str) -> Error {
    Error::new(
        ErrorCode::NoFrontmatter,
        format!(
            "cannot edit `{key}`: the note has no frontmatter block; add one with a write, or \
             set the body"
        ),
    )
}

/// How `key` is written before its colon: bare when a plain `key:` line reads back as this
/// string key in YAML 1.1 and 1.2, else double-quoted (an empty key, edge spaces, a `:`, a line
/// break, `null`, `true`, `<<`, a leading indicator...).
fn key_text(key: &str) -> String {
    let plain = !needs_quotes(key)
        && !key.contains(':')
        && !key.contains(['\t', '#'])
        // Syntax alone lets through what our parser still reads as something other than a
        // string key; a round trip catches it.
        && matches!(
            serde_saphyr::from_str::<Value>(&format!("{key}: 1")),
            Ok(Value::Object(map)) if map.len() == 1 && map.get(key) == Some(&Value::from(1))
        );
    if plain { key.to_string() } else { quote(key) }
}

fn invalid(message: String) -> Error {
    Error::new(ErrorCode::InvalidValue, message)
}

fn null_refused(key: &str) -> Error {
    invalid(format!(
        "`{key}` cannot be set to null (or hold a null); to remove the key, delete it instead"
    ))
}

/// The lines `key: value` is written as, each ending in a newline.
fn render(key: &str, value: &Value) -> Result<String> {
    let name = key_text(key);
    let lines = render_value(key, value)?;
    Ok(format!("{name}{lines}"))
}

/// What follows the key in [`render`]: `: value\n`, or `:\n` and the list's lines.
fn render_value(key: &str, value: &Value) -> Result<String> {
    match value {
        Value::Null => Err(null_refused(key)),
        Value::Object(_) => {
            Err(invalid(format!("`{key}`: nested maps are not supported; set a scalar or a list")))
        }
        Value::Array(items) if items.is_empty() => Ok(": []\n".to_string()),
        Value::Array(items) if key == "tags" => {
            let mut parts = Vec::with_capacity(items.len());
            for item in items {
                parts.push(match item {
                    Value::Null => return Err(null_refused(key)),
                    Value::String(s) => flow_scalar(s),
                    Value::Number(n) => number_text(n),
                    Value::Array(_) | Value::Object(_) => {
                        return Err(invalid(format!(
                            "`tags` takes a list of plain values; one item is {}, write it as \
                             a string instead",
                            kind_of(item)
                        )));
                    }
                    other => other.to_string(),
                });
            }
            Ok(format!(": [{}]\n", parts.join(", ")))
        }
        Value::Array(items) => {
            let mut out = ":\n".to_string();
            for item in items {
                out.push_str(&render_item(key, item)?);
            }
            Ok(out)
        }
        // The vault's `timestamp` convention is a bare UTC time, as the automatic bump writes.
        Value::String(s) if key == TIMESTAMP && is_plain_timestamp(s) => Ok(format!(": {s}\n")),
        scalar => Ok(format!(": {}\n", render_scalar(key, scalar)?)),
    }
}

/// One `  - ` entry of a block list; a map entry puts `date`, then `what`, first.
fn render_item(key: &str, item: &Value) -> Result<String> {
    let Value::Object(map) = item else {
        if let Value::Array(_) = item {
            return Err(invalid(format!(
                "`{key}`: a list inside a list is not supported; flatten it or use a list of maps"
            )));
        }
        return Ok(format!("  - {}\n", render_scalar(key, item)?));
    };
    if map.is_empty() {
        return Ok("  - {}\n".to_string());
    }
    let leading = ["date", "what"].into_iter().filter_map(|k| map.get_key_value(k));
    let rest = map.iter().filter(|(k, _)| *k != "date" && *k != "what");
    let mut out = String::new();
    for (n, (field, value)) in leading.chain(rest).enumerate() {
        if matches!(value, Value::Array(_) | Value::Object(_)) {
            return Err(invalid(format!(
                "`{key}`: entry field `{field}` holds {}; entries of a list may only hold \
                 scalars",
                kind_of(value)
            )));
        }
        let field_text = key_text(field);
        let indent = if n == 0 { "  - " } else { "    " };
        // An `expires` entry's `date` is meant as a date (`- date: 2026-09-25`, the shape
        // upkeep documents); mdvault's reader hands it back as a string either way.
        let text = match value {
            Value::String(s) if key == "expires" && field == "date" && is_plain_date(s) => {
                s.clone()
            }
            _ => render_scalar(key, value)?,
        };
        out.push_str(&format!("{indent}{field_text}: {text}\n"));
    }
    Ok(out)
}

fn render_scalar(key: &str, value: &Value) -> Result<String> {
    match value {
        Value::Null => Err(null_refused(key)),
        Value::String(s) if needs_quotes(s) => Ok(quote(s)),
        Value::String(s) => Ok(s.clone()),
        Value::Array(_) | Value::Object(_) => {
            Err(invalid(format!("`{key}`: expected a scalar, got {}", kind_of(value))))
        }
        Value::Number(n) => Ok(number_text(n)),
        Value::Bool(b) => Ok(b.to_string()),
    }
}

/// The key whose bare UTC times the automatic bump writes.
const TIMESTAMP: &str = "timestamp";

/// The most significant digits a double's shortest decimal can need; a double that a shorter
/// decimal names was most likely typed as that decimal.
const F64_MAX_SHORTEST_DIGITS: usize = 17;

/// Decimal exponents written positionally (`0.0001`, `1234.5`); beyond them, `1.0e+30`.
const POSITIONAL_EXPONENTS: std::ops::Range<i32> = -5..17;

/// A number as YAML 1.1 and 1.2 both read back as the same number.
///
/// Integers JSON carries exactly (64-bit, signed or not) are their digits. Every other number
/// arrives as a double (serde_json without `arbitrary_precision`, see docs/editing.md) and is
/// written as a float: the shortest decimal that reads back as the same double, with a `.` and
/// a signed exponent, because YAML 1.1 reads `1e+30` or `1e30` as a string. One exception: an
/// integer beyond 64 bits whose shortest decimal needs all 17 digits (2^64 is
/// `1.8446744073709552e+19`) was typed as its digits, not as that decimal, so it is written
/// as the double's exact integer (`18446744073709551616`): exactly the caller's number when a
/// double holds it, the nearest one otherwise (the rounding happened when the JSON was read).
/// That holds up to 128 bits, the widest integers (identifiers, hashes) programs hold; a
/// larger magnitude is far more likely a float, and its exact digits would run to hundreds.
fn number_text(n: &serde_json::Number) -> String {
    if let Some(i) = n.as_i64() {
        return i.to_string();
    }
    if let Some(u) = n.as_u64() {
        return u.to_string();
    }
    // Without `arbitrary_precision` every other JSON number is a finite double.
    let v = n.as_f64().unwrap_or_default();
    let scientific = format!("{v:e}");
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or_default();
    let digits = mantissa.bytes().filter(u8::is_ascii_digit).count();
    let beyond_64_bits = !(I64_MIN..U64_LIMIT).contains(&v) && v.abs() < U128_LIMIT;
    if beyond_64_bits && digits >= F64_MAX_SHORTEST_DIGITS {
        return format!("{v:.0}");
    }
    if POSITIONAL_EXPONENTS.contains(&exponent) {
        let plain = v.to_string();
        return if plain.contains('.') { plain } else { format!("{plain}.0") };
    }
    let mantissa =
        if mantissa.contains('.') { mantissa.to_string() } else { format!("{mantissa}.0") };
    let sign = if exponent < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{}", exponent.unsigned_abs())
}

/// 2^64, the first integer a `u64` cannot hold.
const U64_LIMIT: f64 = 18_446_744_073_709_551_616.0;

/// 2^128, the first magnitude a 128-bit integer cannot hold.
const U128_LIMIT: f64 = 340_282_366_920_938_463_463_374_607_431_768_211_456.0;

/// -2^63, the smallest `i64`.
const I64_MIN: f64 = -9_223_372_036_854_775_808.0;

/// A tag inside `[...]`, where commas, brackets and (for PyYAML) `?` also end a bare item.
fn flow_scalar(s: &str) -> String {
    let bare = !needs_quotes(s)
        && !s.contains([',', '?', '[', ']', '{', '}'])
        && matches!(
            serde_saphyr::from_str::<Value>(&format!("k: [{s}]")),
            Ok(Value::Object(map))
                if map.get("k") == Some(&Value::Array(vec![Value::String(s.to_string())]))
        );
    if bare { s.to_string() } else { quote(s) }
}

/// JSON double-quoted, which YAML reads the same way. serde_json leaves a few characters raw
/// that YAML either rejects inside quotes or treats as line breaks, so those are escaped too.
fn quote(s: &str) -> String {
    let json = serde_json::to_string(s).unwrap_or_else(|_| format!("\"{}\"", s.escape_default()));
    if !json.chars().any(needs_escape_beyond_json) {
        return json;
    }
    let mut out = String::with_capacity(json.len() + 8);
    for c in json.chars() {
        if needs_escape_beyond_json(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

fn needs_escape_beyond_json(c: char) -> bool {
    // Everything below 0x20 is already escaped by serde_json.
    ('\u{7f}'..='\u{9f}').contains(&c) || is_unicode_special(c)
}

fn is_unicode_special(c: char) -> bool {
    matches!(c, '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}')
}

fn is_unsafe_char(c: char) -> bool {
    c.is_control() || is_unicode_special(c)
}

/// True when a string scalar must be written double-quoted to read back as the same string, in
/// YAML 1.1 (PyYAML, older tools) as in 1.2: a date such as `2024-01-01` is a date to a 1.1
/// reader, so it is quoted like `yes`, `0o17`, `010` or `1:20`.
pub(crate) fn needs_quotes(s: &str) -> bool {
    if s.is_empty()
        || s.starts_with(char::is_whitespace)
        || s.ends_with(char::is_whitespace)
        || s.chars().any(is_unsafe_char)
        || reads_as_other_type(s)
        || starts_with_indicator(s)
        || s.contains(": ")
        || s.ends_with(':')
        || s.contains(" #")
    {
        return true;
    }
    // The rules above follow YAML 1.1 and 1.2 so other readers (Obsidian, PyYAML) agree; this
    // round trip makes sure our own parser agrees too.
    !matches!(
        serde_saphyr::from_str::<Value>(&format!("k: {s}")),
        Ok(Value::Object(map)) if map.len() == 1 && map.get("k") == Some(&Value::from(s))
    )
}

fn starts_with_indicator(s: &str) -> bool {
    const INDICATORS: &str = "?:,[]{}#&*!|>'\"%@`";
    let mut chars = s.chars();
    match chars.next() {
        Some('-') => matches!(chars.next(), None | Some(' ' | '\t')),
        Some(c) => INDICATORS.contains(c),
        None => false,
    }
}

/// Booleans, nulls, numbers and timestamps in either YAML version, erring towards quoting.
fn reads_as_other_type(s: &str) -> bool {
    const WORDS: [&str; 12] =
        ["true", "false", "yes", "no", "on", "off", "y", "n", "null", "~", "=", "<<"];
    let lower = s.to_ascii_lowercase();
    if WORDS.contains(&lower.as_str()) {
        return true;
    }
    let unsigned = lower.strip_prefix(['+', '-']).unwrap_or(&lower);
    matches!(unsigned, ".inf" | ".nan")
        || is_radix_int(unsigned)
        || is_decimal_number(unsigned)
        || is_sexagesimal(unsigned)
        || looks_like_timestamp(s)
}

fn is_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

fn is_radix_int(lower: &str) -> bool {
    ["0x", "0o", "0b"].iter().any(|prefix| {
        lower.strip_prefix(prefix).is_some_and(|rest| {
            !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_hexdigit() || b == b'_')
        })
    })
}

/// `0123`, `1_000`, `1.0`, `.5`, `1.`, `1e3`: digits and underscores with at most one dot
/// and an optional exponent.
fn is_decimal_number(lower: &str) -> bool {
    let (mantissa, exponent) = match lower.split_once('e') {
        Some((m, e)) => (m, Some(e)),
        None => (lower, None),
    };
    let exponent_ok = exponent.is_none_or(|e| is_digits(e.strip_prefix(['+', '-']).unwrap_or(e)));
    exponent_ok
        && mantissa.bytes().any(|b| b.is_ascii_digit())
        && mantissa.bytes().all(|b| b.is_ascii_digit() || b == b'_' || b == b'.')
        && mantissa.bytes().filter(|&b| b == b'.').count() <= 1
}

/// YAML 1.1 base-60 numbers such as `1:20` or `190:20:30.15`.
fn is_sexagesimal(lower: &str) -> bool {
    let mut parts = lower.split(':');
    let first = parts.next().unwrap_or_default();
    let rest: Vec<&str> = parts.collect();
    !rest.is_empty()
        && first.starts_with(|c: char| c.is_ascii_digit())
        && first.bytes().all(|b| b.is_ascii_digit() || b == b'_')
        && rest.iter().enumerate().all(|(i, part)| {
            let whole =
                if i + 1 == rest.len() { part.split('.').next().unwrap_or("") } else { part };
            let fraction_ok =
                part[whole.len()..].bytes().skip(1).all(|b| b.is_ascii_digit() || b == b'_');
            (1..=2).contains(&whole.len()) && is_digits(whole) && fraction_ok
        })
}

fn is_plain_date(s: &str) -> bool {
    is_date_bytes(s.as_bytes())
}

fn is_date_bytes(b: &[u8]) -> bool {
    b.len() == 10
        && b.iter()
            .enumerate()
            .all(|(i, c)| if i == 4 || i == 7 { *c == b'-' } else { c.is_ascii_digit() })
}

fn is_plain_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 20
        && is_date_bytes(&b[..10])
        && b[10] == b'T'
        && b[19] == b'Z'
        && b[11..19]
            .iter()
            .enumerate()
            .all(|(i, c)| if i == 2 || i == 5 { *c == b':' } else { c.is_ascii_digit() })
}

/// A YAML 1.1 date or datetime: `YYYY-M-D` then `T`, `t` or spaces and a digit. Broader than
/// the grammar, which only costs an unneeded pair of quotes.
fn looks_like_timestamp(s: &str) -> bool {
    let mut fields = s.splitn(3, '-');
    let (Some(year), Some(month), Some(rest)) = (fields.next(), fields.next(), fields.next())
    else {
        return false;
    };
    let day_len = rest.bytes().take_while(u8::is_ascii_digit).count();
    let after = rest[day_len..].trim_start_matches([' ', '\t']);
    let separated = rest[day_len..].starts_with(['T', 't', ' ', '\t']);
    year.len() == 4
        && is_digits(year)
        && (1..=2).contains(&month.len())
        && is_digits(month)
        && (1..=2).contains(&day_len)
        && (rest.len() == day_len && month.len() == 2 && day_len == 2
            || separated
                && after.trim_start_matches(['T', 't']).starts_with(|c: char| c.is_ascii_digit()))
}

// ---------------------------------------------------------------------------------------------
// Line surgery

/// The block's YAML lines, each with its newline.
fn yaml_lines<'a>(text: &'a str, block: &Block) -> Vec<&'a str> {
    text[block.yaml_start..block.yaml_end].split_inclusive('\n').collect()
}

/// True for a column-0 `key:` line, the key bare or quoted (spaces before the colon tolerated),
/// with a space, a tab or the end of the line after the colon.
fn is_key_line(line: &str, key: &str) -> bool {
    let rest = if line.starts_with(['"', '\'']) {
        match quoted_key(line) {
            Some((name, rest)) if name == key => rest,
            _ => return false,
        }
    } else {
        // A key that is empty or has edge whitespace is only ever written quoted; matching it
        // bare would claim an indented line or a stray `: x`.
        let bare = !key.is_empty() && key.trim() == key;
        match line.strip_prefix(key) {
            Some(rest) if bare => rest,
            _ => return false,
        }
    };
    let Some(after) = rest.trim_start_matches([' ', '\t']).strip_prefix(':') else {
        return false;
    };
    after.trim_end_matches(['\n', '\r']).is_empty() || after.starts_with([' ', '\t'])
}

/// A quoted key at the start of `line` (double-quoted with backslash escapes, or
/// single-quoted with `''`): the key it reads as, and the rest of the line after the quote.
fn quoted_key(line: &str) -> Option<(String, &str)> {
    let quote = line.as_bytes().first().copied()?;
    let bytes = line.as_bytes();
    let mut i = 1;
    loop {
        match *bytes.get(i)? {
            b'\\' if quote == b'"' => i += 2,
            b'\'' if quote == b'\'' && bytes.get(i + 1) == Some(&b'\'') => i += 2,
            b'\n' | b'\r' => return None,
            b if b == quote => break,
            _ => i += 1,
        }
    }
    let token = line.get(..=i)?;
    match serde_saphyr::from_str::<Value>(&format!("{token}: 1")) {
        Ok(Value::Object(map)) if map.len() == 1 => {
            let name = map.keys().next()?.clone();
            Some((name, &line[i + 1..]))
        }
        _ => None,
    }
}

enum LineKind {
    /// Indented, or a column-0 `- ` entry: belongs to the key above.
    Continuation,
    /// Belongs to the key above only if a continuation follows it.
    Blank,
    /// A new key, a comment or anything else at column 0.
    Boundary,
}

fn line_kind(line: &str) -> LineKind {
    let content = line.trim_end_matches(['\n', '\r']);
    if content.trim_matches([' ', '\t']).is_empty() {
        LineKind::Blank
    } else if content.starts_with([' ', '\t'])
        || content == "-"
        || content.starts_with("- ")
        || content.starts_with("-\t")
    {
        LineKind::Continuation
    } else {
        LineKind::Boundary
    }
}

/// Line-index ranges of every occurrence of `key`: its key line plus continuation lines.
fn key_spans(lines: &[&str], key: &str) -> Vec<Range<usize>> {
    let mut spans = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if !is_key_line(lines[i], key) {
            i += 1;
            continue;
        }
        let mut end = i + 1;
        for (j, line) in lines.iter().enumerate().skip(i + 1) {
            match line_kind(line) {
                LineKind::Continuation => end = j + 1,
                LineKind::Blank => {}
                LineKind::Boundary => break,
            }
        }
        spans.push(i..end);
        i = end;
    }
    spans
}

/// Where the first `key:` of the frontmatter block writes its value: the bytes from just after
/// its colon to the end of its last continuation line (a block list's items included). `None`
/// without a block or the key. For readers that must keep every other byte (a tag's rename).
pub(crate) fn value_span(text: &str, key: &str) -> Option<Range<usize>> {
    let block = locate(text)?;
    let lines = yaml_lines(text, &block);
    let span = key_spans(&lines, key).into_iter().next()?;
    let offset = |i: usize| block.yaml_start + lines[..i].iter().map(|l| l.len()).sum::<usize>();
    let line = lines[span.start];
    let rest = if line.starts_with(['"', '\'']) { quoted_key(line)?.1 } else { &line[key.len()..] };
    let value = rest.trim_start_matches([' ', '\t']).strip_prefix(':')?;
    Some(offset(span.start) + line.len() - value.len()..offset(span.end))
}

/// Where a missing `key` goes: before the first later canonical key (and the comment lines
/// directly above it, which usually describe it), else just before the closing fence.
fn insert_index(lines: &[&str], key: &str) -> usize {
    let Some(rank) = CANONICAL_ORDER.iter().position(|k| *k == key) else {
        return lines.len();
    };
    let later = &CANONICAL_ORDER[rank + 1..];
    let Some(mut at) = lines.iter().position(|line| later.iter().any(|k| is_key_line(line, k)))
    else {
        return lines.len();
    };
    while at > 0 && lines[at - 1].starts_with('#') {
        at -= 1;
    }
    at
}

/// Replaces `key`'s lines with `replacement` (inserting it when absent), or removes them when
/// `replacement` is None. Later duplicates of the key are dropped so the block stays valid.
/// The replacement's lines take the note's line ending; every other byte is copied.
fn apply(text: &str, block: &Block, key: &str, replacement: Option<&str>) -> String {
    let replacement = replacement.map(|r| Style::of(text.as_bytes()).endings(r).into_owned());
    let replacement = replacement.as_deref();
    let lines = yaml_lines(text, block);
    let spans = key_spans(&lines, key);
    let insert_at = match (replacement, spans.first()) {
        (None, None) => return text.to_string(),
        (None, Some(_)) => None,
        (Some(_), Some(first)) => Some(first.start),
        (Some(_), None) => Some(insert_index(&lines, key)),
    };
    splice(text, block, &lines, &spans, insert_at, replacement.unwrap_or(""))
}

fn splice(
    text: &str,
    block: &Block,
    lines: &[&str],
    drop: &[Range<usize>],
    insert_at: Option<usize>,
    insert: &str,
) -> String {
    let mut out = String::with_capacity(text.len() + insert.len());
    out.push_str(&text[..block.yaml_start]);
    for (i, line) in lines.iter().enumerate() {
        if insert_at == Some(i) {
            out.push_str(insert);
        }
        if !drop.iter().any(|span| span.contains(&i)) {
            out.push_str(line);
        }
    }
    if insert_at == Some(lines.len()) {
        out.push_str(insert);
    }
    out.push_str(&text[block.yaml_end..]);
    out
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    #[test]
    fn finds_a_block_after_a_bom() {
        let text = "\u{feff}---\ntitle: x\n---  \n\nBody\n";
        let block = locate(text).unwrap();
        assert_eq!(&text[block.yaml_start..block.yaml_end], "title: x\n");
        assert_eq!(block.close_line, 2);
        assert_eq!(split(text).1, "Body\n");
    }

    #[test]
    fn empty_block_and_unclosed_block() {
        assert!(locate("---\n---\nx\n").is_some());
        assert!(locate("---\ntitle: x\n").is_none());
        assert!(locate("--- \nx\n---").is_some());
        assert!(locate("x\n---\n---\n").is_none());
        assert_eq!(split("# T\n"), ("", "# T\n"));
    }

    #[test]
    fn a_rename_changes_only_the_name_and_refuses_a_taken_one() {
        let text = "---\ntitle: x # kept\ntags:\n  - a\n---\nBody\n";
        assert_eq!(
            rename(text, "tags", "labels").unwrap(),
            "---\ntitle: x # kept\nlabels:\n  - a\n---\nBody\n"
        );
        assert_eq!(
            rename(text, "title", "my key").unwrap(),
            "---\nmy key: x # kept\ntags:\n  - a\n---\nBody\n"
        );
        assert_eq!(rename(text, "title", "tags").unwrap_err().code(), ErrorCode::KeyExists);
        assert_eq!(rename(text, "nope", "x").unwrap_err().code(), ErrorCode::NotFound);
    }

    #[test]
    fn entries_go_beside_or_instead_of_a_key_and_never_overwrite() {
        let text = "---\r\ntitle: x\r\ntags:\r\n  - a\r\n---\r\n";
        let one = |k: &str, v: Value| vec![(k.to_string(), v)];
        assert_eq!(
            insert(text, "title", Place::After, &one("status", json!("open"))).unwrap(),
            "---\r\ntitle: x\r\nstatus: open\r\ntags:\r\n  - a\r\n---\r\n"
        );
        assert_eq!(
            insert(text, "tags", Place::Before, &one("count", json!(1))).unwrap(),
            "---\r\ntitle: x\r\ncount: 1\r\ntags:\r\n  - a\r\n---\r\n"
        );
        assert_eq!(
            insert(text, "tags", Place::Instead, &one("tags", json!(["b"]))).unwrap(),
            "---\r\ntitle: x\r\ntags: [b]\r\n---\r\n"
        );
        let taken = insert(text, "title", Place::After, &one("tags", json!(["b"])));
        assert_eq!(taken.unwrap_err().code(), ErrorCode::KeyExists);
        let gone = insert(text, "nope", Place::After, &one("k", json!(1)));
        assert_eq!(gone.unwrap_err().code(), ErrorCode::NotFound);
    }

    const NOW: &str = "2026-05-06T07:08:09Z";

    fn set_ok(text: &str, key: &str, value: Value) -> String {
        set(text, key, &value).unwrap()
    }

    fn code_of(result: Result<String>) -> ErrorCode {
        result.unwrap_err().code()
    }

    #[test]
    fn parse_reads_dates_and_timestamps_as_strings() {
        let text = "---\ntimestamp: 2026-01-02T03:04:05Z\ndate: 2026-09-25\ncount: 3\n---\nBody\n";
        let map = parse(text);
        assert_eq!(map["timestamp"], json!("2026-01-02T03:04:05Z"));
        assert_eq!(map["date"], json!("2026-09-25"));
        assert_eq!(map["count"], json!(3));
    }

    #[test]
    fn parse_is_lenient_and_parse_strict_explains() {
        assert_eq!(parse("no block\n"), Map::new());
        assert_eq!(parse("---\ntitle: [unclosed\n---\n"), Map::new());
        assert_eq!(parse("---\n- a\n- b\n---\n"), Map::new());
        assert_eq!(parse_strict("no block\n"), Ok(None));
        assert_eq!(parse_strict("---\n---\n"), Ok(Some(Map::new())));
        assert_eq!(parse_strict("---\n# only a comment\n---\n"), Ok(Some(Map::new())));
        let err = parse_strict("---\ntype: note\ntitle: [unclosed\n---\n").unwrap_err();
        assert!(err.contains("line 3, column 8"), "{err}");
        let err = parse_strict("---\na: 1\na: 2\n---\n").unwrap_err();
        assert!(err.contains("duplicate mapping key: a") && !err.contains("Options"), "{err}");
        let err = parse_strict("---\n- a\n---\n").unwrap_err();
        assert!(err.contains("a list, not a mapping"), "{err}");
    }

    #[test]
    fn bom_does_not_hide_the_block() {
        let map = parse("\u{feff}---\ntitle: Hello\n---\nBody\n");
        assert_eq!(map["title"], json!("Hello"));
    }

    #[test]
    fn bump_keeps_key_order() {
        let text = "---\ntitle: T\ntimestamp: 2020-01-01T00:00:00Z\ntype: note\n---\nBody\n";
        assert_eq!(
            bump_timestamp(text, NOW).unwrap(),
            "---\ntitle: T\ntimestamp: 2026-05-06T07:08:09Z\ntype: note\n---\nBody\n"
        );
    }

    #[test]
    fn bump_inserts_in_canonical_order_and_skips_notes_without_a_block() {
        let text = "---\ntype: a\ntitle: b\nexpires: none\n---\n";
        assert_eq!(
            bump_timestamp(text, NOW).unwrap(),
            "---\ntype: a\ntitle: b\ntimestamp: 2026-05-06T07:08:09Z\nexpires: none\n---\n"
        );
        assert_eq!(
            bump_timestamp("---\n---\nBody\n", NOW).unwrap(),
            format!("---\ntimestamp: {NOW}\n---\nBody\n")
        );
        assert_eq!(bump_timestamp("# Just a body\n", NOW), None);
    }

    #[test]
    fn missing_key_with_only_a_title() {
        let text = "---\ntitle: T\n---\n";
        assert_eq!(set_ok(text, "type", json!("note")), "---\ntype: note\ntitle: T\n---\n");
        assert_eq!(set_ok(text, "description", json!("d")), "---\ntitle: T\ndescription: d\n---\n");
        assert_eq!(set_ok(text, "status", json!("draft")), "---\ntitle: T\nstatus: draft\n---\n");
    }

    #[test]
    fn missing_key_with_only_unknown_keys() {
        let text = "---\nfoo: 1\nbar: 2\n---\n";
        assert_eq!(set_ok(text, "title", json!("T")), "---\nfoo: 1\nbar: 2\ntitle: T\n---\n");
        assert_eq!(set_ok(text, "baz", json!(3)), "---\nfoo: 1\nbar: 2\nbaz: 3\n---\n");
    }

    #[test]
    fn missing_key_with_tags_and_expires() {
        let text = "---\ntitle: t\ntags: [a]\nexpires: none\nowner: me\n---\n";
        assert_eq!(
            bump_timestamp(text, NOW).unwrap(),
            format!("---\ntitle: t\ntags: [a]\ntimestamp: {NOW}\nexpires: none\nowner: me\n---\n")
        );
        assert_eq!(
            set_ok(text, "description", json!("d")),
            "---\ntitle: t\ndescription: d\ntags: [a]\nexpires: none\nowner: me\n---\n"
        );
        assert_eq!(
            set_ok(text, "type", json!("note")),
            "---\ntype: note\ntitle: t\ntags: [a]\nexpires: none\nowner: me\n---\n"
        );
        assert_eq!(
            set_ok(text, "expires_reason", json!("why")),
            "---\ntitle: t\ntags: [a]\nexpires: none\nowner: me\nexpires_reason: why\n---\n"
        );
    }

    #[test]
    fn inserted_key_goes_above_the_comment_that_introduces_the_next_key() {
        let text = "---\ntitle: t\n\n# when this lapses\nexpires: none\n---\n";
        assert_eq!(
            bump_timestamp(text, NOW).unwrap(),
            format!("---\ntitle: t\n\ntimestamp: {NOW}\n# when this lapses\nexpires: none\n---\n")
        );
    }

    #[test]
    fn expires_renders_as_a_block_list_with_date_first() {
        let text = "---\ntitle: t\nexpires: none\n---\nBody\n";
        let value = json!([
            {"what": "renew the domain", "date": "2026-09-25"},
            {"owner": "me", "what": "x", "date": "2026-10-01"},
        ]);
        let out = set_ok(text, "expires", value.clone());
        assert_eq!(
            out,
            "---\ntitle: t\nexpires:\n  - date: 2026-09-25\n    what: renew the domain\n  \
             - date: 2026-10-01\n    what: x\n    owner: me\n---\nBody\n"
        );
        assert_eq!(parse(&out)["expires"], value);
    }

    #[test]
    fn expires_none_then_reason_after_it() {
        let text = "---\ntitle: t\nexpires:\n  - date: 2026-09-25\n---\n";
        let out = set_ok(text, "expires", json!("none"));
        assert_eq!(out, "---\ntitle: t\nexpires: none\n---\n");
        let out = set_ok(&out, "expires_reason", json!("evergreen reference"));
        assert_eq!(out, "---\ntitle: t\nexpires: none\nexpires_reason: evergreen reference\n---\n");
        assert_eq!(parse(&out)["expires"], json!("none"));
    }

    #[test]
    fn lists_render_by_key() {
        let text = "---\ntitle: t\n---\n";
        assert_eq!(
            set_ok(text, "tags", json!(["a", "two words", "x,y", "true", 7])),
            "---\ntitle: t\ntags: [a, two words, \"x,y\", \"true\", 7]\n---\n"
        );
        assert_eq!(
            set_ok(text, "aliases", json!(["A", "0123"])),
            "---\ntitle: t\naliases:\n  - A\n  - \"0123\"\n---\n"
        );
        assert_eq!(set_ok(text, "aliases", json!([])), "---\ntitle: t\naliases: []\n---\n");
        assert_eq!(set_ok(text, "tags", json!([])), "---\ntitle: t\ntags: []\n---\n");
        let out = set_ok(text, "tags", json!(["a", "x,y", "#x", "b]"]));
        assert_eq!(parse(&out)["tags"], json!(["a", "x,y", "#x", "b]"]));
    }

    #[test]
    fn delete_leaves_siblings_and_comments() {
        let text = "---\ntitle: t\n# keep me\nexpires:\n  - date: 2026-09-25\n    what: x\nexpires_reason: r\n---\nBody\n";
        let once = delete(text, "expires").unwrap();
        assert_eq!(once, "---\ntitle: t\n# keep me\nexpires_reason: r\n---\nBody\n");
        assert_eq!(delete(&once, "expires").unwrap(), once);
    }

    #[test]
    fn strings_are_quoted_only_when_needed() {
        let cases = [
            ("1548070648281038848", "\"1548070648281038848\""),
            ("true", "\"true\""),
            ("false", "\"false\""),
            ("null", "\"null\""),
            ("no", "\"no\""),
            ("0123", "\"0123\""),
            ("1.0", "\"1.0\""),
            ("2026-09-12", "\"2026-09-12\""),
            ("2024-01-01", "\"2024-01-01\""),
            ("2026-09-12T10:11:12Z", "\"2026-09-12T10:11:12Z\""),
            ("2026-9-1", "2026-9-1"),
            ("on", "\"on\""),
            ("010", "\"010\""),
            ("190:20:30", "\"190:20:30\""),
            ("1e+30", "\"1e+30\""),
            ("2026-09-12 10:11:12", "\"2026-09-12 10:11:12\""),
            ("a: b", "\"a: b\""),
            ("x #y", "\"x #y\""),
            ("ends with:", "\"ends with:\""),
            ("approved", "approved"),
            ("plain words here", "plain words here"),
            ("café", "café"),
            ("日本語のメモ", "日本語のメモ"),
            ("", "\"\""),
            (" padded", "\" padded\""),
            ("two\nlines", "\"two\\nlines\""),
            ("tab\there", "\"tab\\there\""),
            ("- item", "\"- item\""),
            ("-dash", "-dash"),
            ("[x]", "\"[x]\""),
            ("#tag", "\"#tag\""),
            ("*star", "\"*star\""),
            ("@me", "\"@me\""),
            ("`code`", "\"`code`\""),
            ("~", "\"~\""),
            ("Yes", "\"Yes\""),
            ("OFF", "\"OFF\""),
            ("y", "\"y\""),
            ("0x1F", "\"0x1F\""),
            ("0o17", "\"0o17\""),
            ("1_000", "\"1_000\""),
            ("-42", "\"-42\""),
            (".5", "\".5\""),
            ("1e3", "\"1e3\""),
            (".inf", "\".inf\""),
            ("-.Inf", "\"-.Inf\""),
            (".NaN", "\".NaN\""),
            ("1:20", "\"1:20\""),
            ("1.2.3", "1.2.3"),
            ("a:b", "a:b"),
            ("https://example.com/a#b", "https://example.com/a#b"),
            ("say \"hi\"", "say \"hi\""),
            ("'quoted'", "\"'quoted'\""),
            ("line\u{2028}sep", "\"line\\u2028sep\""),
            ("del\u{7f}", "\"del\\u007f\""),
        ];
        let text = "---\ntitle: t\n---\n";
        for (input, rendered) in cases {
            let out = set_ok(text, "status", json!(input));
            assert_eq!(out, format!("---\ntitle: t\nstatus: {rendered}\n---\n"), "{input:?}");
            assert_eq!(parse(&out)["status"], json!(input), "{input:?} did not read back");
            let listed = set_ok(text, "aliases", json!([input]));
            assert_eq!(parse(&listed)["aliases"], json!([input]), "{input:?} in a list");
            let tagged = set_ok(text, "tags", json!([input]));
            assert_eq!(parse(&tagged)["tags"], json!([input]), "{input:?} as a tag");
        }
    }

    #[test]
    fn null_and_nested_maps_are_refused() {
        let text = "---\ntitle: t\n---\n";
        let err = set(text, "status", &Value::Null).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidValue);
        assert!(err.message().contains("delete"), "{}", err.message());
        assert_eq!(code_of(set(text, "aliases", &json!(["a", null]))), ErrorCode::InvalidValue);
        assert_eq!(code_of(set(text, "tags", &json!([null]))), ErrorCode::InvalidValue);
        assert_eq!(
            code_of(set(text, "expires", &json!([{"date": null}]))),
            ErrorCode::InvalidValue
        );
        let err = set(text, "meta", &json!({"a": 1})).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidValue);
        assert!(err.message().contains("nested maps are not supported"), "{}", err.message());
        assert_eq!(
            code_of(set(text, "expires", &json!([{"date": "2026-01-01", "what": ["x"]}]))),
            ErrorCode::InvalidValue
        );
        assert_eq!(code_of(set(text, "aliases", &json!([["x"]]))), ErrorCode::InvalidValue);
    }

    #[test]
    fn awkward_keys_are_quoted_and_read_back() {
        let text = "---\ntitle: t\n---\n";
        let cases = [
            ("", "\"\""),
            (" title", "\" title\""),
            ("title ", "\"title \""),
            ("a:b", "\"a:b\""),
            ("a: b", "\"a: b\""),
            ("two\nlines", "\"two\\nlines\""),
            ("-x", "-x"),
            ("- x", "\"- x\""),
            ("#x", "\"#x\""),
            ("[x]", "\"[x]\""),
            ("'x'", "\"'x'\""),
            ("null", "\"null\""),
            ("~", "\"~\""),
            ("true", "\"true\""),
            ("<<", "\"<<\""),
            ("a #b", "\"a #b\""),
            ("my key", "my key"),
        ];
        for (key, written) in cases {
            let out = set_ok(text, key, json!("v"));
            assert_eq!(out, format!("---\ntitle: t\n{written}: v\n---\n"), "{key:?}");
            assert_eq!(parse(&out).get(key), Some(&json!("v")), "{key:?} did not read back");
            // The quoted line is found again: a second set replaces it, a delete removes it.
            let again = set_ok(&out, key, json!("w"));
            assert_eq!(again, format!("---\ntitle: t\n{written}: w\n---\n"), "{key:?}");
            assert_eq!(delete(&again, key).unwrap(), text, "{key:?}");
        }
        // A key the author quoted with single quotes is the same key.
        let out = set_ok("---\n'a: b': 1\n' x': 2\n---\n", "a: b", json!(3));
        assert_eq!(out, "---\n\"a: b\": 3\n' x': 2\n---\n");
        // An indented line is never a key of its own, whatever the key's spaces.
        let nested = "---\nmeta:\n  title: inner\n---\n";
        assert_eq!(
            set_ok(nested, "  title", json!("x")),
            "---\nmeta:\n  title: inner\n\"  title\": x\n---\n"
        );
        let err = set("# Body only\n", "status", &json!("x")).unwrap_err();
        assert_eq!(err.code(), ErrorCode::NoFrontmatter);
        assert!(err.message().contains("no frontmatter block"), "{}", err.message());
        assert_eq!(code_of(delete("# Body only\n", "status")), ErrorCode::NoFrontmatter);
    }

    #[test]
    fn numbers_are_written_as_both_yaml_versions_read_them_back() {
        let text = "---\ntitle: t\n---\n";
        let cases = [
            (json!(9007199254740993u64), "9007199254740993"),
            (json!(u64::MAX), "18446744073709551615"),
            (json!(i64::MIN), "-9223372036854775808"),
            (json!(2f64.powi(64)), "18446744073709551616"),
            (json!(-(2f64.powi(70))), "-1180591620717411303424"),
            (json!(2f64.powi(130)), "1.361129467683754e+39"),
            (json!(1e30), "1.0e+30"),
            (json!(-1e300), "-1.0e+300"),
            (json!(1.5e-7), "1.5e-7"),
            (json!(1e18), "1.0e+18"),
            (json!(3.0), "3.0"),
            (json!(-0.0), "-0.0"),
            (json!(0.1), "0.1"),
            (json!(123456.789), "123456.789"),
            (json!(f64::MAX), "1.7976931348623157e+308"),
            (json!(5e-324), "5.0e-324"),
        ];
        for (value, written) in cases {
            let out = set_ok(text, "num", value.clone());
            assert_eq!(out, format!("---\ntitle: t\nnum: {written}\n---\n"), "{value}");
            assert_eq!(parse(&out)["num"], value, "{value} did not read back");
            assert!(yaml11_number(written), "{written} is not a number to YAML 1.1");
        }
    }

    #[test]
    fn numbers_and_booleans_keep_their_type() {
        let text = "---\ntitle: t\n---\n";
        let out = set_ok(text, "count", json!(2));
        assert_eq!(out, "---\ntitle: t\ncount: 2\n---\n");
        assert_eq!(parse(&out)["count"], json!(2));
        assert!(parse(&out)["count"].is_i64());
        let out = set_ok(&out, "ratio", json!(1.5));
        let out = set_ok(&out, "done", json!(true));
        assert_eq!(out, "---\ntitle: t\ncount: 2\nratio: 1.5\ndone: true\n---\n");
        assert_eq!(parse(&out)["ratio"], json!(1.5));
        assert_eq!(parse(&out)["done"], json!(true));
    }

    #[test]
    fn setting_timestamp_itself_is_bare() {
        let out = set_ok("---\ntitle: t\n---\n", "timestamp", json!(NOW));
        assert_eq!(out, format!("---\ntitle: t\ntimestamp: {NOW}\n---\n"));
    }

    #[test]
    fn comments_and_blank_lines_survive_set_and_delete() {
        let text = "---\n# header comment\ntitle: t   # trailing\n\n# about status\nstatus: old\n\n  \n# footer\nowner: me\n\n---\nBody\n";
        assert_eq!(
            set_ok(text, "status", json!("new")),
            "---\n# header comment\ntitle: t   # trailing\n\n# about status\nstatus: new\n\n  \n# footer\nowner: me\n\n---\nBody\n"
        );
        assert_eq!(
            delete(text, "status").unwrap(),
            "---\n# header comment\ntitle: t   # trailing\n\n# about status\n\n  \n# footer\nowner: me\n\n---\nBody\n"
        );
    }

    #[test]
    fn edits_work_on_a_block_that_does_not_parse() {
        let text = "---\ntype: note\ntitle: [unclosed\nstatus: old\n: nonsense\n---\nBody\n";
        assert_eq!(parse(text), Map::new());
        assert_eq!(
            set_ok(text, "status", json!("new")),
            "---\ntype: note\ntitle: [unclosed\nstatus: new\n: nonsense\n---\nBody\n"
        );
        assert_eq!(
            set_ok(text, "title", json!("Fixed")),
            "---\ntype: note\ntitle: Fixed\nstatus: old\n: nonsense\n---\nBody\n"
        );
        assert_eq!(
            delete(text, "type").unwrap(),
            "---\ntitle: [unclosed\nstatus: old\n: nonsense\n---\nBody\n"
        );
        assert_eq!(
            bump_timestamp(text, NOW).unwrap(),
            format!(
                "---\ntype: note\ntitle: [unclosed\nstatus: old\n: nonsense\ntimestamp: {NOW}\n---\nBody\n"
            )
        );
    }

    #[test]
    fn column_zero_sequence_is_replaced_whole() {
        let text = "---\naliases:\n- a\n\n- b\n# note\nowner: me\n---\n";
        assert_eq!(
            set_ok(text, "aliases", json!(["c"])),
            "---\naliases:\n  - c\n# note\nowner: me\n---\n"
        );
        assert_eq!(delete(text, "aliases").unwrap(), "---\n# note\nowner: me\n---\n");
    }

    #[test]
    fn folded_value_is_replaced_whole() {
        let text =
            "---\ntitle: t\ndescription: >\n  first line\n\n  second paragraph\n\ntags: [a]\n---\n";
        assert_eq!(
            set_ok(text, "description", json!("short")),
            "---\ntitle: t\ndescription: short\n\ntags: [a]\n---\n"
        );
    }

    #[test]
    fn duplicate_keys_collapse_into_one() {
        let text = "---\nstatus: a\ntitle: t\nstatus: b\n---\n";
        assert_eq!(set_ok(text, "status", json!("c")), "---\nstatus: c\ntitle: t\n---\n");
        assert_eq!(delete(text, "status").unwrap(), "---\ntitle: t\n---\n");
    }

    #[test]
    fn key_lines_match_the_whole_name() {
        let text = "---\ntags_extra: 1\ntags : [a]\ntagsx: 2\n---\n";
        assert_eq!(
            set_ok(text, "tags", json!(["b"])),
            "---\ntags_extra: 1\ntags: [b]\ntagsx: 2\n---\n"
        );
    }

    /// True for a YAML 1.1 decimal integer or float (its `int` and `float` resolvers), which is
    /// stricter than 1.2: a float needs a `.`, and an exponent needs its sign.
    fn yaml11_number(s: &str) -> bool {
        let unsigned = s.strip_prefix(['-', '+']).unwrap_or(s);
        let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
        if digits(unsigned) {
            return unsigned == "0" || !unsigned.starts_with('0');
        }
        let (mantissa, exponent) = match unsigned.split_once(['e', 'E']) {
            Some((m, e)) => (m, Some(e)),
            None => (unsigned, None),
        };
        let exponent_ok = exponent.is_none_or(|e| e.strip_prefix(['-', '+']).is_some_and(digits));
        let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, "-"));
        exponent_ok
            && (whole.is_empty() || digits(whole))
            && (fraction.is_empty() || digits(fraction))
    }

    // Random blocks: keys from a small pool, scalar or list values in several layouts, and
    // comment or blank lines between them. Each entry knows which key (if any) owns its lines,
    // so the expected output is computed without the module's own span logic.
    fn entry() -> impl Strategy<Value = (Option<&'static str>, String)> {
        let key = prop::sample::select(vec!["type", "title", "tags", "status", "expires", "a-b"]);
        let scalar =
            prop::sample::select(vec!["x", "1", "\"q: r\"", "[unclosed", "2026-01-01", ""]);
        (key, scalar, 0..6usize).prop_map(|(key, scalar, layout)| match layout {
            0 => (Some(key), format!("{key}: {scalar}\n")),
            1 => (Some(key), format!("{key}:\n  - {scalar}\n\n  - y\n")),
            2 => (Some(key), format!("{key}:\n- {scalar}\n- z\n")),
            3 => (Some(key), format!("{key}: >\n  folded {scalar}\n\n  more\n")),
            4 => (None, format!("# comment about {key}\n")),
            _ => (None, "\n".to_string()),
        })
    }

    proptest! {
        #[test]
        fn edits_keep_every_other_line(
            entries in prop::collection::vec(entry(), 0..8),
            key in prop::sample::select(vec!["type", "title", "tags", "status", "timestamp", "new"]),
            value in prop::sample::select(vec![json!("v"), json!(["p", "q"]), json!(3), json!([])]),
            remove in any::<bool>(),
        ) {
            let yaml: String = entries.iter().map(|(_, lines)| lines.as_str()).collect();
            let text = format!("---\n{yaml}---\nBody\n");
            let kept: Vec<&str> = entries
                .iter()
                .filter(|(owner, _)| *owner != Some(key))
                .flat_map(|(_, lines)| lines.split_inclusive('\n'))
                .collect();
            let out = if remove { delete(&text, key).unwrap() } else { set(&text, key, &value).unwrap() };
            let out_block = locate(&out).unwrap();
            prop_assert_eq!(&out[..out_block.yaml_start], "---\n");
            prop_assert_eq!(&out[out_block.yaml_end..], "---\nBody\n");
            let out_lines = yaml_lines(&out, &out_block);
            let rendered = if remove { String::new() } else { render(key, &value).unwrap() };
            let rendered: Vec<&str> = rendered.split_inclusive('\n').collect();
            // The output is the kept lines with the rendered key spliced in at one place.
            let fits = (0..=kept.len()).any(|at| {
                let mut expected = kept[..at].to_vec();
                expected.extend(&rendered);
                expected.extend(&kept[at..]);
                expected == out_lines
            });
            prop_assert!(fits, "kept {:?}\nout {:?}", kept, out);
            if remove && !entries.iter().any(|(owner, _)| *owner == Some(key)) {
                prop_assert_eq!(out, text);
            }
        }

        // Any number JSON can carry reads back as the same number, as a scalar, in a list or a
        // tag, and is written in a form YAML 1.1 reads as a number too.
        #[test]
        fn any_number_reads_back(
            value in prop_oneof![
                any::<i64>().prop_map(Value::from),
                any::<u64>().prop_map(Value::from),
                any::<f64>().prop_filter("JSON numbers are finite", |f| f.is_finite()).prop_map(Value::from),
                (-20i32..309).prop_map(|e| Value::from(10f64.powi(e))),
                (53i32..1000).prop_map(|e| Value::from(2f64.powi(e))),
            ]
        ) {
            let text = "---\ntitle: t\n---\n";
            let out = set(text, "num", &value).unwrap();
            prop_assert_eq!(&parse(&out)["num"], &value, "{}", out);
            let written = out.lines().find_map(|l| l.strip_prefix("num: ")).unwrap();
            prop_assert!(yaml11_number(written), "{} is not a number to YAML 1.1", written);
            let out = set(text, "aliases", &json!([value])).unwrap();
            prop_assert_eq!(&parse(&out)["aliases"], &json!([value]), "{}", out);
            let out = set(text, "tags", &json!([value])).unwrap();
            prop_assert_eq!(&parse(&out)["tags"], &json!([value]), "{}", out);
        }

        // Any key reads back as itself, and a second edit finds it again.
        #[test]
        fn any_key_reads_back(key in "(.{0,6})|[-a-z0-9 :#,.'\"\\[\\]{}!&*|>%@`?~_+=<\t\n\u{85}\u{a0}é]{0,10}") {
            let text = "---\ntitle: t\nmeta:\n  inner: 1\n---\n";
            let out = set(text, &key, &json!("v")).unwrap();
            prop_assert_eq!(parse(&out).get(key.as_str()).cloned(), Some(json!("v")), "{}", out);
            let again = set(&out, &key, &json!("w")).unwrap();
            prop_assert_eq!(parse(&again).get(key.as_str()).cloned(), Some(json!("w")), "{}", again);
            if key != "title" && key != "meta" {
                prop_assert_eq!(delete(&again, &key).unwrap(), text);
            }
        }

        // Any string, bare or quoted, as a scalar, a tag or an entry field, reads back as itself.
        // Mostly YAML's own punctuation, plus arbitrary characters.
        #[test]
        fn any_string_reads_back(s in "(.{0,8})|[-a-z0-9 :#,.'\"\\[\\]{}!&*|>%@`?~_+=<\t\n\u{85}\u{a0}\u{2028}\u{feff}é]{0,12}") {
            let text = "---\ntitle: t\n---\n";
            let out = set(text, "status", &json!(s)).unwrap();
            prop_assert_eq!(&parse(&out)["status"], &json!(s), "{}", out);
            let out = set(text, "tags", &json!([s])).unwrap();
            prop_assert_eq!(&parse(&out)["tags"], &json!([s]), "{}", out);
            let out = set(text, "expires", &json!([{"date": s, "what": s}])).unwrap();
            prop_assert_eq!(&parse(&out)["expires"], &json!([{"date": s, "what": s}]), "{}", out);
        }
    }
}
