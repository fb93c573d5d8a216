//! What the server says about itself: the Local REST API's status object at `GET /`,
//! `/healthz`, `/readyz` (its report is `readiness.rs`), `/status` (index coverage), the API
//! document at `/openapi.yaml` and the TLS certificate.

use axum::extract::{Extension, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};

use super::{App, OPENAPI, finish, refusal};
use crate::api::common::{blocking, json_body, text};
use crate::api::compat;
use crate::error::{Error, ErrorCode};
use crate::service::{self as tools, Target};
use crate::wire;

/// `GET /`: the Local REST API's status object, answered with or without a key (the guard
/// lets exactly this path through and says whether the key was right).
pub(super) async fn root_route(
    auth: Option<Extension<crate::api::guard::Authenticated>>,
) -> Response {
    // The guard marks only the public path; anywhere else (`/v/<name>/`) it checked the key.
    let authenticated = auth.is_none_or(|Extension(a)| a.0);
    json_body(compat::status(authenticated))
}

pub(super) async fn healthz() -> Response {
    text("ok\n")
}

pub(super) async fn readyz(State(app): State<App>) -> Response {
    crate::api::readiness::answer(app.engine.clone(), app.started.elapsed().as_secs_f64()).await
}

pub(super) async fn openapi() -> Response {
    ([(header::CONTENT_TYPE, "application/yaml; charset=utf-8")], OPENAPI).into_response()
}

/// `GET /obsidian-local-rest-api.crt`: the certificate this server presents, so a client can
/// trust it (public, as in the plugin). Over plain HTTP there is none: 404 saying how to turn
/// TLS on.
pub(super) async fn certificate_route(State(app): State<App>) -> Response {
    match &app.certificate {
        Some(pem) => (
            [
                (header::CONTENT_TYPE, "application/x-pem-file"),
                (
                    header::CONTENT_DISPOSITION,
                    "attachment; filename=\"obsidian-local-rest-api.crt\"",
                ),
            ],
            pem.to_string(),
        )
            .into_response(),
        None => refusal(&Error::new(
            ErrorCode::NotFound,
            "this server speaks plain HTTP, so it has no certificate; set server.tls: true \
             (MDVAULT_SERVER__TLS=true) to serve HTTPS with a self-signed one",
        )),
    }
}

/// `GET /status`: index coverage of every vault (of one under `/v/{vault}`).
pub(super) async fn status_route(
    State(app): State<App>,
    Extension(target): Extension<Target>,
) -> Response {
    let engine = app.engine.clone();
    finish(
        blocking(move || tools::status(&engine, &target, tools::StatusArgs { vault: None }))
            .await
            .map(|c| json_body(wire::status(&c))),
    )
}
