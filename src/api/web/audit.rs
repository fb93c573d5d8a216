//! The audit page, `/ui/audit`: the trail of writes (`crate::auth::audit`), newest first,
//! narrowed by client and path with a plain GET form. The signed-in owner sees every client's
//! rows, through the same front-door function as `GET /audit` (`service::audit`); it draws
//! and decides nothing.

use std::collections::HashMap;

use axum::extract::{Query, State};
use axum::response::Response;
use maud::html;

use super::{Web, blocking, error_response, page, param};
use crate::auth::audit::Filter;
use crate::auth::utc;
use crate::service::{self as tools, Target};

/// `GET /ui/audit[?client=&path=&since=&limit=]`.
pub(crate) async fn trail(
    State(web): State<Web>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let (client, path) = (param(&q, "client").unwrap_or(""), param(&q, "path").unwrap_or(""));
    let filter =
        match Filter::asked(Some(client), Some(path), param(&q, "since"), param(&q, "limit")) {
            Ok(f) => f,
            Err(e) => return error_response(&e, true),
        };
    let engine = web.engine.clone();
    // The page is the signed-in owner's, as every other page is: the owner's target.
    let rows = match blocking(move || tools::audit(&*engine, &Target::default(), filter)).await {
        Ok(rows) => rows,
        Err(e) => return error_response(&e, true),
    };
    page(
        "Audit trail",
        html! {
            h1 { "Audit trail" }
            p { "Every write, newest first: which client made it, when (UTC), where, and what kind of change it was." }
            form.filters method="get" action="/ui/audit" role="search" aria-label="filter the audit trail" {
                label for="audit-client" { "Client" }
                input #audit-client type="text" name="client" value=(client) placeholder="owner";
                label for="audit-path" { "Path or folder" }
                input #audit-path type="text" name="path" value=(path) placeholder="Inbox/";
                button type="submit" { "Filter" }
            }
            @if rows.is_empty() {
                p #audit-empty { "No writes recorded" @if !client.is_empty() || !path.is_empty() { " that match" } "." }
            } @else {
                table #audit {
                    caption { (rows.len()) " writes" }
                    thead {
                        tr {
                            th scope="col" { "When (UTC)" }
                            th scope="col" { "Client" }
                            th scope="col" { "Change" }
                            th scope="col" { "Vault" }
                            th scope="col" { "Path" }
                        }
                    }
                    tbody {
                        @for r in &rows {
                            tr {
                                td { time datetime=(utc(r.at)) { (utc(r.at)) } }
                                td { (r.client) }
                                td { (r.kind) }
                                td { (r.vault) }
                                td {
                                    (r.path)
                                    @if let Some(to) = &r.to { " → " (to) }
                                }
                            }
                        }
                    }
                }
            }
        },
    )
}
