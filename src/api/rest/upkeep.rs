//! The upkeep and survey routes: `/tags/`, `/tags/rename`, `/frontmatter`, `/grep`, `/links/`, `/expiries`,
//! `/callouts`, `/maintenance`, `/maintenance/checks` and `/audit`.

use std::time::Instant;

use axum::extract::{Extension, RawQuery, State};
use axum::http::Uri;
use axum::response::Response;

use super::{App, finish, refusal};
use crate::api::common::{bad, blocking, flag, json_body, pairs, param, tail};
use crate::api::compat;
use crate::error::Result;
use crate::service::{self as tools, Target};
use crate::wire;

/// `GET /tags/`: every tag (frontmatter and inline, nested ones counted for their parents too)
/// with how many notes carry it.
pub(super) async fn tags_route(
    State(app): State<App>,
    Extension(target): Extension<Target>,
) -> Response {
    let engine = app.engine.clone();
    let counted = blocking(move || tools::tags(&engine, &target, tools::TagsArgs::default()));
    finish(counted.await.map(|r| json_body(compat::tag_counts(&r.tags))))
}

/// `POST /tags/rename` with `{"from", "to", "dry_run"}`: renames (or merges) a tag in every
/// note, nested tags with it; answers with each changed note and its count.
pub(super) async fn tag_rename_route(
    State(app): State<App>,
    Extension(target): Extension<Target>,
    body: std::result::Result<axum::body::Bytes, axum::extract::rejection::BytesRejection>,
) -> Response {
    let engine = app.engine.clone();
    let renamed = async move {
        let body = body.map_err(|e| bad(format!("the body could not be read: {e}")))?;
        let a: tools::TagRenameArgs = serde_json::from_slice(&body).map_err(|e| {
            bad(format!(
                "the body must be JSON {{\"from\": \"old\", \"to\": \"new\", \"dry_run\": false}}: {e}"
            ))
        })?;
        blocking(move || tools::rename_tag(&engine, &target, a)).await
    };
    finish(renamed.await.map(|r| json_body(wire::tag_renamed(&r))))
}

/// `GET /audit[?client=&path=&since=&limit=]`: the audit trail's rows, newest first; the
/// owner sees every client's, any other client its own (`tools::audit`).
pub(super) async fn audit_route(
    State(app): State<App>,
    Extension(target): Extension<Target>,
    RawQuery(query): RawQuery,
) -> Response {
    let engine = app.engine.clone();
    let listed = async move {
        let q = pairs(&query)?;
        let filter = crate::auth::audit::Filter::asked(
            param(&q, "client"),
            param(&q, "path"),
            param(&q, "since"),
            param(&q, "limit"),
        )?;
        blocking(move || tools::audit(&*engine, &target, filter)).await
    };
    finish(listed.await.map(|rows| json_body(wire::audit(&rows))))
}

/// `GET /frontmatter?key=&value=[&dir=]`: `[{"filename"}]`, sorted by path.
pub(super) async fn frontmatter_route(
    State(app): State<App>,
    Extension(target): Extension<Target>,
    RawQuery(query): RawQuery,
) -> Response {
    let q = match pairs(&query) {
        Ok(q) => q,
        Err(e) => return refusal(&e),
    };
    let (Some(key), Some(value)) = (param(&q, "key"), param(&q, "value")) else {
        return refusal(&bad(
            "the frontmatter query needs key and value, e.g. /frontmatter?key=status&value=active \
             (value may be empty: value=)",
        ));
    };
    let a = tools::FrontmatterQueryArgs {
        vault: None,
        key: key.to_string(),
        value: value.to_string(),
        dir: param(&q, "dir").map(str::to_string),
    };
    let engine = app.engine.clone();
    finish(
        blocking(move || tools::frontmatter_query(&engine, &target, a))
            .await
            .map(|paths| json_body(wire::frontmatter_matches(&paths))),
    )
}

