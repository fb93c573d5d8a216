//! Periodic notes: which note is the day's (or the week's, month's, quarter's, year's) by the
//! vault's own Obsidian settings, and what a new one starts from.
//!
//! The settings are the vault owner's, read from the hidden `.obsidian` folder (a caller never
//! names those files, so they are read here and not through the gate):
//! - the Periodic Notes plugin's `.obsidian/plugins/periodic-notes/data.json`, in either of its
//!   shapes (the released one, `daily`/`weekly`/... with `enabled`, `folder`, `format`,
//!   `template`; the 1.x beta's `calendarSets` with `day`/`week`/... and `templatePath`). A
//!   period it enables is served with its settings;
//! - else, for `daily` only, Obsidian's own daily notes (`.obsidian/daily-notes.json`: `folder`,
//!   `format`, `template`; Obsidian's defaults when the file is absent), unless
//!   `.obsidian/core-plugins.json` says the daily notes plugin is off.
//!
//! A period nothing enables is `period_disabled`; a name that is no period is `not_found`.
//! The note's path is the folder plus the Moment.js `format` applied to the date ([`format`],
//! the tokens Moment documents, English names, weeks of the `en` locale for `w`/`g`), and it
//! passes the gate like any path a caller sends. Templates take Obsidian's placeholders
//! ([`expand_template`]). This module writes nothing; creating the note is the front door's
//! ordinary write.

use std::path::Path;

use chrono::{Datelike, Duration, NaiveDate, NaiveDateTime, Timelike};
use serde_json::Value;

use super::Vault;
use super::path::Access;
use crate::error::{Error, ErrorCode, Result};

/// The periods, as the Local REST API names them in `/periodic/<period>/`.
pub(crate) const PERIODS: [&str; 5] = ["daily", "weekly", "monthly", "quarterly", "yearly"];

/// Where the Periodic Notes plugin keeps its settings, vault-relative.
const PERIODIC_NOTES_SETTINGS: &str = ".obsidian/plugins/periodic-notes/data.json";
/// Obsidian's own daily notes settings.
const DAILY_NOTES_SETTINGS: &str = ".obsidian/daily-notes.json";
/// Which core plugins are on (an array of ids, or in newer Obsidian an object of flags).
const CORE_PLUGINS: &str = ".obsidian/core-plugins.json";
/// A settings file larger than this is not one Obsidian wrote; refusing it bounds the read.
const MAX_SETTINGS_BYTES: u64 = 1 << 20;

/// Obsidian's (and the Periodic Notes plugin's) default file name format per period.
fn default_format(period: &str) -> &'static str {
    match period {
        "weekly" => "gggg-[W]ww",
        "monthly" => "YYYY-MM",
        "quarterly" => "YYYY-[Q]Q",
        "yearly" => "YYYY",
        _ => "YYYY-MM-DD",
    }
}

/// The 1.x beta's name for a period inside a calendar set.
fn beta_key(period: &str) -> &'static str {
    match period {
        "weekly" => "week",
        "monthly" => "month",
        "quarterly" => "quarter",
        "yearly" => "year",
        _ => "day",
    }
}

/// One period's settings, as found in the vault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PeriodSettings {
    /// `daily`, `weekly`, ...
    pub(crate) period: &'static str,
    /// The folder its notes go in, vault-relative, without slashes at the ends (`""`: the root).
    pub(crate) folder: String,
    /// The Moment.js format of the file name (without `.md`); may contain `/`.
    pub(crate) format: String,
    /// The template note as the setting names it (often without `.md`), if any.
    pub(crate) template: Option<String>,
    /// The settings file these came from (vault-relative), or `None` for Obsidian's defaults.
    pub(crate) source: Option<&'static str>,
}

/// The periodic note for one date: where it is and whether it is there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PeriodicNote {
    /// The settings that placed it.
    pub(crate) settings: PeriodSettings,
    /// Its vault-relative path, past the gate.
    pub(crate) path: String,
    /// Whether a file is there now.
    pub(crate) exists: bool,
}

