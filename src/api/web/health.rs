//! The health pages: what is searchable (and why not the rest) in plain words, the index
//! build's progress as a labelled bar, the maintenance findings grouped by cause (`findings`),
//! the open callouts by severity, and the expiry dates as a timeline drawn server-side in SVG,
//! with its legend, narrow enough for a phone. The status page also lists the signed-in
//! sessions, each with a revoke button.
//!
//! Each page calls one service function (`status`, `maintenance`, `callouts`, `expiries`) and
//! the engine's build status (the status page also the session list); it draws, it decides
//! nothing.

use std::collections::{BTreeMap, HashMap};

use axum::extract::{Extension, Query, State};
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};

mod findings;

use super::session::Current;
use super::{Web, blocking, error_response, page, param, url};
use crate::auth::sessions::Session;
use crate::auth::{Hash, utc};
use crate::engine::Phase;
use crate::service::{self as tools, Target};

type Params = Query<HashMap<String, String>>;

/// The vault a health page is about (the default vault when none is named).
fn vault_of(web: &Web, q: &HashMap<String, String>) -> String {
    param(q, "vault")
        .map(str::to_string)
        .or_else(|| web.engine.vaults().get(None).ok().map(|v| v.name().to_string()))
        .unwrap_or_default()
}

/// Links to the health pages of one vault, and the vault switcher.
fn tabs(web: &Web, vault: &str, current: &str) -> Markup {
    let pages = [
        ("/ui/health", "Status"),
        ("/ui/health/maintenance", "Maintenance"),
        ("/ui/health/callouts", "Callouts"),
        ("/ui/health/expiries", "Expiries"),
    ];
    html! {
        nav.tabs aria-label="health pages" {
            @for (href, name) in pages {
                a href=(format!("{href}?vault={}", url::enc(vault))) aria-current=[(href == current).then_some("page")] { (name) }
            }
            @if web.engine.vaults().names().len() > 1 {
                span.vaults {
                    "vault: "
                    @for v in web.engine.vaults().names() {
                        a href=(format!("{current}?vault={}", url::enc(v))) aria-current=[(v == vault).then_some("true")] { (v) }
                        " "
                    }
                }
            }
        }
    }
}

/// The index build as a labelled bar with its value in words: while a build runs, the stage's
/// items done of all (no value, so an indeterminate bar, before the first stage has a count);
/// once built, full, with when and how long.
fn progress_markup(web: &Web) -> Markup {
    let s = web.engine.status();
    let building = s.phase == Phase::Building;
    let (value, max, words) = match (s.phase, &s.progress) {
        (Phase::Building, Some(p)) => {
            let what = if p.stage == "embedding" {
                "passages given their meaning"
            } else {
                "files read and split into passages"
            };
            let left = p
                .eta_seconds
                .map(|e| format!(", about {} left", crate::index::human_seconds(e)))
                .unwrap_or_default();
            (Some(p.done), p.total.max(1), format!("{} of {} {what}{left}", p.done, p.total))
        }
        (Phase::Building, None) => (None, 1, format!("starting: {:.0} s so far", s.phase_seconds)),
        (Phase::Ready, _) => {
            let when = s
                .built_at
                .as_deref()
                .map(|a| format!(", last built {}", utc_words(a)))
                .unwrap_or_default();
            let took = s.build_seconds.map(|t| format!(" in {t:.1} s")).unwrap_or_default();
            (Some(1), 1, format!("done{when}{took}"))
        }
        (Phase::Failed, _) => (Some(0), 1, "failed; the reason is below".to_string()),
        (Phase::Idle, _) => (Some(0), 1, "not started by this server".to_string()),
    };
    html! {
        div #progress data-building=(if building { "true" } else { "false" }) {
            p.progress-line {
                label for="index-progress" { "Index build" }
                " "
                progress #index-progress max=(max) value=[value] aria-valuetext=(words) aria-describedby="progress-words" { (words) }
                " "
                span #progress-words {
                    strong #phase class=(format!("phase-{}", s.phase.as_str())) { (s.phase.as_str()) }
                    ": " (words)
                }
            }
            @if let Some(e) = &s.error { p.error { (e) } }
        }
    }
}

