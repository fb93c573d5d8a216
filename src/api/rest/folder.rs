//! `/folder/<path>`: a folder's listing, its creation and its removal.

use axum::extract::{Extension, RawQuery, State};
use axum::http::{HeaderMap, Method, Uri};
use axum::response::Response;

use super::{App, finish, method_not_allowed, refusal};
use crate::api::common::{
    blocking, change_response, flag, json_body, pairs, tail, text, wants_json,
};
use crate::service::{self as tools, Target};
use crate::wire;

/// `/folder/<path>`: GET lists, PUT creates (with parents), DELETE removes.
pub(super) async fn folder_route(
    State(app): State<App>,
    Extension(target): Extension<Target>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    let q = match pairs(&query) {
        Ok(q) => q,
        Err(e) => return refusal(&e),
    };
    let path = match tail(&uri, "/folder") {
        Ok(p) => p,
        Err(e) => return refusal(&e),
    };
    let engine = app.engine.clone();
    finish(match method.as_str() {
        "GET" | "HEAD" => {
            async {
                let a = tools::ListArgs { vault: None, path };
                let l = blocking(move || tools::list(&engine, &target, a)).await?;
                Ok(if wants_json(&headers) {
                    json_body(wire::listing(&l))
                } else {
                    text(l.render())
                })
            }
            .await
        }
        "PUT" => {
            async {
                let a = tools::CreateFolderArgs { vault: None, path };
                Ok(change_response(
                    &headers,
                    blocking(move || tools::create_folder(&engine, &target, a)).await?,
                ))
            }
            .await
        }
        "DELETE" => {
            async {
                let a =
                    tools::DeleteFolderArgs { vault: None, path, recursive: flag(&q, "recursive") };
                Ok(change_response(
                    &headers,
                    blocking(move || tools::delete_folder(&engine, &target, a)).await?,
                ))
            }
            .await
        }
        _ => return method_not_allowed(&method, "GET, PUT, DELETE"),
    })
}
