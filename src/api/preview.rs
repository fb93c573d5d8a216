//! What an MCP client sees of an attachment: a raster image decoded, scaled down to a bound and
//! sent as an image; anything else (an SVG, audio, video, an image format not decoded here) a
//! sentence saying what it is. The one rule for that choice is [`preview`]; [`content`] makes it
//! the tool's answer (rmcp's image content: base64 and a `mimeType`).

use base64::Engine as _;
use image::ImageFormat;
use rmcp::model::{CallToolResult, ContentBlock};

use super::scale::Fitted;
use crate::engine::Engine;
use crate::error::{Error, ErrorCode, Result};
use crate::service::{self as tools, Target};
use crate::vault::attachment::{
    AttachmentKind, AttachmentRead, AttachmentType, Opened, Span, SpanRead,
};

/// The longest side, in pixels, of an image sent to a model: vision models scale larger images
/// down to about this themselves (and bill them by the tile), so more pixels only cost base64
/// bytes in the context; a screenshot's or photo's text stays legible at this size.
pub(crate) const MAX_SIDE: u32 = 1024;

/// What to send for an attachment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Preview {
    /// An image within [`MAX_SIDE`], encoded as `media_type`.
    Image {
        /// The encoded image.
        bytes: Vec<u8>,
        /// `image/png`, `image/jpeg`, or the source's own type when it was sent unchanged.
        media_type: &'static str,
        /// A sentence naming the file, its size and what was done to it.
        caption: String,
    },
    /// No image: a sentence saying what the file is.
    Described(String),
}

/// `vault_read` of an attachment: opened through the gate and [`preview`]ed. Only an image is
/// read into memory (the decoder's limits bound what it may allocate); audio, video and the
/// rest are described from their length and hash, which is read through without being held.
/// Decoding and scaling are CPU work: the caller runs this on a blocking thread, as it does
/// the read.
pub(crate) fn read(e: &Engine, t: &Target, a: tools::ReadArgs) -> Result<Preview> {
    let (path, kind, etag, body) = opened(e, t, a.vault.as_deref(), &a.path)?;
    match not_shown(kind.kind) {
        Some(why) => Ok(described(&path, kind, body.len, &etag, why)),
        None => {
            let bytes = body.into_bytes().map_err(|e| Error::read_io(&path, &e))?;
            Ok(preview(&AttachmentRead { path, bytes, kind, etag }))
        }
    }
}

/// `?original`: an attachment's bytes as they are.
pub(crate) fn original(
    e: &Engine,
    t: &Target,
    vault: Option<&str>,
    path: &str,
) -> Result<AttachmentRead> {
    let (path, kind, etag, body) = opened(e, t, vault, path)?;
    let bytes = body.into_bytes().map_err(|e| Error::read_io(&path, &e))?;
    Ok(AttachmentRead { path, bytes, kind, etag })
}

/// An attachment opened whole through the gate: its path, type, hash (read through once, not
/// held) and the open file.
fn opened(
    e: &Engine,
    t: &Target,
    vault: Option<&str>,
    path: &str,
) -> Result<(String, AttachmentType, String, Opened)> {
    match tools::read_attachment_span(e, t, vault, path, |_| Span::Whole)? {
        SpanRead::Whole { path, kind, etag, body, .. } => Ok((path, kind, etag, body)),
        _ => Err(Error::new(ErrorCode::InternalError, "a whole read came back in part")),
    }
}

/// Whether a preview of `path` decodes an image (and so waits for a turn in
/// `limits::Images`): a raster image does; every other attachment is described.
pub(crate) fn decodes(path: &str) -> bool {
    crate::vault::attachment::kind_of(path).is_some_and(|k| not_shown(k.kind).is_none())
}

/// Why a kind of attachment is never sent as an image, or `None` for a raster image.
fn not_shown(kind: AttachmentKind) -> Option<&'static str> {
    match kind {
        AttachmentKind::Image => None,
        // An SVG can carry script and needs a renderer: never decoded here.
        AttachmentKind::Vector => Some("an SVG is not rendered here"),
        AttachmentKind::Audio => Some("audio is not sent here"),
        AttachmentKind::Video => Some("video is not sent here"),
    }
}

/// The sentence that stands for an attachment not sent as an image.
fn described(path: &str, kind: AttachmentType, len: u64, etag: &str, why: &str) -> Preview {
    Preview::Described(format!(
        "{path} is an attachment ({}, {len} bytes, etag {etag}); {why}",
        kind.media_type
    ))
}