/// `GET /ui/health/progress`: the build status fragment alone (polled by the script).
pub(crate) async fn progress(State(web): State<Web>) -> Response {
    progress_markup(&web).into_string().into_response_html()
}

trait HtmlFragment {
    fn into_response_html(self) -> Response;
}

impl HtmlFragment for String {
    fn into_response_html(self) -> Response {
        ([(axum::http::header::CONTENT_TYPE, "text/html; charset=utf-8")], self).into_response()
    }
}

/// The signed-in sessions, the request's own marked, each with a button that revokes it
/// (`POST /ui/sessions/revoke`, under the page's Origin rule like every other form). A list
/// rather than a table: six fields a session do not fit a phone's width side by side.
fn sessions_markup(listed: &crate::error::Result<Vec<Session>>, current: Option<Hash>) -> Markup {
    html! {
        section #sessions {
            h2 { "Signed-in sessions" }
            @match listed {
                Err(e) => { p.error { (e.message()) } }
                Ok(list) => { ul.sessions #session-list {
                    @for s in list {
                        @let mine = Some(s.hash) == current;
                        li.current[mine] {
                            div.session-head {
                                code { (s.id()) }
                                @if mine { span.label #current-session { "this one" } }
                                form.inline.revoke method="post" action="/ui/sessions/revoke" {
                                    input type="hidden" name="id" value=(s.id());
                                    button.danger type="submit" { @if mine { "Sign out" } @else { "Revoke" } }
                                }
                            }
                            p.session-meta {
                                "signed in " (utc(s.created)) " · last seen " (utc(s.last_seen)) " · ends " (utc(s.expires))
                                @if !s.remote.is_empty() { " · from " (s.remote) }
                            }
                            @if !s.user_agent.is_empty() { p.session-meta { (s.user_agent) } }
                        }
                    }
                } }
            }
        }
    }
}

/// An RFC 3339 UTC time as people write it: `2026-12-05 13:21 UTC`.
fn utc_words(at: &str) -> String {
    match chrono::DateTime::parse_from_rfc3339(at) {
        Ok(t) => t.with_timezone(&chrono::Utc).format("%Y-%m-%d %H:%M UTC").to_string(),
        Err(_) => at.to_string(),
    }
}

fn count(n: impl Into<u64>, one: &str, many: &str) -> String {
    let n = n.into();
    format!("{n} {}", if n == 1 { one } else { many })
}

/// What one vault's index holds, said as sentences: what is searchable, whether all of it is
/// found by meaning yet, and what the last full pass did (a pass that found nothing changed
/// re-indexes nothing, which a bare "0 chunked" made read as "nothing indexed").
fn coverage_words(c: &crate::index::coverage::Coverage) -> Markup {
    html! {
        ul.coverage #coverage {
            li {
                "Searchable now: " strong { (count(c.notes as u64, "note", "notes")) }
                @if c.documents > 0 { " and " strong { (count(c.documents as u64, "filed document", "filed documents")) } }
                ", in " (count(c.chunks, "passage", "passages")) "."
            }
            li {
                @if c.chunks_without_vectors == 0 {
                    "Every passage can be found by its meaning as well as by its words."
                } @else {
                    (count(c.chunks_without_vectors, "passage is", "passages are")) " still waiting for its meaning to be worked out; until then "
                    (if c.chunks_without_vectors == 1 { "it is" } else { "they are" }) " found by their exact words only."
                }
            }
            @if let Some(b) = &c.last_build {
                li {
                    "The last full pass, at " (utc_words(&b.at)) " (" (format!("{:.1}", b.seconds)) " s), looked at "
                    (count(b.files_seen as u64, "file", "files")) ": "
                    @if b.files_chunked == 0 && b.files_removed == 0 {
                        "none had changed since the pass before, so none needed indexing again"
                    } @else {
                        (count(b.files_chunked as u64, "was", "were")) " new or changed and indexed again"
                        @if b.files_removed > 0 { ", " (count(b.files_removed as u64, "was", "were")) " gone and taken out" }
                    }
                    @if b.failed > 0 { "; " strong.error { (b.failed) " could not be read (listed below)" } }
                    "."
                }
            } @else {
                li { "No full pass has finished since this index was made." }
            }
        }
    }
}

