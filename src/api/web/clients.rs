//! The clients page, `/ui/clients`: every client with its grant (static tokens from
//! `mdvault token create`, and applications the owner allowed through OAuth), each live one
//! revocable with one button, and a link to what it changed in the audit trail. It lists and
//! revokes through the same credentials-file calls `mdvault token list` and `revoke` make.

use std::collections::HashMap;

use axum::extract::{Form, State};
use axum::response::Response;
use maud::html;

use super::{Web, blocking, error_response, page, redirect, required, url};
use crate::auth::utc;

/// `GET /ui/clients`.
pub(crate) async fn list(State(web): State<Web>) -> Response {
    let store = web.credentials.clone();
    let clients = match blocking(move || store.clients()).await {
        Ok(c) => c,
        Err(e) => return error_response(&e, true),
    };
    page(
        "Clients",
        html! {
            h1 { "Clients" }
            p {
                "Who may use this server besides you: tokens made with " code { "mdvault token create" }
                ", and applications you allowed to sign in (Claude, ChatGPT and others, through OAuth). "
                "Revoking one refuses its next request."
            }
            @if clients.is_empty() {
                p #clients-empty { "No clients yet: only your API key opens this server." }
            } @else {
                table #clients {
                    caption { (clients.len()) @if clients.len() == 1 { " client" } @else { " clients" } }
                    thead {
                        tr {
                            th scope="col" { "Name" }
                            th scope="col" { "Kind" }
                            th scope="col" { "May" }
                            th scope="col" { "Since (UTC)" }
                            th scope="col" { "State" }
                        }
                    }
                    tbody {
                        @for c in &clients {
                            tr {
                                td { a href={ "/ui/audit?client=" (url::enc(&c.name)) } { (c.name) } }
                                td { @if c.kind == "oauth" { "signed in (OAuth)" } @else { "token" } }
                                td { (c.grant.describe()) }
                                td { time datetime=(utc(c.created)) { (utc(c.created)) } }
                                td {
                                    @if let Some(at) = c.revoked {
                                        "revoked " time datetime=(utc(at)) { (utc(at)) }
                                    } @else {
                                        form.inline method="post" action="/ui/clients/revoke" {
                                            input type="hidden" name="name" value=(c.name);
                                            button.quiet type="submit" aria-label={ "Revoke " (c.name) } { "Revoke" }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        },
    )
}

/// `POST /ui/clients/revoke` with `name`.
pub(crate) async fn revoke(
    State(web): State<Web>,
    Form(f): Form<HashMap<String, String>>,
) -> Response {
    let name = match required(&f, "name") {
        Ok(n) => n.to_string(),
        Err(e) => return error_response(&e, true),
    };
    let store = web.credentials.clone();
    match blocking(move || store.revoke_client(&name)).await {
        Ok(c) => {
            tracing::info!("the owner revoked client '{}' on the web page", c.name);
            redirect("/ui/clients")
        }
        Err(e) => error_response(&e, true),
    }
}