impl Vault {
    /// The note of `period` that contains `date`, by this vault's settings. The path is gated
    /// as a note to write, so a format that would leave the vault or enter a hidden folder is
    /// refused here, before anything reads or writes it.
    pub(crate) fn periodic(&self, period: &str, date: NaiveDate) -> Result<PeriodicNote> {
        let settings = settings(self.root(), period)?;
        let raw = note_path(&settings, date);
        let target = self.gate(&raw, Access::WriteNote)?;
        let exists = std::fs::symlink_metadata(&target.abs).is_ok_and(|m| m.is_file());
        Ok(PeriodicNote { settings, path: target.rel, exists })
    }
}

/// A settings file's JSON, `None` when it is absent. A symlinked settings file or folder is
/// refused rather than followed (it could point anywhere), as is one that is not JSON.
fn read_json(root: &Path, rel: &'static str) -> Result<Option<Value>> {
    let mut at = root.to_path_buf();
    for part in rel.split('/') {
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Err(_) => return Ok(None),
            Ok(m) if m.file_type().is_symlink() => {
                return Err(Error::new(
                    ErrorCode::Unreadable,
                    format!(
                        "{rel} goes through a symbolic link, which mdvault does not follow; \
                         make it a plain file"
                    ),
                ));
            }
            Ok(_) => {}
        }
    }
    let unreadable = |why: String| {
        Error::new(
            ErrorCode::Unreadable,
            format!("the settings file {rel} {why}; fix it in Obsidian, or delete it"),
        )
    };
    if std::fs::metadata(&at).map_err(|e| unreadable(format!("cannot be read ({e})")))?.len()
        > MAX_SETTINGS_BYTES
    {
        return Err(unreadable("is larger than any settings file Obsidian writes".into()));
    }
    let bytes = std::fs::read(&at).map_err(|e| unreadable(format!("cannot be read ({e})")))?;
    serde_json::from_slice(&bytes).map(Some).map_err(|e| unreadable(format!("is not JSON ({e})")))
}

/// A trimmed, non-empty string setting.
fn text_of(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty()).map(String::from)
}

/// The Periodic Notes plugin's entry for `period`, when the plugin's settings enable it.
fn plugin_entry(data: &Value, period: &str) -> Option<Value> {
    let entry = match data.get("calendarSets").and_then(Value::as_array) {
        // The 1.x beta: the active calendar set (else the first) holds the periods.
        Some(sets) => {
            let active = data.get("activeCalendarSet").and_then(Value::as_str);
            let set = sets
                .iter()
                .find(|s| active.is_some() && s.get("id").and_then(Value::as_str) == active)
                .or_else(|| sets.first())?;
            set.get(beta_key(period))?
        }
        None => data.get(period)?,
    };
    (entry.get("enabled").and_then(Value::as_bool) == Some(true)).then(|| entry.clone())
}

/// Whether Obsidian's daily notes plugin is on; it is unless `core-plugins.json` says not.
fn daily_notes_on(core: Option<&Value>) -> bool {
    match core {
        Some(Value::Array(ids)) => ids.iter().any(|id| id.as_str() == Some("daily-notes")),
        Some(Value::Object(flags)) => {
            flags.get("daily-notes").and_then(Value::as_bool) != Some(false)
        }
        _ => true,
    }
}