/// `GET /ui/health[?vault=]`: coverage from `status`, the build's progress, and the signed-in
/// sessions.
pub(crate) async fn overview(
    State(web): State<Web>,
    current: Option<Extension<Current>>,
    Query(q): Params,
) -> Response {
    let vault = vault_of(&web, &q);
    let engine = web.engine.clone();
    let v = vault.clone();
    let report = blocking(move || {
        tools::status(&engine, &Target::default(), tools::StatusArgs { vault: Some(v) })
    })
    .await;
    let report = match report {
        Ok(r) => r,
        Err(e) => return error_response(&e, true),
    };
    let sessions = web.sessions.list().await;
    let current = current.map(|Extension(Current(h))| h);
    page(
        "Health",
        html! {
            h1 { "Health of " (vault) }
            (tabs(&web, &vault, "/ui/health"))
            section.status {
                h2 { "Search index" }
                (progress_markup(&web))
                @if let Some(p) = &report.model.problem { p.error { (p) } }
                @if report.model.switch_pending { p.notice { "The configured model differs from the index's; a reindex will switch." } }
            }
            @for c in &report.vaults {
                section.coverage {
                    h2 { "What is searchable" }
                    (coverage_words(c))
                    @if !c.problems.is_empty() {
                        h3 { "Not searchable" }
                        ul.problems {
                            @for p in &c.problems {
                                li { a href=(url::note(&c.vault, &p.path)) { (p.path) } " · " code { (p.status.as_str()) } " · " (p.detail) }
                            }
                        }
                    }
                    @if !c.skipped.is_empty() {
                        h3 { "Skipped by rule" }
                        ul { @for s in &c.skipped { li { (s.count) " " (s.reason) @if !s.examples.is_empty() { " (e.g. " (s.examples.join(", ")) ")" } } } }
                    }
                    @if !c.stale.is_empty() {
                        h3 { "Out of step with the disk" }
                        ul { @for s in &c.stale { li { (s.path) " · " (s.why) } } }
                    }
                    @if c.problems.is_empty() && c.skipped.is_empty() && c.stale.is_empty() {
                        p.ok { "Everything in this vault is searchable." }
                    }
                }
            }
            (sessions_markup(&sessions, current))
        },
    )
}

/// `GET /ui/health/maintenance[?vault=]`: runs the checks; one verdict, then each check's
/// findings grouped by cause.
pub(crate) async fn maintenance(State(web): State<Web>, Query(q): Params) -> Response {
    let vault = vault_of(&web, &q);
    let engine = web.engine.clone();
    let v = vault.clone();
    let run =
        match blocking(move || tools::maintenance(&*engine, &Target::default(), Some(&v))).await {
            Ok(r) => r,
            Err(e) => return error_response(&e, true),
        };
    page(
        "Maintenance",
        html! {
            h1 { "Maintenance of " (vault) }
            (tabs(&web, &vault, "/ui/health/maintenance"))
            (findings::report(&vault, &run))
        },
    )
}

/// `GET /ui/health/callouts[?vault=]`: the open callouts, most urgent first, by severity.
pub(crate) async fn callouts(State(web): State<Web>, Query(q): Params) -> Response {
    let vault = vault_of(&web, &q);
    let engine = web.engine.clone();
    let v = vault.clone();
    let report = match blocking(move || {
        tools::callouts(
            &*engine,
            &Target::default(),
            tools::CalloutsArgs { vault: Some(v), dir: None },
        )
    })
    .await
    {
        Ok(r) => r,
        Err(e) => return error_response(&e, true),
    };
    let mut by_severity: BTreeMap<_, Vec<_>> = BTreeMap::new();
    for c in &report.callouts {
        by_severity.entry(c.severity).or_default().push(c);
    }
    page(
        "Callouts",
        html! {
            h1 { "Open callouts in " (vault) }
            (tabs(&web, &vault, "/ui/health/callouts"))
            p { (report.total) " callouts in " (report.notes_with_callouts) " of " (report.notes_scanned) " notes." }
            @for (severity, list) in &by_severity {
                section.severity id=(format!("sev-{}", severity.as_str())) {
                    h2 { span class=(format!("label sev-{}", severity.as_str())) { (severity.as_str()) } " " (list.len()) }
                    ul.callouts {
                        @for c in list {
                            li {
                                span class=(format!("callout-chip callout-{}", c.kind)) { (c.kind) }
                                " "
                                a href=(format!("{}&line={}", url::note(&vault, &c.note), c.line)) { (c.note) ":" (c.line) }
                                @if !c.title.is_empty() { " · " strong { (c.title) } }
                                @if !c.body.is_empty() { p.callout-body { (c.body) } }
                            }
                        }
                    }
                }
            }
            @if report.callouts.is_empty() { p.ok { "No open callouts." } }
        },
    )
}