/// A preview as tool content: the caption and the image (base64), or the description.
pub(crate) fn content(p: Preview) -> CallToolResult {
    match p {
        Preview::Image { bytes, media_type, caption } => {
            let data = base64::engine::general_purpose::STANDARD.encode(bytes);
            CallToolResult::success(vec![
                ContentBlock::text(caption),
                ContentBlock::image(data, media_type),
            ])
        }
        Preview::Described(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
    }
}

/// The preview of an attachment: a raster image this build decodes becomes an image whose
/// longest side is at most [`MAX_SIDE`] (sent unchanged when it already fits); everything else,
/// and an image that does not decode, is described.
pub(crate) fn preview(a: &AttachmentRead) -> Preview {
    let described = |why: &str| described(&a.path, a.kind, a.bytes.len() as u64, &a.etag, why);
    if let Some(why) = not_shown(a.kind.kind) {
        return described(why);
    }
    let format = ImageFormat::from_mime_type(a.kind.media_type);
    let Some(format) = format.filter(|f| f.reading_enabled()) else {
        return described("this image format is not decoded here");
    };
    let square = super::scale::Bound { width: MAX_SIDE, height: MAX_SIDE };
    match super::scale::fit(&a.bytes, format, square) {
        Ok(Fitted::Fits { width, height }) => Preview::Image {
            bytes: a.bytes.clone(),
            media_type: a.kind.media_type,
            caption: format!("{}: {width}x{height} pixels, etag {}", a.path, a.etag),
        },
        Ok(Fitted::Shrunk { bytes, media_type, from, to }) => Preview::Image {
            bytes,
            media_type,
            caption: format!(
                "{}: {}x{} pixels, shown scaled down to {}x{}, etag {}",
                a.path, from.0, from.1, to.0, to.1, a.etag
            ),
        },
        Err(e) => described(&format!("it could not be decoded as an image ({e})")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vault::attachment::kind_of;
    use image::DynamicImage;
    use std::io::Cursor;

    fn attachment(path: &str, bytes: Vec<u8>) -> AttachmentRead {
        AttachmentRead {
            path: path.into(),
            etag: crate::vault::content_hash(&bytes),
            kind: kind_of(path).unwrap(),
            bytes,
        }
    }

    fn png(width: u32, height: u32) -> Vec<u8> {
        let img = image::RgbaImage::from_fn(width, height, |x, y| {
            image::Rgba([(x % 256) as u8, (y % 256) as u8, 128, 255])
        });
        let mut out = Cursor::new(Vec::new());
        DynamicImage::ImageRgba8(img).write_to(&mut out, ImageFormat::Png).unwrap();
        out.into_inner()
    }

    fn decoded(bytes: &[u8]) -> DynamicImage {
        image::load_from_memory(bytes).unwrap()
    }

    #[test]
    fn a_large_png_is_scaled_to_the_bound_keeping_its_aspect_ratio() {
        let Preview::Image { bytes, media_type, caption } =
            preview(&attachment("Home/big.png", png(3000, 1500)))
        else {
            panic!("not an image")
        };
        assert_eq!(media_type, "image/png");
        let img = decoded(&bytes);
        assert_eq!((img.width(), img.height()), (MAX_SIDE, MAX_SIDE / 2));
        assert!(caption.contains("3000x1500") && caption.contains("1024x512"), "{caption}");
        // A tall one is bounded by its height.
        let Preview::Image { bytes, .. } = preview(&attachment("tall.png", png(600, 2400))) else {
            panic!("not an image")
        };
        let img = decoded(&bytes);
        assert_eq!((img.width(), img.height()), (256, MAX_SIDE));
    }

    #[test]
    fn a_large_jpeg_stays_jpeg_and_a_small_image_is_sent_as_it_is() {
        let img = DynamicImage::ImageRgb8(image::RgbImage::new(2048, 1024));
        let mut jpeg = Cursor::new(Vec::new());
        img.write_to(&mut jpeg, ImageFormat::Jpeg).unwrap();
        let Preview::Image { bytes, media_type, .. } =
            preview(&attachment("photo.JPG", jpeg.into_inner()))
        else {
            panic!("not an image")
        };
        assert_eq!(media_type, "image/jpeg");
        assert_eq!(decoded(&bytes).width(), MAX_SIDE);
        let small = png(40, 30);
        let p = preview(&attachment("icon.png", small.clone()));
        assert!(matches!(p, Preview::Image { ref bytes, .. } if *bytes == small), "{p:?}");
    }

    #[test]
    fn an_svg_audio_video_or_undecodable_image_is_described_not_sent() {
        for (path, says) in [
            ("a.svg", "SVG"),
            ("a.mp3", "audio"),
            ("a.mp4", "video"),
            ("a.bmp", "not decoded here"),
            ("a.png", "could not be decoded"),
        ] {
            let Preview::Described(text) = preview(&attachment(path, b"<svg/>".to_vec())) else {
                panic!("{path} was sent as an image")
            };
            assert!(text.starts_with(path) && text.contains(says), "{path}: {text}");
        }
    }
}
