//! The answer budget: how much one tool answer may carry, prose and structured content
//! together, and how an answer over it is cut into parts a client pages through with `offset`.
//!
//! The budget is the MCP surface's alone: REST and the CLI answer whole, as before. A tool
//! whose answer can grow with the vault takes its arguments as [`Paged`] (its own plus
//! `offset`). Its answer goes through [`Budget::part`], which counts `offset` in the answer's
//! items (`rows.rs`) so the prose and the structured content of a part hold the same ones;
//! `vault_read` goes through [`Budget::read`], which counts in the note's lines and keeps them
//! exact so the parts join back into the note. `vault_grep`, which pages in its own terms,
//! shows the leading lines that fit ([`Budget::leading`]).

use rmcp::model::ContentBlock;
use schemars::JsonSchema;
use std::borrow::Cow;
use std::marker::PhantomData;

use serde::de::value::MapAccessDeserializer;
use serde::de::{DeserializeSeed, IntoDeserializer, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::rows::Rows;
use crate::error::{Error, ErrorCode, Result};
use crate::vault::NoteRead;
use crate::vault::headings::{self, Scope};

/// The most characters one tool answer carries. Claude Code refuses a tool result over about
/// 25,000 tokens; Markdown prose runs near four characters a token, tables, code and
/// non-Latin text nearer two and a half, so 60,000 characters is about 15,000 tokens of prose
/// and stays under the cap for dense text too, with room left for the conversation.
pub(crate) const ANSWER_BUDGET: Budget = Budget(60_000);

/// What the framing of a part (its opening and closing sentences) may take, kept out of the
/// room for the answer's own lines.
const FRAME: usize = 600;

/// A cap on one answer's characters (Unicode scalar values, which track tokens better than
/// bytes do).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Budget(usize);

impl Budget {
    /// The cap as the descriptions and closing sentences state it ("60,000").
    pub(crate) fn shown(self) -> String {
        thousands(self.0)
    }

    /// An answer within the budget, as its prose and its structured content: whole when both
    /// fit and `offset` is 0; else the items from `offset` that fit (see `rows.rs`), the prose
    /// opened by which items of how many they are and closed by the `offset` that goes on, the
    /// structured content of the same items with a `page` saying so. An `offset` past the
    /// end is refused.
    pub(crate) fn part<T: Rows>(
        self,
        tool: &str,
        whole: T,
        offset: usize,
        data: impl Fn(&T) -> Value,
        render: impl Fn(T) -> String,
    ) -> Result<(String, Value)> {
        let shaped = |items: &T| (render(items.clone()), data(items));
        if offset == 0 {
            let (text, value) = shaped(&whole);
            if size(&text, &value) <= self.0 {
                return Ok((text, value));
            }
        }
        let total = whole.rows();
        if offset > 0 && offset >= total {
            return Err(Error::new(
                ErrorCode::InvalidRequest,
                format!(
                    "`offset` {offset} is past the end of this {tool} answer, which has {total} \
                     items; call {tool} without `offset` to start again"
                ),
            ));
        }
        let room = self.0 - FRAME;
        let cut_to = |n: usize| {
            let mut items = whole.clone();
            items.keep(&(offset..offset + n));
            shaped(&items)
        };
        // At least one item a part, so paging always moves on: one too long is shortened.
        let n = most_that_fit(total - offset, room, &cut_to).max(usize::from(total > offset));
        let (mut text, mut value) = cut_to(n);
        let shortened = size(&text, &value) > room;
        if shortened {
            text = text.chars().take(room / 2).collect();
            shorten(&mut value, room / 2);
        }
        let end = offset + n;
        let mut out = format!(
            "(Items {}-{end} of {total} of this answer, which is over the answer budget of {} \
             characters; what follows is of these items only.)\n\n",
            offset + 1,
            self.shown()
        );
        out.push_str(&text);
        if shortened {
            out.push_str("\n(This part is too long for the budget and was shortened.)");
        }
        out.push_str(&match end < total {
            true => format!(
                "\n\n({} more items: call {tool} again with the same arguments and \
                 `offset: {end}`.)\n",
                total - end
            ),
            false => "\n\n(That is the end of this answer.)\n".to_string(),
        });
        let mut page = serde_json::Map::new();
        page.insert("offset".into(), offset.into());
        page.insert("items".into(), n.into());
        page.insert("total".into(), total.into());
        if end < total {
            page.insert("next_offset".into(), end.into());
        }
        if let Value::Object(o) = &mut value {
            o.insert("page".into(), Value::Object(page));
        }
        Ok((out, value))
    }

    /// A page the tool already bounds in its own terms (`vault_grep`'s `limit` and `offset`)
    /// cut to the leading items that fit, so its own closing line ("call again with offset
    /// N") goes on from the first item left out.
    pub(crate) fn leading<T: Rows>(
        self,
        whole: T,
        data: impl Fn(&T) -> Value,
        render: impl Fn(T) -> String,
    ) -> T {
        let cut_to = |n: usize| {
            let mut items = whole.clone();
            items.keep(&(0..n));
            (render(items.clone()), data(&items))
        };
        let n = most_that_fit(whole.rows(), self.0, &cut_to).max(1);
        let mut items = whole.clone();
        items.keep(&(0..n));
        items
    }

    /// A write's answer within the budget. A write cannot be asked again for the rest, so
    /// when its answer is over, the list it ends with (one prose line after `head` lines per
    /// item of the structured `list`) is cut to the leading items that fit; the totals stay as
    /// they are, `listed` says how many items came, and a closing line says how many were
    /// left out and where to see them (`rest`).
    pub(crate) fn write(
        self,
        text: String,
        value: Value,
        list: &str,
        head: usize,
        rest: &str,
    ) -> (String, Value) {
        if size(&text, &value) <= self.0 {
            return (text, value);
        }
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let total = value[list].as_array().map_or(0, Vec::len);
        let items = &lines[head.min(lines.len())..];
        let cut_to = |n: usize| {
            let mut prose: String = lines[..head.min(lines.len())].concat();
            prose.extend(items.iter().take(n).copied());
            prose.push_str(&format!(
                "\n({} more not listed, to keep this answer under the answer budget of {} \
                 characters: {rest}.)\n",
                total - n.min(total),
                self.shown()
            ));
            let mut cut = value.clone();
            if let Some(all) = cut[list].as_array_mut() {
                all.truncate(n);
            }
            cut["listed"] = n.into();
            (prose, cut)
        };
        cut_to(most_that_fit(total.min(items.len()), self.0, &cut_to))
    }

    /// A note read within the budget: `None` when it fits whole and `offset` is 0 (the caller
    /// renders it as always). Otherwise three blocks: what follows (on the first part, the
    /// outline with each heading's path and lines), the note's lines from `offset` exactly as
    /// written, and how to read on.
    pub(crate) fn read(
        self,
        r: &NoteRead,
        sentence: Option<String>,
        offset: usize,
    ) -> Option<Vec<ContentBlock>> {
        let text = r.content.as_str();
        if offset == 0 && text.chars().count() + FRAME <= self.0 {
            return None;
        }
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let n = lines.len();
        let what = match &r.section {
            Some(s) => format!("The section {s} of {}", r.path),
            None => r.path.clone(),
        };
        let again = match &r.section {
            Some(s) => format!("vault_read with `path: {:?}`, `section: {s:?}`", r.path),
            None => format!("vault_read with `path: {:?}`", r.path),
        };
        if offset >= n {
            let past = format!(
                "{what} has {n} lines; offset {offset} is past its end. Call {again} and no \
                 offset to start again."
            );
            return Some(vec![ContentBlock::text(past)]);
        }
        let mut head = sentence.map(|s| format!("({s})\n\n")).unwrap_or_default();
        head.push_str(&format!(
            "{what} is {} characters in {n} lines, over the answer budget of {} characters, so \
             it comes in parts.",
            thousands(text.chars().count()),
            self.shown()
        ));
        if offset == 0 {
            head.push_str(&outline(text, n, self.0 / 4));
        }
        let room = self.0.saturating_sub(head.chars().count() + FRAME);
        let part = fit(&lines, offset, room);
        head.push_str(&format!(
            "\n\nLines {}-{} follow, exactly as written{}.",
            offset + 1,
            part.end,
            if part.cut { " (the last one cut: it is longer than the budget)" } else { "" }
        ));
        let next = match part.end < n {
            true => format!(
                "Lines {}-{} of {n} shown. To read on, call {again} and `offset: {}`; or read \
                 one section with `section` set to a heading path from the outline.",
                offset + 1,
                part.end,
                part.end
            ),
            false => format!("That is the end: lines {}-{n} of {n}.", offset + 1),
        };
        Some(vec![
            ContentBlock::text(head),
            ContentBlock::text(part.text),
            ContentBlock::text(next),
        ])
    }
}

/// The lines of a part and where it stopped.
struct Part {
    text: String,
    /// The index of the first line not shown.
    end: usize,
    /// Whether its one line was cut (a line longer than the room).
    cut: bool,
}

/// The lines from `from` that fit in `room` characters; at least one, cut to the room when it
/// alone is longer.
fn fit(lines: &[&str], from: usize, room: usize) -> Part {
    let (mut text, mut used, mut end) = (String::new(), 0, from);
    for line in &lines[from..] {
        let len = line.chars().count();
        if used + len > room {
            break;
        }
        text.push_str(line);
        used += len;
        end += 1;
    }
    if end > from {
        return Part { text, end, cut: false };
    }
    // Why cut rather than overrun: an answer over the client's cap is refused whole.
    let cut: String = lines[from].chars().take(room).collect();
    Part { text: cut, end: from + 1, cut: true }
}

/// The note's headings as an outline, each with its `A::B::C` path (what `section` takes)
/// and its lines, within `room` characters; when they do not all fit, says how many more
/// there are and where to see them.
fn outline(text: &str, n: usize, room: usize) -> String {
    let all = headings::headings(text);
    if all.is_empty() {
        return " It has no headings.".to_string();
    }
    let mut out = String::from("\n\nOutline (heading path: lines):");
    for (i, h) in all.iter().enumerate() {
        let lines = headings::section_lines(n, &all, h, Scope::MarkerAndContent);
        let row = format!("\n- {}: {}-{}", headings::display_path(h), lines.start + 1, lines.end);
        if out.chars().count() + row.chars().count() > room {
            out.push_str(&format!(
                "\n- ... and {} more headings: vault_map lists them all.",
                all.len() - i
            ));
            break;
        }
        out.push_str(&row);
    }
    out
}

/// The most of `available` items whose answer (`cut_to`) fits in `room`: the size grows
/// with the items, so halving the gap finds it in a few renderings.
fn most_that_fit(
    available: usize,
    room: usize,
    cut_to: &impl Fn(usize) -> (String, Value),
) -> usize {
    let (mut fits, mut over) = (0, available + 1);
    while over - fits > 1 {
        let mid = fits + (over - fits) / 2;
        let (text, value) = cut_to(mid);
        if size(&text, &value) <= room {
            fits = mid;
        } else {
            over = mid;
        }
    }
    fits
}

/// What an answer takes of a client's budget: its prose and its structured content, which a
/// client may show the model too.
fn size(text: &str, value: &Value) -> usize {
    text.chars().count() + value.to_string().chars().count()
}

/// Cuts every string in `value` to a length that brings the whole within `room` characters
/// (or to a few characters, if nothing less will do), marking each cut with an ellipsis.
fn shorten(value: &mut Value, room: usize) {
    let mut longest = 1024;
    while value.to_string().chars().count() > room && longest > 8 {
        cut_strings(value, longest);
        longest /= 2;
    }
}

fn cut_strings(value: &mut Value, longest: usize) {
    match value {
        Value::String(s) if s.chars().count() > longest => {
            *s = s.chars().take(longest).chain(std::iter::once('…')).collect();
        }
        Value::Array(items) => items.iter_mut().for_each(|v| cut_strings(v, longest)),
        Value::Object(map) => map.values_mut().for_each(|v| cut_strings(v, longest)),
        _ => {}
    }
}

/// A count with thousands separators, as prose states it.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A tool's arguments and the `offset` a paged answer goes on from. Its schema is the
/// tool's own with `offset` added; the service never sees `offset`, so REST and the CLI are
/// untouched by the budget.
pub(crate) struct Paged<T> {
    pub(crate) args: T,
    pub(crate) offset: usize,
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Paged<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        d.deserialize_map(PagedVisitor(PhantomData))
    }
}