/// The timeline's scale: this many days before today and after it fit the width; dates
/// further out sit at the edge with their numbers still written.
const PAST_DAYS: i64 = 60;
const FUTURE_DAYS: i64 = 365;

/// The expiry dates drawn as a timeline narrow enough for a phone: one row per date, its
/// date and days left, then its note and what, written above a track with a dot at its
/// distance from today (lapsed ones red, left of the today line; the next 30 days amber; later
/// green). The table after it holds the same dates in full.
fn timeline(entries: &[crate::upkeep::expiries::Entry]) -> Markup {
    const LEFT: f64 = 6.0;
    const WIDTH: f64 = 408.0;
    const TOP: f64 = 20.0;
    const ROW: f64 = 58.0;
    /// A line past this many characters is cut (the table has it whole): the drawing keeps a
    /// width a phone shows without shrinking its text.
    const LINE: usize = 56;
    let span = (PAST_DAYS + FUTURE_DAYS) as f64;
    let x =
        |days: i64| LEFT + WIDTH * (days.clamp(-PAST_DAYS, FUTURE_DAYS) + PAST_DAYS) as f64 / span;
    let height = TOP + ROW * entries.len() as f64 + 18.0;
    let today = x(0);
    html! {
        svg.timeline #expiry-timeline role="img" viewBox=(format!("0 0 420 {height}")) width="420" height=(format!("{height}"))
            aria-label=(format!("{} expiry dates on a line from {PAST_DAYS} days ago to {FUTURE_DAYS} days ahead; the table below lists them", entries.len())) {
            line.today x1=(today) y1=(TOP - 6.0) x2=(today) y2=(height - 16.0) {}
            text.axis x=(today + 4.0) y="12" { "today" }
            text.axis x=(LEFT) y=(height - 2.0) { (PAST_DAYS) " days ago" }
            text.axis x=(LEFT + WIDTH) y=(height - 2.0) text-anchor="end" { "in " (FUTURE_DAYS) " days" }
            @for (i, e) in entries.iter().enumerate() {
                @let y = TOP + ROW * i as f64;
                @let class = if e.days < 0 { "lapsed" } else if e.days <= 30 { "soon" } else { "later" };
                @let left = if e.days < 0 { format!("lapsed {} days ago", -e.days) } else { format!("{} days left", e.days) };
                @let what = if e.what.is_empty() { String::new() } else { format!(" · {}", e.what) };
                text class=(format!("entry {class}")) x=(LEFT) y=(y + 13.0) { (cut(&format!("{} · {left}", e.date), LINE)) }
                text.note x=(LEFT) y=(y + 29.0) { (cut(&format!("{}{what}", e.note.trim_end_matches(".md")), LINE)) }
                line.row x1=(LEFT) y1=(y + 40.0) x2=(LEFT + WIDTH) y2=(y + 40.0) {}
                circle class=(format!("dot {class}")) cx=(format!("{:.1}", x(e.days))) cy=(y + 40.0) r="6" {}
            }
        }
    }
}

/// A path that a narrow column breaks after a `/` rather than inside a name.
fn breakable(path: &str) -> Markup {
    html! {
        @for (i, part) in path.split('/').enumerate() {
            @if i > 0 { "/" wbr; }
            (part)
        }
    }
}

/// `s` cut to `n` characters, the cut marked with an ellipsis.
fn cut(s: &str, n: usize) -> String {
    if s.chars().count() > n {
        format!("{}…", s.chars().take(n - 1).collect::<String>())
    } else {
        s.to_string()
    }
}

