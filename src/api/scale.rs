//! An image made smaller for a reader: decoded under limits (a small file can declare an
//! enormous canvas), turned upright as its EXIF orientation says (a phone stores a portrait
//! photo on its side and a flag saying so, which a re-encoded copy would lose), scaled to fit a
//! box keeping its aspect ratio, and encoded again with its colour profile. The one rule for
//! both MCP's preview (`api::preview`, a 1024-pixel square) and the page's fitted images (a
//! width, `api::web`).

use std::io::Cursor;

use image::codecs::jpeg::JpegEncoder;
use image::codecs::png::PngEncoder;
use image::{DynamicImage, ImageDecoder, ImageEncoder, ImageFormat, ImageReader, Limits};

/// The widest or tallest image decoded at all: a small file can declare an enormous canvas
/// (a decompression bomb), and the decoder refuses one past this before allocating it.
const MAX_DECODED_SIDE: u32 = 16_384;

/// The most memory one decode may take (a 16k square RGBA is 1 GiB, so this is the binding
/// limit for large images): enough for a 64-megapixel photo.
const MAX_DECODE_BYTES: u64 = 256 * 1024 * 1024;

/// JPEG quality for a scaled-down photo: the usual web default, visually lossless at this size.
const JPEG_QUALITY: u8 = 85;

/// The box an image must fit in, in pixels, as it is shown (upright).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Bound {
    pub(crate) width: u32,
    pub(crate) height: u32,
}