/// The settings of `period` in the vault at `root`.
pub(crate) fn settings(root: &Path, period: &str) -> Result<PeriodSettings> {
    let Some(&period) = PERIODS.iter().find(|p| **p == period) else {
        return Err(Error::new(
            ErrorCode::NotFound,
            format!("there is no period '{period}'; use one of {}", PERIODS.join(", ")),
        ));
    };
    let plugin = read_json(root, PERIODIC_NOTES_SETTINGS)?;
    let build = |v: Option<&Value>, template_keys: &[&str], source| PeriodSettings {
        period,
        folder: v
            .and_then(|v| text_of(v, "folder"))
            .map(|f| f.trim_matches('/').to_string())
            .unwrap_or_default(),
        format: v
            .and_then(|v| text_of(v, "format"))
            .unwrap_or_else(|| default_format(period).to_string()),
        template: v.and_then(|v| template_keys.iter().find_map(|k| text_of(v, k))),
        source,
    };
    if let Some(entry) = plugin.as_ref().and_then(|p| plugin_entry(p, period)) {
        return Ok(build(
            Some(&entry),
            &["template", "templatePath"],
            Some(PERIODIC_NOTES_SETTINGS),
        ));
    }
    if period == "daily" && daily_notes_on(read_json(root, CORE_PLUGINS)?.as_ref()) {
        let daily = read_json(root, DAILY_NOTES_SETTINGS)?;
        let source = daily.is_some().then_some(DAILY_NOTES_SETTINGS);
        return Ok(build(daily.as_ref(), &["template"], source));
    }
    let why = match (period, plugin.is_some()) {
        ("daily", _) => format!(
            "Obsidian's daily notes plugin is off in {CORE_PLUGINS} and the Periodic Notes \
             plugin does not enable daily notes"
        ),
        (_, true) => format!("{PERIODIC_NOTES_SETTINGS} does not enable {period} notes"),
        (_, false) => format!(
            "{period} notes come from the Periodic Notes plugin, and this vault has no \
             {PERIODIC_NOTES_SETTINGS}"
        ),
    };
    Err(Error::new(
        ErrorCode::PeriodDisabled,
        format!("{period} notes are not enabled in this vault: {why}; turn them on in Obsidian"),
    ))
}

/// The vault-relative path (with `.md`) of the note of `s` that contains `date`.
pub(crate) fn note_path(s: &PeriodSettings, date: NaiveDate) -> String {
    let name = format(&s.format, date.and_time(chrono::NaiveTime::MIN));
    if s.folder.is_empty() { format!("{name}.md") } else { format!("{}/{name}.md", s.folder) }
}

/// A template's text with Obsidian's placeholders filled in: `{{date}}` (the note's date in
/// its own format), `{{time}}` (`HH:mm` now), `{{title}}` (the note's file name), and
/// `{{date:FORMAT}}` / `{{time:FORMAT}}` with a Moment.js format. Names are case-insensitive
/// and may be padded with spaces; any other `{{...}}` (another plugin's syntax) is left as is.
pub(crate) fn expand_template(
    text: &str,
    s: &PeriodSettings,
    date: NaiveDate,
    now: NaiveDateTime,
) -> String {
    let day = date.and_time(now.time());
    let file_name = format(&s.format, day);
    let title = file_name.rsplit('/').next().unwrap_or(&file_name).to_string();
    let fill = Placeholders { title, date_format: &s.format, time_format: "HH:mm" };
    fill.apply(text, day, now)
}

/// What Obsidian's template placeholders stand for: the title and the default formats of a
/// bare `{{date}}` and `{{time}}`. Periodic notes and the core Templates plugin share them.
pub(crate) struct Placeholders<'a> {
    /// What `{{title}}` becomes.
    pub(crate) title: String,
    /// The Moment.js format of a bare `{{date}}`.
    pub(crate) date_format: &'a str,
    /// The Moment.js format of a bare `{{time}}`.
    pub(crate) time_format: &'a str,
}