/// What the timeline's colours and line mean, for whoever cannot tell them apart by name.
fn legend() -> Markup {
    html! {
        ul.legend #expiry-legend aria-label="what the timeline shows" {
            li { span.swatch.lapsed aria-hidden="true" {} " lapsed: the date has passed" }
            li { span.swatch.soon aria-hidden="true" {} " due within 30 days" }
            li { span.swatch.later aria-hidden="true" {} " later" }
            li { span.swatch.today aria-hidden="true" {} " the upright line is today" }
        }
    }
}

/// `GET /ui/health/expiries[?vault=]`: the dated commitments on a timeline and as a table.
pub(crate) async fn expiries(State(web): State<Web>, Query(q): Params) -> Response {
    let vault = vault_of(&web, &q);
    let engine = web.engine.clone();
    let v = vault.clone();
    let args = tools::ExpiriesArgs { vault: Some(v), within: None, untracked: false, dir: None };
    let report = match blocking(move || tools::expiries(&*engine, &Target::default(), args)).await {
        Ok(r) => r,
        Err(e) => return error_response(&e, true),
    };
    page(
        "Expiries",
        html! {
            h1 { "Expiries in " (vault) }
            (tabs(&web, &vault, "/ui/health/expiries"))
            p { (report.entries.len()) " dates in " (report.notes_scanned) " notes; " strong.lapsed-count { (report.lapsed) " lapsed" } " (today is " (report.today.to_string()) ")." }
            @if !report.entries.is_empty() {
                (legend())
                div.chart { (timeline(&report.entries)) }
            }
            table.expiries {
                thead { tr { th { "date" } th { "days" } th { "note" } th { "what" } } }
                tbody {
                    @for e in &report.entries {
                        tr class=[(e.days < 0).then_some("lapsed")] {
                            td { (e.date.to_string()) }
                            td { (e.days) }
                            td { a href=(url::note(&vault, &e.note)) { (breakable(&e.note)) } }
                            td { (e.what) }
                        }
                    }
                }
            }
            @if !report.malformed.is_empty() {
                h2 { "Dates that could not be read" }
                ul { @for m in &report.malformed { li { a href=(url::note(&vault, &m.note)) { (m.note) } " · " (m.problem) } } }
            }
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::coverage::{Coverage, LastBuild};

    fn coverage(chunked: usize, waiting: u64) -> Coverage {
        Coverage {
            vault: "v".into(),
            notes: 173,
            documents: 1,
            chunks: 900,
            chunks_without_vectors: waiting,
            problems: vec![],
            skipped: vec![],
            stale: vec![],
            last_build: Some(LastBuild {
                at: "2026-12-05T13:21:34Z".into(),
                seconds: 2.0,
                files_seen: 174,
                files_chunked: chunked,
                files_removed: 0,
                failed: 0,
                texts_embedded: 0,
            }),
        }
    }

    #[test]
    fn a_pass_that_changed_nothing_reads_as_everything_indexed() {
        let text = coverage_words(&coverage(0, 0)).into_string();
        assert!(text.contains("<strong>173 notes</strong>"), "{text}");
        assert!(text.contains("none had changed"), "{text}");
        assert!(text.contains("2026-12-05 13:21 UTC"), "{text}");
        assert!(!text.contains("chunked"), "{text}");
        let text = coverage_words(&coverage(3, 40)).into_string();
        assert!(text.contains("3 were new or changed"), "{text}");
        assert!(text.contains("40 passages are still waiting"), "{text}");
    }

    #[test]
    fn the_timeline_cuts_long_lines_and_marks_each_date_by_its_distance() {
        let entry = |days: i64, note: &str| crate::upkeep::expiries::Entry {
            note: note.into(),
            date: chrono::NaiveDate::from_ymd_opt(2027, 1, 1).unwrap(),
            what: String::new(),
            days,
        };
        let long = format!("{}.md", "N".repeat(80));
        let svg =
            timeline(&[entry(-3, "A.md"), entry(10, &long), entry(400, "C.md")]).into_string();
        assert!(
            svg.contains("dot lapsed") && svg.contains("dot soon") && svg.contains("dot later")
        );
        assert!(svg.contains(&format!("{}…", "N".repeat(55))) && !svg.contains(&"N".repeat(56)));
        assert_eq!(cut("short", 56), "short");
        assert_eq!(breakable("a/b").into_string(), "a/<wbr>b");
    }
}