struct PagedVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for PagedVisitor<T> {
    type Value = Paged<T>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("the tool's arguments as an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> std::result::Result<Paged<T>, A::Error> {
        let mut offset = None;
        let args =
            T::deserialize(MapAccessDeserializer::new(TakeOffset { map, offset: &mut offset }))?;
        Ok(Paged { args, offset: offset.unwrap_or(0) })
    }
}

/// The caller's arguments with `offset` taken out on the way past. Why a filter rather than a
/// map to rebuild: the keys and values still come from the caller's own map, so a misfit
/// further in keeps its path (`path`, `destination.place`) and its refusal names it.
struct TakeOffset<'a, A> {
    map: A,
    offset: &'a mut Option<usize>,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for TakeOffset<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> std::result::Result<Option<K::Value>, A::Error> {
        loop {
            let Some(key) = self.map.next_key::<String>()? else { return Ok(None) };
            if key == "offset" {
                *self.offset = self.map.next_value::<Option<usize>>()?;
                continue;
            }
            return seed.deserialize(key.into_deserializer()).map(Some);
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> std::result::Result<V::Value, A::Error> {
        self.map.next_value_seed(seed)
    }
}

impl<T: JsonSchema> JsonSchema for Paged<T> {
    fn schema_name() -> Cow<'static, str> {
        format!("Paged{}", T::schema_name()).into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let mut schema = T::json_schema(generator);
        let offset = schemars::json_schema!({
            "type": "integer",
            "minimum": 0,
            "default": 0,
            "description": format!(
                "Where to go on from when an answer came in parts (answers are kept under {} \
                 characters): the offset its closing line names.",
                ANSWER_BUDGET.shown()
            ),
        });
        if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
            props.insert("offset".to_string(), offset.to_value());
        }
        schema
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn data(paths: &Vec<String>) -> Value {
        json!({"paths": paths})
    }

    fn render(paths: Vec<String>) -> String {
        paths.iter().map(|p| format!("- {p}\n")).collect()
    }

    fn paths(n: usize, len: usize) -> Vec<String> {
        (0..n).map(|i| format!("{i:05}{}", "x".repeat(len))).collect()
    }

    /// Every part from the start, each checked under the budget; and the items they held.
    fn parts(budget: Budget, whole: Vec<String>) -> (usize, Vec<String>) {
        let (mut count, mut offset, mut seen) = (0, 0, Vec::new());
        loop {
            let (text, value) =
                budget.part("vault_x", whole.clone(), offset, data, render).unwrap();
            assert!(size(&text, &value) <= budget.0, "part {count}: {text}");
            let held = value["paths"].as_array().unwrap();
            seen.extend(held.iter().map(|p| p.as_str().unwrap().to_string()));
            count += 1;
            let page = &value["page"];
            assert_eq!(page["offset"], offset);
            assert_eq!(page["items"], held.len());
            match page["next_offset"].as_u64() {
                Some(next) => {
                    let said =
                        format!("call vault_x again with the same arguments and `offset: {next}`");
                    assert!(text.contains(&said), "{text}");
                    offset = next as usize;
                }
                None => {
                    assert!(text.contains("That is the end of this answer"), "{text}");
                    return (count, seen);
                }
            }
        }
    }

    #[test]
    fn an_answer_within_the_budget_is_left_whole() {
        let whole = paths(3, 2);
        let (text, value) = Budget(1_000).part("vault_x", whole.clone(), 0, data, render).unwrap();
        assert_eq!((text, value), (render(whole.clone()), data(&whole)));
    }

    #[test]
    fn a_long_answer_comes_in_parts_whose_prose_and_data_hold_the_same_items_once() {
        let whole = paths(500, 20);
        let (count, seen) = parts(Budget(3_000), whole.clone());
        assert!(count > 5, "{count} parts");
        assert_eq!(seen, whole);
    }

    #[test]
    fn an_offset_past_the_end_is_refused_saying_how_many_items_there_are() {
        let e = Budget(1_000).part("vault_x", paths(2, 1), 9, data, render).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidRequest);
        assert!(e.message().contains("past the end of this vault_x answer, which has 2 items"));
    }

    #[test]
    fn an_item_longer_than_the_budget_is_shortened_and_paging_still_moves_on() {
        let whole = vec!["y".repeat(5_000), "short".to_string()];
        let (count, seen) = parts(Budget(2_000), whole);
        assert_eq!(count, 2);
        assert!(seen[0].ends_with('…') && seen[0].len() < 2_000, "{}", seen[0].len());
        assert_eq!(seen[1], "short");
    }

    #[test]
    fn a_page_bounded_in_its_own_terms_keeps_the_leading_items_that_fit() {
        let whole = paths(100, 40);
        let kept = Budget(2_000).leading(whole.clone(), data, render);
        assert!(!kept.is_empty() && kept.len() < 100, "{}", kept.len());
        assert_eq!(kept[..], whole[..kept.len()]);
        assert!(size(&render(kept.clone()), &data(&kept)) <= 2_000);
        assert_eq!(Budget(100_000).leading(whole.clone(), data, render), whole);
    }

    #[test]
    fn a_long_write_answer_keeps_its_totals_and_lists_the_leading_items_that_fit() {
        let notes = paths(300, 20);
        let mut text = "Renamed #a to #b: 300 tag(s) in 300 note(s)\n\n".to_string();
        text.push_str(&render(notes.clone()));
        let value = json!({"replaced": 300, "notes": notes});
        let (prose, cut) = Budget(3_000).write(text, value, "notes", 2, "vault_grep lists them");
        assert!(size(&prose, &cut) <= 3_000);
        let listed = cut["listed"].as_u64().unwrap() as usize;
        assert_eq!(cut["notes"].as_array().unwrap().len(), listed);
        assert!(listed > 0 && listed < 300);
        assert_eq!(cut["replaced"], 300);
        assert!(prose.starts_with("Renamed #a to #b: 300 tag(s) in 300 note(s)\n\n- 00000x"));
        assert!(prose.contains(&format!("({} more not listed", 300 - listed)), "{prose}");
    }

    #[test]
    fn counts_are_written_with_thousands_separators() {
        assert_eq!(thousands(60_000), "60,000");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(2_000_000), "2,000,000");
    }

    #[test]
    fn paged_arguments_take_offset_beside_the_tools_own() {
        let p: Paged<crate::service::ListArgs> =
            serde_json::from_value(json!({"path": "A", "offset": 40})).unwrap();
        assert_eq!((p.args.path.as_str(), p.offset), ("A", 40));
        let p: Paged<crate::service::ListArgs> = serde_json::from_value(json!({})).unwrap();
        assert_eq!(p.offset, 0);
        assert!(
            serde_json::from_value::<Paged<crate::service::ListArgs>>(json!({"offset": -1}))
                .is_err()
        );
        assert!(
            serde_json::from_value::<Paged<crate::service::ListArgs>>(json!({"pathh": "A"}))
                .is_err()
        );
    }
}
