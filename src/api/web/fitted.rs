//! A note's images at the size the page shows them: `/ui/attachment?...&fit=N` answers a
//! photo scaled to at most `N` pixels wide (turned upright, `api::scale`), so a phone that shows
//! a note of camera photos fetches hundreds of kilobytes each, not the several megabytes of the
//! original. [`rung`] is the one rule for which width the page asks for; the original stays a
//! tap away (the image links to it). Only JPEG, PNG and WebP are fitted: an animated GIF, an
//! SVG, a format this build does not decode and a file past [`MAX_FITTED_BYTES`] are answered
//! as they are.

use std::sync::Arc;

use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use image::ImageFormat;

use crate::api::limits::Images;
use crate::api::scale::{self, Bound, Fitted};
use crate::engine::Engine;
use crate::error::{Error, ErrorCode, Result};
use crate::service::{self as tools, Target};
use crate::vault::attachment::{self, AttachmentType, Extent, Opened, Span, SpanRead};

/// The widths the page asks for, in pixels. An image shown `w` CSS pixels wide gets the first
/// rung of at least twice that (a phone's screen has two or three pixels to a CSS pixel), and
/// one shown at the column's width the last: 1,600 covers a phone's whole width at three
/// pixels to one and the page's 1,100-pixel column on a desktop. A 12-megapixel phone photo
/// (4.9 MB) is sent as 336 KB at 1,600, made in 0.21-0.28 s here; at 2,048 it was 539 KB in
/// 0.46 s, the scale no longer a halving.
const RUNGS: [u32; 4] = [320, 640, 1024, 1600];

/// The longest file fitted: a photo is a few megabytes, and a longer file (a scan of
/// gigapixels, a RAW export) is sent as it is rather than held in memory to decode.
const MAX_FITTED_BYTES: u64 = 32 * 1024 * 1024;

/// The most pixels wide a caller may ask for: past it an image is better fetched as it is.
const MAX_FIT: u32 = 16_384;

/// The width to fit an image to that the page shows `shown` CSS pixels wide (`![[a.png|300]]`),
/// or at most the column's width when no width is given; `None` when even the last rung would
/// be too small, so the original is shown.
pub(crate) fn rung(shown: Option<u32>) -> Option<u32> {
    match shown {
        None => RUNGS.last().copied(),
        Some(w) => RUNGS.iter().copied().find(|r| *r >= w.saturating_mul(2)),
    }
}

/// The answer to `fit` (see [`prepare`]): the read and the `If-None-Match` check on a blocking
/// thread of their own, and only the decoding in one of the server's image turns
/// ([`Images`]). A phone that opens a note again revalidates each of its photos, and each 304
/// costs no decoding, so it must not wait behind other clients' decodes for a turn.
pub(super) async fn answer_in_turn(
    images: &Images,
    engine: Arc<Engine>,
    vault: Option<String>,
    path: String,
    width: u32,
    request: HeaderMap,
) -> Result<Option<Response>> {
    let prepared = crate::api::common::blocking(move || {
        prepare(&engine, vault.as_deref(), &path, width, &request)
    })
    .await?;
    match prepared {
        Prepared::NotFitted => Ok(None),
        Prepared::Unchanged(resp) => Ok(Some(resp)),
        Prepared::ToFit(fit) => images.run(move || fit.answer()).await.map(Some),
    }
}

/// The `fit` a request asks for: a width in pixels, 1 to [`MAX_FIT`].
pub(super) fn asked(fit: Option<&str>) -> Result<Option<u32>> {
    let Some(fit) = fit.map(str::trim) else { return Ok(None) };
    match fit.parse::<u32>() {
        Ok(n) if (1..=MAX_FIT).contains(&n) => Ok(Some(n)),
        _ => Err(Error::new(
            ErrorCode::InvalidRequest,
            format!(
                "fit is a width in pixels from 1 to {MAX_FIT}, not '{fit}'; leave it out for the image as it is"
            ),
        )),
    }
}

/// How far a `fit` request gets before its turn.
enum Prepared {
    /// Not a file this fits: the caller answers it as it is.
    NotFitted,
    /// A 304: `If-None-Match` holds the fitted image's tag.
    Unchanged(Response),
    /// An image to decode and scale, in a turn.
    ToFit(ToFit),
}

/// A whole read of an image to fit, with its format and the fitted answer's tag.
struct ToFit {
    path: String,
    kind: AttachmentType,
    extent: Extent,
    body: Opened,
    format: ImageFormat,
    width: u32,
    tag: String,
}