impl Placeholders<'_> {
    /// `text` with `{{date}}`, `{{time}}`, `{{title}}`, `{{date:FORMAT}}` and `{{time:FORMAT}}`
    /// filled in (`day` for dates, `now` for times); names are case-insensitive and may be
    /// padded with spaces; any other `{{...}}` is left as is.
    pub(crate) fn apply(&self, text: &str, day: NaiveDateTime, now: NaiveDateTime) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(open) = rest.find("{{") {
            out.push_str(&rest[..open]);
            let after = &rest[open + 2..];
            let Some(close) = after.find("}}") else {
                rest = &rest[open..];
                break;
            };
            let inner = after[..close].trim();
            let (name, fmt) = match inner.split_once(':') {
                Some((n, f)) => (n.trim().to_ascii_lowercase(), Some(f.trim())),
                None => (inner.to_ascii_lowercase(), None),
            };
            let value = match (name.as_str(), fmt) {
                ("date", None) => Some(format(self.date_format, day)),
                ("time", None) => Some(format(self.time_format, now)),
                ("title", None) => Some(self.title.clone()),
                ("date", Some(f)) => Some(format(f, day)),
                ("time", Some(f)) => Some(format(f, now)),
                _ => None,
            };
            match value {
                Some(v) => out.push_str(&v),
                None => out.push_str(&rest[open..open + 2 + close + 2]),
            }
            rest = &after[close + 2..];
        }
        out.push_str(rest);
        out
    }
}

/// Moment.js's format tokens this module knows, longest first so that `MMMM` wins over `MM`.
/// Any other character stands for itself, as in Moment.
const TOKENS: &[&str] = &[
    "YYYY", "GGGG", "gggg", "MMMM", "DDDD", "dddd", "DDDo", "MMM", "DDD", "ddd", "YY", "GG", "gg",
    "Qo", "MM", "Mo", "DD", "Do", "dd", "do", "ww", "wo", "WW", "Wo", "HH", "hh", "kk", "mm", "ss",
    "Y", "Q", "M", "D", "d", "e", "E", "w", "W", "H", "h", "k", "m", "s", "A", "a", "X", "x",
];

