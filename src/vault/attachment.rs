//! Attachments: the images, audio and video a vault's notes embed (`![[boiler.png]]`), which
//! mdvault serves read-only.
//!
//! [`kind_of`] is the one rule for which names are attachments and what media type they are
//! served as; the gate ([`super::path::gate`]) asks it to let [`Access::ReadAttachment`](super::path::Access::ReadAttachment)
//! through and to refuse every write of one (`attachment_read_only`), and the surfaces ask it
//! which answer an attachment gets. `Vault::read_attachment_span` (in `ops/read.rs`) is the
//! one read.

/// What sort of attachment a file is: decides how a surface that cannot send the bytes as they
/// are (MCP) shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AttachmentKind {
    /// A raster image: MCP sends it as an image, scaled down.
    Image,
    /// An SVG: an image that can carry script, so never decoded nor sent as an image.
    Vector,
    /// Audio.
    Audio,
    /// Video.
    Video,
}

/// One attachment suffix: its media type and kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AttachmentType {
    /// The media type the file is served as.
    pub(crate) media_type: &'static str,
    /// How a surface that cannot send the bytes shows it.
    pub(crate) kind: AttachmentKind,
}

/// Obsidian's accepted image, audio and video formats (its help's "Accepted file formats"),
/// lowercase without the dot. PDF is a document (filed and extracted), `.canvas` and `.base`
/// are Obsidian's own files with their own model (a later slice), and other files (`.txt`,
/// `.json`) are not attachments Obsidian shows, so none of those are here. `.webm` is listed
/// by Obsidian as both audio and video; it is served as video, which a player of either takes.
const ATTACHMENTS: &[(&str, &str, AttachmentKind)] = {
    use AttachmentKind::{Audio, Image, Vector, Video};
    &[
        ("avif", "image/avif", Image),
        ("bmp", "image/bmp", Image),
        ("gif", "image/gif", Image),
        ("jpeg", "image/jpeg", Image),
        ("jpg", "image/jpeg", Image),
        ("png", "image/png", Image),
        ("webp", "image/webp", Image),
        ("svg", "image/svg+xml", Vector),
        ("flac", "audio/flac", Audio),
        ("m4a", "audio/mp4", Audio),
        ("mp3", "audio/mpeg", Audio),
        ("ogg", "audio/ogg", Audio),
        ("wav", "audio/wav", Audio),
        ("3gp", "audio/3gpp", Audio),
        ("webm", "video/webm", Video),
        ("mkv", "video/x-matroska", Video),
        ("mov", "video/quicktime", Video),
        ("mp4", "video/mp4", Video),
        ("ogv", "video/ogg", Video),
    ]
};

/// The attachment type of a file name (case-insensitive suffix), or `None` when it is not an
/// attachment.
pub(crate) fn kind_of(name: &str) -> Option<AttachmentType> {
    let (stem, ext) = name.rsplit_once('.')?;
    if stem.is_empty() || stem.ends_with('/') {
        return None;
    }
    ATTACHMENTS
        .iter()
        .find(|(s, _, _)| ext.eq_ignore_ascii_case(s))
        .map(|&(_, media_type, kind)| AttachmentType { media_type, kind })
}

/// The attachment suffixes, for messages (`.png, .jpg, ...`).
pub(crate) fn suffix_list() -> String {
    ATTACHMENTS.iter().map(|(s, _, _)| format!(".{s}")).collect::<Vec<_>>().join(", ")
}

/// An attachment as read: its bytes, as they are on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AttachmentRead {
    /// Vault-relative path.
    pub(crate) path: String,
    /// The file's bytes.
    pub(crate) bytes: Vec<u8>,
    /// Its type, from its suffix.
    pub(crate) kind: AttachmentType,
    /// sha256 of the bytes.
    pub(crate) etag: String,
}

/// What an attachment's file is, before any of its bytes are read: what a caller's choice of
/// bytes ([`Span`]) is made against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Extent {
    /// Its length in bytes.
    pub(crate) total: u64,
    /// When it was last modified, where the file system says.
    pub(crate) modified: Option<std::time::SystemTime>,
}

/// Which bytes of an attachment a caller wants, chosen once its [`Extent`] is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Span {
    /// All of it.
    Whole,
    /// These bytes, first and last included.
    Bytes(std::ops::RangeInclusive<u64>),
    /// None: the caller asked for bytes past the end.
    Beyond,
    /// `then` if the file's bytes hash to `etag` (a player resuming the copy it holds, with
    /// `If-Range`), else all of it: the hash is known only once the file is read through.
    IfTagged { etag: String, then: Box<Span> },
}

/// Bytes of an attachment still to be read: its file, opened once through the gate and placed
/// at the first of them, and how many follow. A surface sends them as it reads them, so a video
/// a phone plays is never held in memory whole.
#[derive(Debug)]
pub(crate) struct Opened {
    /// The file, its position at the first byte to send.
    pub(crate) file: std::fs::File,
    /// How many bytes to send from there.
    pub(crate) len: u64,
}

impl Opened {
    /// All of its bytes, in memory. A file cut short since it was opened fails
    /// (`UnexpectedEof`) rather than reading as fewer bytes.
    pub(crate) fn into_bytes(self) -> std::io::Result<Vec<u8>> {
        use std::io::Read;
        let mut bytes = vec![0; usize::try_from(self.len).map_err(std::io::Error::other)?];
        let mut file = self.file;
        file.read_exact(&mut bytes)?;
        Ok(bytes)
    }
}

/// An attachment opened as a [`Span`] chose.
#[derive(Debug)]
pub(crate) enum SpanRead {
    /// The whole file, with the hash of its bytes (read through once to compute it).
    Whole { path: String, kind: AttachmentType, extent: Extent, etag: String, body: Opened },
    /// Part of it, from `start` on.
    Part { kind: AttachmentType, extent: Extent, start: u64, body: Opened },
    /// Nothing, since the span lay past the end.
    Beyond { path: String, extent: Extent },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn obsidians_image_audio_and_video_suffixes_are_attachments_and_others_are_not() {
        let png = kind_of("Home/Boiler.PNG").unwrap();
        assert_eq!((png.media_type, png.kind), ("image/png", AttachmentKind::Image));
        assert_eq!(kind_of("a.svg").unwrap().kind, AttachmentKind::Vector);
        assert_eq!(kind_of("a.mp3").unwrap().media_type, "audio/mpeg");
        assert_eq!(kind_of("a.mov").unwrap().kind, AttachmentKind::Video);
        for name in ["a.md", "a.pdf", "a.txt", "a.canvas", "png", ".png", "a.png.md", "a"] {
            assert_eq!(kind_of(name), None, "{name}");
        }
    }
}
