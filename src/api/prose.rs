//! The prose the MCP survey and upkeep tools answer with: expiries, grep, links, callouts,
//! the maintenance checks and a re-index's passes (a tag report and index coverage render
//! themselves, for the terminal too). Text a model can act on: what was found, then what to
//! call next.

pub(super) fn render_expiries(r: crate::upkeep::expiries::Report) -> String {
    let mut out = format!("# Expiry dates (today is {})\n\n", r.today);
    let tracked = !r.entries.is_empty() || !r.dismissed.is_empty() || !r.malformed.is_empty();
    if r.entries.is_empty() && !tracked {
        // Nothing tracked at all is not "nothing due": say how a date gets tracked.
        out.push_str(
            "No note tracks a date yet, so nothing can be reported as due. To track one, set \
             the note's `expires` frontmatter with vault_set_frontmatter, e.g. key \"expires\", \
             value [{\"date\": \"2027-02-14\", \"what\": \"Car insurance renewal\"}].\n",
        );
    } else if r.entries.is_empty() {
        out.push_str("No dated commitments in range.\n");
    }
    for e in &r.entries {
        let when = match e.days {
            d if d < 0 => format!("lapsed {} day(s) ago", -d),
            0 => "today".to_string(),
            d => format!("in {d} day(s)"),
        };
        out.push_str(&format!("- {} ({when}): {} [{}]\n", e.date, e.what, e.note));
    }
    if !r.dismissed.is_empty() {
        out.push_str("\n## Dismissed (expires: none)\n\n");
        for d in &r.dismissed {
            out.push_str(&format!("- {}: {}\n", d.note, d.reason));
        }
    }
    if !r.malformed.is_empty() {
        out.push_str("\n## Malformed (not tracked until fixed)\n\n");
        for m in &r.malformed {
            out.push_str(&format!("- {}: {}\n", m.note, m.problem));
        }
    }
    out.push_str(&format!("\n{} note(s) have no expires field.\n", r.untracked_count));
    for n in r.untracked.iter().flatten() {
        out.push_str(&format!("- {n}\n"));
    }
    out
}

/// Grep results as `path:line: text`, with the count and how to get the next page.
pub(super) fn render_grep(r: crate::upkeep::survey::GrepReport) -> String {
    let how = if r.regex { "matches the pattern" } else { "contains the text" };
    if r.total == 0 {
        return format!(
            "No line in {} file(s) {how} `{}`: it is absent from the notes and the text of the \
             filed documents (check the spelling, or try ignore_case).",
            r.files, r.pattern
        );
    }
    let mut out =
        format!("{} line(s) in {} file(s) searched {how} `{}`", r.total, r.files, r.pattern);
    if r.hits.is_empty() {
        out.push_str(&format!("; none from offset {}.\n", r.offset));
        return out;
    }
    let (first, last) = (r.offset + 1, r.offset + r.hits.len());
    out.push_str(&format!(" (showing {first} to {last}):\n\n"));
    for h in &r.hits {
        let doc = if h.document { " (document text)" } else { "" };
        out.push_str(&format!("{}:{}{doc}: {}\n", h.path, h.line, h.text));
    }
    if last < r.total {
        out.push_str(&format!("\n{} more: call again with offset {last}.\n", r.total - last));
    }
    out
}

/// A note's links both ways, broken ones marked.
pub(super) fn render_links(r: crate::upkeep::survey::LinkReport) -> String {
    let mut out = format!("# Links of {}\n\n## Outgoing ({})\n\n", r.path, r.outgoing.len());
    if r.outgoing.is_empty() {
        out.push_str("- (none)\n");
    }
    for l in &r.outgoing {
        let fragment = l.fragment.as_deref().map(|f| format!("#{f}")).unwrap_or_default();
        let to = match (&l.resolved, l.external) {
            (_, true) => "external URL".to_string(),
            (Some(p), _) => p.clone(),
            (None, _) => "BROKEN: no such note".to_string(),
        };
        out.push_str(&format!("- line {}: {}{fragment} -> {to}\n", l.line, l.target));
    }
    out.push_str(&format!("\n## Backlinks ({})\n\n", r.backlinks.len()));
    if r.backlinks.is_empty() {
        out.push_str("- (none: no note links here)\n");
    }
    for b in &r.backlinks {
        out.push_str(&format!("- {}:{} {}\n", b.from, b.line, b.written));
    }
    if !r.backlinks.is_empty() {
        out.push_str("\nvault_move repoints these links itself (update_links is on by default).\n");
    }
    out
}

pub(super) fn render_callouts(r: crate::upkeep::callouts::Report) -> String {
    if r.callouts.is_empty() {
        return format!("No open callouts in {} note(s).", r.notes_scanned);
    }
    let mut out =
        format!("# {} open callout(s) in {} note(s)\n\n", r.callouts.len(), r.notes_with_callouts);
    for c in &r.callouts {
        out.push_str(&format!(
            "- [{}] {}:{} {} ({})\n",
            c.severity.as_str(),
            c.note,
            c.line,
            c.title,
            c.kind
        ));
        for line in c.body.lines().filter(|l| !l.trim().is_empty()).take(6) {
            out.push_str(&format!("    {line}\n"));
        }
    }
    out
}

pub(super) fn render_checks(checks: Vec<crate::upkeep::CheckInfo>) -> String {
    let mut out = String::from("# Maintenance checks\n\n");
    for c in checks {
        let d = &c.declaration;
        let from = if c.replaces_builtin {
            format!("{}, replacing the built-in check", c.source.label())
        } else {
            c.source.label().to_string()
        };
        out.push_str(&format!("- {} (`{}`, {from}): {}\n", d.title, d.check, d.description));
    }
    out
}

pub(super) fn render_status(report: crate::index::coverage::Report) -> String {
    crate::index::coverage::render(&report)
}

pub(super) fn render_reindex(reports: Vec<(String, crate::index::SyncReport)>) -> String {
    reports
        .iter()
        .map(|(name, r)| {
            format!(
                "re-indexed {name}: {} files seen, {} re-chunked, {} removed, {} passages \
                 embedded ({} kept their stored vectors) in {:.1} s{}",
                r.files_seen,
                r.files_chunked,
                r.files_removed,
                r.texts_embedded,
                r.texts_reused,
                r.seconds,
                if r.failed.is_empty() {
                    String::new()
                } else {
                    format!("; {} file(s) could not be indexed", r.failed.len())
                }
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}