/// `at` formatted with a Moment.js format string: the tokens in [`TOKENS`], `[literal]`
/// text and `\`-escaped characters. Names are English; `w`, `ww` and `gggg` count weeks the
/// way Moment's default `en` locale does (weeks start on Sunday, week 1 holds January 1st),
/// `W` and `GGGG` are ISO weeks.
pub(crate) fn format(fmt: &str, at: NaiveDateTime) -> String {
    let date = at.date();
    let mut out = String::new();
    let mut rest = fmt;
    'scan: while let Some(c) = rest.chars().next() {
        if c == '['
            && let Some(end) = rest.find(']')
        {
            out.push_str(&rest[1..end]);
            rest = &rest[end + 1..];
            continue;
        }
        if c == '\\'
            && let Some(next) = rest[1..].chars().next()
        {
            out.push(next);
            rest = &rest[1 + next.len_utf8()..];
            continue;
        }
        for &t in TOKENS {
            if let Some(after) = rest.strip_prefix(t) {
                out.push_str(&token(t, date, at));
                rest = after;
                continue 'scan;
            }
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// One token's text.
fn token(t: &str, date: NaiveDate, at: NaiveDateTime) -> String {
    let iso = date.iso_week();
    let (local_year, local_week) = en_week(date);
    let hour12 = match at.hour() % 12 {
        0 => 12,
        h => h,
    };
    let quarter = (date.month() - 1) / 3 + 1;
    match t {
        "YYYY" => format!("{:04}", date.year()),
        "YY" => format!("{:02}", date.year().rem_euclid(100)),
        "Y" => date.year().to_string(),
        "GGGG" => format!("{:04}", iso.year()),
        "GG" => format!("{:02}", iso.year().rem_euclid(100)),
        "gggg" => format!("{local_year:04}"),
        "gg" => format!("{:02}", local_year.rem_euclid(100)),
        "Q" => quarter.to_string(),
        "Qo" => ordinal(quarter),
        "MMMM" => date.format("%B").to_string(),
        "MMM" => date.format("%b").to_string(),
        "MM" => format!("{:02}", date.month()),
        "Mo" => ordinal(date.month()),
        "M" => date.month().to_string(),
        "DDDD" => format!("{:03}", date.ordinal()),
        "DDDo" => ordinal(date.ordinal()),
        "DDD" => date.ordinal().to_string(),
        "DD" => format!("{:02}", date.day()),
        "Do" => ordinal(date.day()),
        "D" => date.day().to_string(),
        "dddd" => date.format("%A").to_string(),
        "ddd" => date.format("%a").to_string(),
        "dd" => date.format("%a").to_string()[..2].to_string(),
        "do" => ordinal(date.weekday().num_days_from_sunday()),
        "d" | "e" => date.weekday().num_days_from_sunday().to_string(),
        "E" => date.weekday().number_from_monday().to_string(),
        "ww" => format!("{local_week:02}"),
        "wo" => ordinal(local_week),
        "w" => local_week.to_string(),
        "WW" => format!("{:02}", iso.week()),
        "Wo" => ordinal(iso.week()),
        "W" => iso.week().to_string(),
        "HH" => format!("{:02}", at.hour()),
        "H" => at.hour().to_string(),
        "hh" => format!("{hour12:02}"),
        "h" => hour12.to_string(),
        // Moment's `k` counts hours 1 to 24: midnight is 24.
        "kk" => format!("{:02}", if at.hour() == 0 { 24 } else { at.hour() }),
        "k" => (if at.hour() == 0 { 24 } else { at.hour() }).to_string(),
        "mm" => format!("{:02}", at.minute()),
        "m" => at.minute().to_string(),
        "ss" => format!("{:02}", at.second()),
        "s" => at.second().to_string(),
        "A" => (if at.hour() < 12 { "AM" } else { "PM" }).to_string(),
        "a" => (if at.hour() < 12 { "am" } else { "pm" }).to_string(),
        "X" => at.and_utc().timestamp().to_string(),
        "x" => at.and_utc().timestamp_millis().to_string(),
        other => other.to_string(),
    }
}

/// The week-year and week of `date` in Moment's default `en` locale: weeks run Sunday to
/// Saturday and week 1 is the one holding January 1st, so a week belongs to the year its
/// Saturday is in.
fn en_week(date: NaiveDate) -> (i32, u32) {
    let sunday = date - Duration::days(i64::from(date.weekday().num_days_from_sunday()));
    let year = (sunday + Duration::days(6)).year();
    let jan1 = NaiveDate::from_ymd_opt(year, 1, 1).expect("January 1st exists");
    let first = jan1 - Duration::days(i64::from(jan1.weekday().num_days_from_sunday()));
    (year, ((sunday - first).num_days() / 7 + 1) as u32)
}

/// `1st`, `2nd`, `3rd`, `4th`, `11th`, `21st`, ... as Moment's `en` ordinals.
fn ordinal(n: u32) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(y: i32, m: u32, d: u32, h: u32, min: u32) -> NaiveDateTime {
        NaiveDate::from_ymd_opt(y, m, d).unwrap().and_hms_opt(h, min, 5).unwrap()
    }

    #[test]
    fn the_default_formats_of_every_period_name_the_date() {
        let t = at(2026, 1, 2, 0, 0);
        assert_eq!(format("YYYY-MM-DD", t), "2026-01-02");
        assert_eq!(format("gggg-[W]ww", t), "2026-W01");
        assert_eq!(format("YYYY-MM", t), "2026-01");
        assert_eq!(format("YYYY-[Q]Q", t), "2026-Q1");
        assert_eq!(format("YYYY", t), "2026");
    }

    #[test]
    fn names_ordinals_literals_and_escapes_read_as_moment_writes_them() {
        let t = at(2026, 1, 2, 15, 7);
        assert_eq!(format("dddd, MMMM Do YYYY", t), "Friday, January 2nd 2026");
        assert_eq!(format("ddd MMM D, dd", t), "Fri Jan 2, Fr");
        assert_eq!(format("YYYY/MM/[Day] D", t), "2026/01/Day 2");
        assert_eq!(format("[YYYY] \\Y-YYYY \\[", t), "YYYY Y-2026 [");
        assert_eq!(format("HH:mm h:mm A, hh a, k:ss", t), "15:07 3:07 PM, 03 pm, 15:05");
        assert_eq!(format("DDDD DDDo E e d", t), "002 2nd 5 5 5");
        assert_eq!(format("Qo YY Mo", at(2026, 11, 23, 0, 0)), "4th 26 11th");
        assert_eq!(format("Do", at(2026, 3, 11, 0, 0)), "11th");
        assert_eq!(format("Do", at(2026, 3, 22, 0, 0)), "22nd");
    }

    #[test]
    fn locale_weeks_start_on_sunday_and_iso_weeks_on_monday() {
        // 2026-12-31 is a Thursday: its Sunday-to-Saturday week holds 2027-01-01, so it is the
        // first week of 2027 in the en locale, and ISO week 53 of 2026.
        let t = at(2026, 12, 31, 0, 0);
        assert_eq!(format("gggg-[W]ww", t), "2027-W01");
        assert_eq!(format("GGGG-[W]WW", t), "2026-W53");
        // 2026-01-04 is a Sunday: week 2 in en, still ISO week 1.
        let t = at(2026, 1, 4, 0, 0);
        assert_eq!(format("gggg-[W]ww w", t), "2026-W02 2");
        assert_eq!(format("GGGG-[W]WW W", t), "2026-W01 1");
        // 2027-01-02 is a Saturday in the week of 2027-01-01.
        assert_eq!(format("gggg ww", at(2027, 1, 2, 0, 0)), "2027 01");
        assert_eq!(format("gggg ww", at(2027, 1, 3, 0, 0)), "2027 02");
    }

    #[test]
    fn templates_take_obsidians_placeholders_and_leave_others_alone() {
        let s = PeriodSettings {
            period: "daily",
            folder: "Daily".into(),
            format: "YYYY/MM/YYYY-MM-DD".into(),
            template: None,
            source: None,
        };
        let date = NaiveDate::from_ymd_opt(2026, 1, 2).unwrap();
        let now = at(2026, 5, 6, 9, 30);
        let text = "# {{title}}\n{{ date }} at {{TIME}}; {{date:dddd}} {{time:HH}}\n\
                    <% tp.date.now() %> {{query}} {{unclosed";
        assert_eq!(
            expand_template(text, &s, date, now),
            "# 2026-01-02\n2026/01/2026-01-02 at 09:30; Friday 09\n\
             <% tp.date.now() %> {{query}} {{unclosed"
        );
        assert_eq!(note_path(&s, date), "Daily/2026/01/2026-01-02.md");
    }

    fn vault_with(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let at = dir.path().join(path);
            std::fs::create_dir_all(at.parent().unwrap()).unwrap();
            std::fs::write(at, text).unwrap();
        }
        dir
    }

    #[test]
    fn daily_notes_follow_obsidians_defaults_and_its_settings_file() {
        let d = NaiveDate::from_ymd_opt(2026, 3, 4).unwrap();
        let bare = vault_with(&[]);
        let s = settings(bare.path(), "daily").unwrap();
        assert_eq!((note_path(&s, d).as_str(), s.source), ("2026-03-04.md", None));
        let set = vault_with(&[(
            DAILY_NOTES_SETTINGS,
            r#"{"folder": "/Journal/", "format": "YYYY/MM-DD", "template": "Templates/Day"}"#,
        )]);
        let s = settings(set.path(), "daily").unwrap();
        assert_eq!(note_path(&s, d), "Journal/2026/03-04.md");
        assert_eq!(s.template.as_deref(), Some("Templates/Day"));
        assert_eq!(s.source, Some(DAILY_NOTES_SETTINGS));
    }

    #[test]
    fn unknown_periods_are_not_found_and_periods_nothing_enables_are_disabled() {
        let bare = vault_with(&[]);
        assert_eq!(settings(bare.path(), "hourly").unwrap_err().code(), ErrorCode::NotFound);
        let e = settings(bare.path(), "weekly").unwrap_err();
        assert_eq!(e.code(), ErrorCode::PeriodDisabled);
        assert!(e.message().contains("Periodic Notes"), "{e:?}");
        let off = vault_with(&[(CORE_PLUGINS, r#"{"daily-notes": false, "graph": true}"#)]);
        assert_eq!(settings(off.path(), "daily").unwrap_err().code(), ErrorCode::PeriodDisabled);
        let old = vault_with(&[(CORE_PLUGINS, r#"["file-explorer", "graph"]"#)]);
        assert_eq!(settings(old.path(), "daily").unwrap_err().code(), ErrorCode::PeriodDisabled);
        let on = vault_with(&[(CORE_PLUGINS, r#"["file-explorer", "daily-notes"]"#)]);
        assert!(settings(on.path(), "daily").is_ok());
        let broken = vault_with(&[(DAILY_NOTES_SETTINGS, "{not json")]);
        assert_eq!(settings(broken.path(), "daily").unwrap_err().code(), ErrorCode::Unreadable);
    }

    #[test]
    fn the_periodic_notes_plugin_enables_periods_in_both_of_its_shapes() {
        let d = NaiveDate::from_ymd_opt(2026, 3, 4).unwrap();
        let released = vault_with(&[
            (DAILY_NOTES_SETTINGS, r#"{"folder": "Core"}"#),
            (
                PERIODIC_NOTES_SETTINGS,
                r#"{"daily": {"enabled": true, "folder": "Days", "format": "", "template": "T/d"},
                    "weekly": {"enabled": true, "folder": "Weeks", "format": "gggg-[W]ww"},
                    "monthly": {"enabled": false, "folder": "Months"}}"#,
            ),
        ]);
        let daily = settings(released.path(), "daily").unwrap();
        assert_eq!(note_path(&daily, d), "Days/2026-03-04.md");
        assert_eq!(daily.template.as_deref(), Some("T/d"));
        let weekly = settings(released.path(), "weekly").unwrap();
        assert_eq!(note_path(&weekly, d), "Weeks/2026-W10.md");
        let e = settings(released.path(), "monthly").unwrap_err();
        assert_eq!(e.code(), ErrorCode::PeriodDisabled);
        assert!(e.message().contains("does not enable monthly"), "{e:?}");

        let beta = vault_with(&[(
            PERIODIC_NOTES_SETTINGS,
            r#"{"activeCalendarSet": "b", "calendarSets": [
                {"id": "a", "quarter": {"enabled": true, "folder": "A"}},
                {"id": "b", "quarter": {"enabled": true, "folder": "Q", "templatePath": "T/q.md"},
                 "day": {"enabled": false}}]}"#,
        )]);
        let q = settings(beta.path(), "quarterly").unwrap();
        assert_eq!(
            (note_path(&q, d).as_str(), q.template.as_deref()),
            ("Q/2026-Q1.md", Some("T/q.md"))
        );
        // The plugin leaves daily off, so Obsidian's own daily notes answer.
        assert_eq!(note_path(&settings(beta.path(), "daily").unwrap(), d), "2026-03-04.md");
    }

    #[cfg(unix)]
    #[test]
    fn a_symlinked_settings_file_is_refused_not_followed() {
        let outside = vault_with(&[("daily-notes.json", r#"{"folder": "Elsewhere"}"#)]);
        let v = vault_with(&[]);
        std::fs::create_dir_all(v.path().join(".obsidian")).unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("daily-notes.json"),
            v.path().join(DAILY_NOTES_SETTINGS),
        )
        .unwrap();
        assert_eq!(settings(v.path(), "daily").unwrap_err().code(), ErrorCode::Unreadable);
    }
}