/// `GET /grep?pattern=...[&regex][&ignore_case][&dir=][&limit=N][&offset=N]`.
pub(super) async fn grep_route(
    State(app): State<App>,
    Extension(target): Extension<Target>,
    RawQuery(query): RawQuery,
) -> Response {
    finish(
        async {
            let q = pairs(&query)?;
            let number = |name: &str| -> Result<Option<usize>> {
                match param(&q, name).map(str::trim).filter(|s| !s.is_empty()) {
                    None => Ok(None),
                    Some(s) => s
                        .parse()
                        .map(Some)
                        .map_err(|_| bad(format!("{name} must be a whole number, not {s}"))),
                }
            };
            let a = tools::GrepArgs {
                vault: None,
                pattern: param(&q, "pattern")
                    .ok_or_else(|| bad("name the text to find: ?pattern=..."))?
                    .to_string(),
                regex: flag(&q, "regex"),
                ignore_case: flag(&q, "ignore_case"),
                dir: param(&q, "dir").map(str::to_string),
                limit: number("limit")?,
                offset: number("offset")?.unwrap_or(0),
            };
            let engine = app.engine.clone();
            blocking(move || tools::grep(&engine, &target, a))
                .await
                .map(|r| json_body(wire::grep(&r)))
        }
        .await,
    )
}

/// `GET /links/{path}`: a note's outgoing links and its backlinks.
pub(super) async fn links_route(
    State(app): State<App>,
    Extension(target): Extension<Target>,
    uri: Uri,
) -> Response {
    finish(
        async {
            let path = tail(&uri, "/links")?;
            let a = tools::LinksArgs { vault: None, path };
            let engine = app.engine.clone();
            blocking(move || tools::links(&engine, &target, a))
                .await
                .map(|r| json_body(wire::links(&r)))
        }
        .await,
    )
}

/// `GET /expiries[?within=N][&untracked=1][&dir=]`.
pub(super) async fn expiries_route(
    State(app): State<App>,
    Extension(target): Extension<Target>,
    RawQuery(query): RawQuery,
) -> Response {
    let q = match pairs(&query) {
        Ok(q) => q,
        Err(e) => return refusal(&e),
    };
    // An empty `within=` (a flow whose field was left blank) means no limit, as it always has;
    // the contract documents it.
    let within = match param(&q, "within").map(str::trim).filter(|s| !s.is_empty()) {
        None => None,
        Some(s) => match s.parse::<i64>() {
            Ok(n) => Some(n),
            Err(_) => {
                return refusal(&bad(format!(
                    "within must be a whole number of days, not {s:?}; leave it out for every \
                     date (lapsed dates are always included)"
                )));
            }
        },
    };
    let a = tools::ExpiriesArgs {
        vault: None,
        within,
        untracked: flag(&q, "untracked"),
        dir: param(&q, "dir").map(str::to_string),
    };
    let engine = app.engine.clone();
    finish(
        blocking(move || tools::expiries(&engine, &target, a))
            .await
            .map(|r| json_body(wire::expiries(&r, within))),
    )
}

/// `GET|POST /callouts[?dir=]`.
pub(super) async fn callouts_route(
    State(app): State<App>,
    Extension(target): Extension<Target>,
    RawQuery(query): RawQuery,
) -> Response {
    let q = match pairs(&query) {
        Ok(q) => q,
        Err(e) => return refusal(&e),
    };
    let a = tools::CalloutsArgs { vault: None, dir: param(&q, "dir").map(str::to_string) };
    let engine = app.engine.clone();
    let started = Instant::now();
    finish(
        blocking(move || {
            let name = engine.vaults().get(target.vault.as_deref())?.name().to_string();
            let open = engine.config().callouts.open_types.clone();
            tools::callouts(&engine, &target, a).map(|r| (name, open, r))
        })
        .await
        .map(|(name, open, r)| {
            json_body(wire::callouts(&name, &open, &r, started.elapsed().as_millis() as u64))
        }),
    )
}

/// `GET|POST /maintenance`: every check's findings and one Markdown rendering of them. 200
/// whatever the findings say; only a run that itself breaks is a 500.
pub(super) async fn maintenance_route(
    State(app): State<App>,
    Extension(target): Extension<Target>,
) -> Response {
    let engine = app.engine.clone();
    finish(
        blocking(move || tools::maintenance(&engine, &target, None))
            .await
            .map(|run| json_body(wire::maintenance(&run))),
    )
}

/// `GET /maintenance/checks`: the declarations, nothing run.
pub(super) async fn checks_route(
    State(app): State<App>,
    Extension(target): Extension<Target>,
) -> Response {
    let engine = app.engine.clone();
    finish(
        blocking(move || tools::checks(&engine, &target, None))
            .await
            .map(|checks| json_body(wire::checks(&checks))),
    )
}