/// An image after [`fit`].
#[derive(Debug)]
pub(crate) enum Fitted {
    /// Within the bound already, upright: the source bytes do, and a browser or model turns
    /// them as their EXIF says.
    Fits { width: u32, height: u32 },
    /// Turned upright, scaled down and re-encoded.
    Shrunk { bytes: Vec<u8>, media_type: &'static str, from: (u32, u32), to: (u32, u32) },
}

/// Decodes `bytes` (under the decode limits) and, when the upright image passes `bound`, scales
/// it to fit, keeping its aspect ratio, and re-encodes it: a photo (a JPEG, or a WebP without
/// transparency) as JPEG, since PNG would be several times larger; anything else as PNG,
/// lossless and keeping alpha. The colour profile goes with it, so a wide-gamut photo keeps
/// its colours.
pub(crate) fn fit(bytes: &[u8], format: ImageFormat, bound: Bound) -> image::ImageResult<Fitted> {
    let mut reader = ImageReader::with_format(Cursor::new(bytes), format);
    let mut limits = Limits::default();
    limits.max_image_width = Some(MAX_DECODED_SIDE);
    limits.max_image_height = Some(MAX_DECODED_SIDE);
    limits.max_alloc = Some(MAX_DECODE_BYTES);
    reader.limits(limits);
    let mut decoder = reader.into_decoder()?;
    // Metadata that cannot be read is no reason to show nothing: the image is shown as stored.
    let orientation = decoder.orientation().unwrap_or(image::metadata::Orientation::NoTransforms);
    let icc = decoder.icc_profile().ok().flatten();
    let mut image = DynamicImage::from_decoder(decoder)?;
    image.apply_orientation(orientation);
    let from = (image.width(), image.height());
    if from.0 <= bound.width && from.1 <= bound.height {
        return Ok(Fitted::Fits { width: from.0, height: from.1 });
    }
    let small = shrunk(&image, bound);
    let to = (small.width(), small.height());
    let photo = format == ImageFormat::Jpeg || (format == ImageFormat::WebP && !has_alpha(&small));
    let mut out = Vec::new();
    let media_type = if photo {
        let mut encoder = JpegEncoder::new_with_quality(&mut out, JPEG_QUALITY);
        if let Some(icc) = icc {
            // A profile the encoder will not carry leaves the colours as sRGB would show them.
            let _ = encoder.set_icc_profile(icc);
        }
        DynamicImage::ImageRgb8(small.to_rgb8()).write_with_encoder(encoder)?;
        "image/jpeg"
    } else {
        let mut encoder = PngEncoder::new(&mut out);
        if let Some(icc) = icc {
            let _ = encoder.set_icc_profile(icc);
        }
        small.write_with_encoder(encoder)?;
        "image/png"
    };
    Ok(Fitted::Shrunk { bytes: out, media_type, from, to })
}

/// `image` scaled into `bound`, keeping its aspect ratio. At half the size or less (a photo
/// for a page or a model), an area average, which each source pixel enters once; nearer its own
/// size, where an area average would alias, the triangle filter. On a 12-megapixel photo fitted
/// to 2,016 pixels, the whole answer (decode, scale, encode) took 0.29-0.32 s by area and
/// 0.42-0.48 s by triangle here: decoding and encoding are the rest.
fn shrunk(image: &DynamicImage, bound: Bound) -> DynamicImage {
    let (w, h) = (image.width(), image.height());
    let halved =
        u64::from(w) >= 2 * u64::from(bound.width) || u64::from(h) >= 2 * u64::from(bound.height);
    if halved {
        image.thumbnail(bound.width, bound.height)
    } else {
        image.resize(bound.width, bound.height, image::imageops::FilterType::Triangle)
    }
}

fn has_alpha(image: &DynamicImage) -> bool {
    image.color().has_alpha()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SQUARE: Bound = Bound { width: 1024, height: 1024 };

    fn decoded(bytes: &[u8]) -> DynamicImage {
        image::load_from_memory(bytes).unwrap()
    }

    /// A JPEG of `width` x `height`, left half red and right half blue, with EXIF saying how
    /// to turn it (`orientation`, 1 to 8) when given.
    fn jpeg(width: u32, height: u32, orientation: Option<u16>) -> Vec<u8> {
        let img = image::RgbImage::from_fn(width, height, |x, _| {
            if x < width / 2 { image::Rgb([255, 0, 0]) } else { image::Rgb([0, 0, 255]) }
        });
        let mut out = Vec::new();
        let mut encoder = JpegEncoder::new_with_quality(&mut out, 90);
        if let Some(o) = orientation {
            // A little-endian TIFF header and one IFD entry: Orientation (0x0112), SHORT, 1.
            let mut exif = b"II*\0\x08\0\0\0\x01\0\x12\x01\x03\0\x01\0\0\0".to_vec();
            exif.extend_from_slice(&o.to_le_bytes());
            exif.extend_from_slice(&[0, 0, 0, 0, 0, 0]);
            encoder.set_exif_metadata(exif).unwrap();
        }
        DynamicImage::ImageRgb8(img).write_with_encoder(encoder).unwrap();
        out
    }

    #[test]
    fn a_phone_photo_stored_on_its_side_is_turned_upright_before_it_is_scaled() {
        // Stored 2000 wide and 1000 tall, shown turned 90° clockwise (EXIF 6): 1000 x 2000.
        let Fitted::Shrunk { bytes, media_type, from, to } =
            fit(&jpeg(2000, 1000, Some(6)), ImageFormat::Jpeg, SQUARE).unwrap()
        else {
            panic!("not scaled")
        };
        assert_eq!((media_type, from, to), ("image/jpeg", (1000, 2000), (512, 1024)));
        let shown = decoded(&bytes).to_rgb8();
        assert_eq!((shown.width(), shown.height()), (512, 1024));
        // The stored left half (red) is now the top.
        let (top, bottom) = (shown.get_pixel(256, 100), shown.get_pixel(256, 900));
        assert!(top[0] > 200 && top[2] < 60, "top {top:?}");
        assert!(bottom[2] > 200 && bottom[0] < 60, "bottom {bottom:?}");
        // Upright, it may fit where the stored shape would not: then the bytes stay.
        let tall = Bound { width: 1000, height: 2000 };
        let r = fit(&jpeg(2000, 1000, Some(6)), ImageFormat::Jpeg, tall).unwrap();
        assert!(matches!(r, Fitted::Fits { width: 1000, height: 2000 }), "{r:?}");
    }

    #[test]
    fn a_width_alone_bounds_a_page_image_and_a_photo_stays_jpeg() {
        let wide = Bound { width: 800, height: u32::MAX };
        let Fitted::Shrunk { media_type, to, .. } =
            fit(&jpeg(3200, 2400, None), ImageFormat::Jpeg, wide).unwrap()
        else {
            panic!("not scaled")
        };
        assert_eq!((media_type, to), ("image/jpeg", (800, 600)));
        let r = fit(&jpeg(640, 4000, None), ImageFormat::Jpeg, wide).unwrap();
        assert!(matches!(r, Fitted::Fits { width: 640, height: 4000 }), "{r:?}");
    }
}
