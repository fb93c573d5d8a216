//! The health pages: what is searchable (and why not the rest), the index build's progress,
//! the maintenance findings grouped by check, the open callouts by severity, and the expiry
//! dates as a timeline drawn server-side in SVG. The status page also lists the signed-in
//! sessions, each with a revoke button.
//!
//! Each page calls one service function (`status`, `maintenance`, `callouts`, `expiries`) and
//! the engine's build status (the status page also the session list); it draws, it decides
//! nothing.

use std::collections::{BTreeMap, HashMap};

use axum::extract::{Extension, Query, State};
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};

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

/// The index build as it stands: the part the page polls while a build runs.
fn progress_markup(web: &Web) -> Markup {
    let s = web.engine.status();
    let building = s.phase == Phase::Building;
    html! {
        div #progress data-building=(if building { "true" } else { "false" }) {
            p {
                "Index: " strong #phase class=(format!("phase-{}", s.phase.as_str())) { (s.phase.as_str()) }
                @if building { " for " (format!("{:.0}", s.phase_seconds)) " s" }
                @if let Some(at) = &s.built_at { " · last built " (at) }
                @if let Some(secs) = s.build_seconds { " in " (format!("{secs:.1}")) " s" }
            }
            dl.counts {
                dt { "files" } dd #files { (s.files) }
                dt { "chunks" } dd { (s.chunks) }
                dt { "vectors" } dd { (s.vectors) }
            }
            @if s.chunks > 0 {
                @let share = (s.vectors as f64 / s.chunks as f64).min(1.0);
                svg.meter role="img" viewBox="0 0 300 16" width="300" height="16" aria-label=(format!("{:.0}% of chunks have vectors", share * 100.0)) {
                    rect.track x="0" y="0" width="300" height="16" {}
                    rect.bar.bar-fused x="0" y="0" width=(format!("{:.1}", share * 300.0)) height="16" {}
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
                h2 { "Index build" }
                (progress_markup(&web))
                @if let Some(p) = &report.model.problem { p.error { (p) } }
                @if report.model.switch_pending { p.notice { "The configured model differs from the index's; a reindex will switch." } }
            }
            @for c in &report.vaults {
                section.coverage {
                    h2 { "What is searchable" }
                    table #coverage {
                        tr { th { "notes" } td { (c.notes) } }
                        tr { th { "documents" } td { (c.documents) } }
                        tr { th { "chunks" } td { (c.chunks) } }
                        tr { th { "chunks without vectors" } td { (c.chunks_without_vectors) } }
                        @if let Some(b) = &c.last_build {
                            tr { th { "last build" } td { (b.at) " (" (b.files_seen) " files seen, " (b.files_chunked) " chunked, " (b.failed) " failed)" } }
                        }
                    }
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

/// `GET /ui/health/maintenance[?vault=]`: runs the checks, findings grouped by check.
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
            p { (run.checks.len()) " checks ran in " (run.duration_ms) " ms at " (run.generated_at) "." }
            @for check in &run.checks {
                section.check id=(format!("check-{}", check.declaration.check)) {
                    h2 {
                        (check.declaration.title)
                        " " span class=(format!("label status-{}", check.status.as_str())) { (check.status.as_str()) }
                    }
                    p.meta { code { (check.declaration.check) } " · " (check.counts.error) " errors, " (check.counts.warning) " warnings, " (check.counts.info) " notes" }
                    @if let Some(e) = &check.error { p.error { (e) } }
                    @if check.findings.is_empty() && check.error.is_none() { p.ok { "Nothing found." } }
                    ul.findings {
                        @for f in &check.findings {
                            li class=(format!("sev-{}", f.severity.as_str())) {
                                span class=(format!("label sev-{}", f.severity.as_str())) { (f.severity.as_str()) }
                                " "
                                @if let Some(path) = &f.path {
                                    @let href = match f.line { Some(l) => format!("{}&line={l}", url::note(&vault, path)), None => url::note(&vault, path) };
                                    a href=(href) { (path) @if let Some(l) = f.line { ":" (l) } }
                                    " · "
                                }
                                (f.message)
                            }
                        }
                    }
                }
            }
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

/// The expiry dates drawn as a timeline: one row per date, a dot at its distance from today
/// (lapsed ones red, left of the today line), and the note, what and days left written out.
fn timeline(entries: &[crate::upkeep::expiries::Entry]) -> Markup {
    const LEFT: f64 = 10.0;
    const WIDTH: f64 = 380.0;
    const ROW: f64 = 24.0;
    let span = (PAST_DAYS + FUTURE_DAYS) as f64;
    let x =
        |days: i64| LEFT + WIDTH * (days.clamp(-PAST_DAYS, FUTURE_DAYS) + PAST_DAYS) as f64 / span;
    let height = ROW * (entries.len() as f64 + 1.0) + 22.0;
    let today = x(0);
    html! {
        svg.timeline #expiry-timeline role="img" viewBox=(format!("0 0 1000 {height}")) width="1000" height=(format!("{height}"))
            aria-label=(format!("{} expiry dates; lapsed in red", entries.len())) {
            line.today x1=(today) y1="0" x2=(today) y2=(height - 14.0) {}
            text.axis x=(today + 4.0) y="14" { "today" }
            text.axis x=(LEFT) y=(height - 2.0) { "−" (PAST_DAYS) " days" }
            text.axis x=(LEFT + WIDTH - 60.0) y=(height - 2.0) { "+" (FUTURE_DAYS) " days" }
            @for (i, e) in entries.iter().enumerate() {
                @let y = ROW * (i as f64 + 1.0) + 12.0;
                @let class = if e.days < 0 { "lapsed" } else if e.days <= 30 { "soon" } else { "later" };
                line.row x1=(LEFT) y1=(y) x2=(LEFT + WIDTH) y2=(y) {}
                circle class=(format!("dot {class}")) cx=(format!("{:.1}", x(e.days))) cy=(y) r="6" {}
                text class=(format!("entry {class}")) x=(LEFT + WIDTH + 12.0) y=(y + 4.0) {
                    (e.date.to_string()) " · "
                    @if e.days < 0 { "lapsed " (-e.days) " days ago" } @else { (e.days) " days left" }
                    " · " (e.note.trim_end_matches(".md")) @if !e.what.is_empty() { " (" (e.what) ")" }
                }
            }
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
            // It scrolls sideways on a phone, so it takes a keyboard stop.
            div.chart tabindex="0" role="region" aria-label="expiry timeline" { (timeline(&report.entries)) }
            table.expiries {
                thead { tr { th { "date" } th { "days" } th { "note" } th { "what" } } }
                tbody {
                    @for e in &report.entries {
                        tr class=[(e.days < 0).then_some("lapsed")] {
                            td { (e.date.to_string()) }
                            td { (e.days) }
                            td { a href=(url::note(&vault, &e.note)) { (e.note) } }
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