/// Reads what a `fit` request names and answers what needs no decoding. The fitted image's tag
/// is the original's hash and the width, so a 304 costs no decoding (and no read of the file
/// once its hash is remembered, `vault/known_hashes.rs`).
fn prepare(
    engine: &Engine,
    vault: Option<&str>,
    path: &str,
    width: u32,
    request: &HeaderMap,
) -> Result<Prepared> {
    // The suffix says the format, so a file this never fits is not read through for nothing.
    let format = match attachment::kind_of(path).map(|k| k.media_type) {
        Some("image/jpeg") => ImageFormat::Jpeg,
        Some("image/png") => ImageFormat::Png,
        Some("image/webp") => ImageFormat::WebP,
        _ => return Ok(Prepared::NotFitted),
    };
    let read =
        tools::read_attachment_span(engine, &Target::default(), vault, path, |_| Span::Whole)?;
    let SpanRead::Whole { path, kind, extent, etag, body } = read else {
        return Err(Error::new(ErrorCode::InternalError, "a whole read came back in part"));
    };
    if body.len > MAX_FITTED_BYTES {
        return Ok(Prepared::NotFitted);
    }
    let tag = format!("{etag}-fit{width}");
    if crate::api::common::none_match(request, &format!("\"{tag}\"")) {
        let mut resp =
            crate::api::common::with_etag(StatusCode::NOT_MODIFIED.into_response(), Some(&tag));
        crate::api::ranges::last_modified(&mut resp, &extent);
        return Ok(Prepared::Unchanged(resp));
    }
    Ok(Prepared::ToFit(ToFit { path, kind, extent, body, format, width, tag }))
}

impl ToFit {
    /// The image at most `width` pixels wide, or the original bytes when it is narrower
    /// already or not decodable here. CPU work: run in a turn.
    fn answer(self) -> Result<Response> {
        let ToFit { path, kind, extent, body, format, width, tag } = self;
        let bytes = body.into_bytes().map_err(|e| Error::read_io(&path, &e))?;
        let bound = Bound { width, height: u32::MAX };
        let resp = match scale::fit(&bytes, format, bound) {
            Ok(Fitted::Shrunk { bytes, media_type, .. }) => {
                ([(header::CONTENT_TYPE, media_type)], bytes).into_response()
            }
            // Narrow enough already, or not decodable here: the file as it is, which the
            // browser shows (or not) as it would the original.
            Ok(Fitted::Fits { .. }) | Err(_) => {
                ([(header::CONTENT_TYPE, kind.media_type)], bytes).into_response()
            }
        };
        let mut resp = crate::api::common::with_etag(resp, Some(&tag));
        crate::api::ranges::last_modified(&mut resp, &extent);
        Ok(resp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_image_is_fetched_at_twice_its_shown_width_rounded_up_to_a_rung() {
        assert_eq!(rung(None), Some(1600));
        assert_eq!(rung(Some(100)), Some(320));
        assert_eq!(rung(Some(300)), Some(640));
        assert_eq!(rung(Some(320)), Some(640));
        assert_eq!(rung(Some(800)), Some(1600));
        // Wider than the last rung shows: the original.
        assert_eq!(rung(Some(801)), None);
    }

    #[test]
    fn fit_is_a_width_in_pixels_or_refused_saying_so() {
        assert_eq!(asked(None).unwrap(), None);
        assert_eq!(asked(Some("640")).unwrap(), Some(640));
        for bad in ["0", "-5", "wide", "99999", ""] {
            let e = asked(Some(bad)).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidRequest, "{bad}");
            assert!(e.message().contains("width in pixels"), "{bad}: {}", e.message());
        }
    }

    #[tokio::test]
    async fn a_fitted_images_revalidation_is_answered_while_every_image_turn_is_taken() {
        let f = crate::engine::fixture::Vaults::new(&[("v", &[("Note.md", "# Note\n")])]);
        let photo = image::RgbImage::from_fn(800, 600, |x, y| image::Rgb([x as u8, y as u8, 90]));
        photo.save(f.roots[0].path().join("photo.png")).unwrap();
        let engine = Arc::new(f.engine());
        let images = Images::new(1);
        let ask = |headers: HeaderMap| {
            answer_in_turn(&images, engine.clone(), None, "photo.png".into(), 320, headers)
        };
        let first = ask(HeaderMap::new()).await.unwrap().expect("a PNG is fitted");
        assert_eq!(first.status(), StatusCode::OK);
        let tag = first.headers()[header::ETAG].clone();

        // Another client's decode holds the only turn until told to end.
        let (started, turn_taken) = tokio::sync::oneshot::channel();
        let (end, ended) = std::sync::mpsc::channel::<()>();
        let holder = images.clone();
        let held = tokio::spawn(async move {
            holder
                .run(move || {
                    let _ = started.send(());
                    let _ = ended.recv();
                    Ok(())
                })
                .await
        });
        turn_taken.await.unwrap();

        let mut again = HeaderMap::new();
        again.insert(header::IF_NONE_MATCH, tag.clone());
        let answer = tokio::time::timeout(std::time::Duration::from_secs(10), ask(again))
            .await
            .expect("the 304 waited for an image turn");
        let answer = answer.unwrap().unwrap();
        assert_eq!(answer.status(), StatusCode::NOT_MODIFIED);
        assert_eq!(answer.headers()[header::ETAG], tag);
        end.send(()).unwrap();
        held.await.unwrap().unwrap();
    }
}
