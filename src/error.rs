//! The closed set of error codes, declared once.
//!
//! Every refusal anywhere in mdvault carries exactly one [`ErrorCode`]. The code says what the
//! caller should do next; the message says why, names the thing involved and suggests the next
//! step. The surfaces render the same [`Error`] differently: REST as `{"code","error"}` with
//! [`ErrorCode::http_status`], MCP as prose marked as a tool error, the CLI as
//! `error[code]: message` with exit status 1.
//!
//! This module knows nothing of HTTP libraries; the status is a plain number.

use std::fmt;

macro_rules! codes {
    ($( $(#[$doc:meta])* $variant:ident = ($name:literal, $status:literal), )*) => {
        /// One stable, `snake_case` name per thing a caller can do about a refusal.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum ErrorCode {
            $( $(#[$doc])* $variant, )*
        }

        impl ErrorCode {
            /// Every code, in declaration order.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant,)*];

            /// The wire name, e.g. `not_found`.
            pub fn as_str(self) -> &'static str {
                match self { $(ErrorCode::$variant => $name,)* }
            }

            /// The HTTP status a REST refusal with this code answers.
            pub fn http_status(self) -> u16 {
                match self { $(ErrorCode::$variant => $status,)* }
            }
        }
    };
}

codes! {
    /// The path is not there (also an unknown route or vault).
    NotFound = ("not_found", 404),
    /// Pass `overwrite`, or choose another name.
    AlreadyExists = ("already_exists", 400),
    /// The folder has contents; pass `recursive`.
    NotEmpty = ("not_empty", 400),
    /// Traversal, a symlink, a NUL byte, a protected path, the vault root.
    InvalidPath = ("invalid_path", 400),
    /// The request's write scope is narrower than the caller thinks; do not retry elsewhere.
    OutOfScope = ("out_of_scope", 400),
    /// A note name that several files answer to (by file name, path ending or alias); pass
    /// one of the paths the message lists.
    AmbiguousPath = ("ambiguous_path", 400),
    /// The wrong kind of file for this verb, including a folder named like a file.
    UnsupportedSuffix = ("unsupported_suffix", 400),
    /// A directory where a file was needed.
    IsDirectory = ("is_directory", 400),
    /// A file where a directory was needed.
    NotADirectory = ("not_a_directory", 400),
    /// A document or canvas where a note was needed, or a section named on one.
    IsDocument = ("is_document", 400),
    /// An attachment (an image, audio or video file) is served read-only: no write, patch or
    /// delete of one (a move keeps its bytes).
    AttachmentReadOnly = ("attachment_read_only", 400),
    /// A move may not turn one kind of file (note, document, canvas, attachment of a media
    /// type) into another.
    KindChange = ("kind_change", 400),
    /// The heading target names no heading (or the `^id` target no block).
    NoSuchHeading = ("no_such_heading", 400),
    /// The heading target names several headings; retry with the full `::` path.
    AmbiguousHeading = ("ambiguous_heading", 400),
    /// A replace with no content would empty a section; send the content, or `allow_empty`.
    EmptyContent = ("empty_content", 400),
    /// The literal text to replace is not in the note.
    NoSuchText = ("no_such_text", 400),
    /// The literal text occurs a different number of times than `count` said.
    AmbiguousText = ("ambiguous_text", 400),
    /// A frontmatter edit on a note without a frontmatter block.
    NoFrontmatter = ("no_frontmatter", 400),
    /// Not a value this vault's frontmatter can carry (`null`, nested maps).
    InvalidValue = ("invalid_value", 400),
    /// The file is there and reading it failed.
    Unreadable = ("unreadable", 400),
    /// A document upload with no bytes.
    EmptyDocument = ("empty_document", 400),
    /// A document must be filed directly inside a `Files` folder.
    WrongParentFolder = ("wrong_parent_folder", 400),
    /// No text could be extracted from the document.
    ExtractionFailed = ("extraction_failed", 400),
    /// The upload is larger than `vault.doc_max_bytes`.
    DocumentTooLarge = ("document_too_large", 400),
    /// The note changed since the caller read it (the expected hash no longer matches).
    Conflict = ("conflict", 409),
    /// A frontmatter rename or insert names a key the note already has; pick another name, or
    /// set that key instead.
    KeyExists = ("key_exists", 409),
    /// A Local REST API PATCH named its version token (`ifMatch`, `If-Match`) and the note is
    /// no longer at that version; read it again (the document map's `version`) and retry.
    VersionMismatch = ("version_mismatch", 412),
    /// The request names its target twice (in the URL and in headers or an instruction body);
    /// name it once.
    ConflictingTarget = ("conflicting_target", 422),
    /// A missing header, an unparseable body, an unknown verb or option.
    InvalidRequest = ("invalid_request", 400),
    /// A periodic note of a period the vault's Obsidian settings do not enable (the Periodic
    /// Notes plugin's, or the daily notes plugin switched off); turn it on, or ask another.
    PeriodDisabled = ("period_disabled", 400),
    /// Not a tag by Obsidian's rules (letters, digits, `_`, `-`, `/` for nesting; no spaces;
    /// not all digits); write the tag as Obsidian would accept it.
    InvalidTag = ("invalid_tag", 400),
    /// A tag rename whose new name is the old one; name a different tag.
    SameTag = ("same_tag", 400),
    /// The route exists but not with this HTTP method.
    MethodNotAllowed = ("method_not_allowed", 405),
    /// No bearer token, or the wrong one.
    Unauthorized = ("unauthorized", 401),
    /// The Host or Origin header is not on the allowlist (DNS rebinding, a foreign web page).
    Forbidden = ("forbidden", 403),
    /// The client's grant lacks a right the request needs (writes, a vault, a tool); the
    /// message names it. Ask the owner for a token that has it.
    NotGranted = ("not_granted", 403),
    /// The request body is larger than `server.max_body_bytes`.
    PayloadTooLarge = ("payload_too_large", 413),
    /// A `Range` that starts past an attachment's last byte; ask for bytes before its length
    /// (the answer's `Content-Range` gives it), or leave `Range` out for the whole file.
    RangeNotSatisfiable = ("range_not_satisfiable", 416),
    /// The request body stopped arriving before it was whole; send all of it, promptly.
    RequestTimeout = ("request_timeout", 408),
    /// The index is still building; ask again rather than recording no results.
    NotReady = ("not_ready", 503),
    /// Every core is searching and the queue did not move in time; ask again after a pause.
    Busy = ("busy", 503),
    /// The route needs the Obsidian app itself (the active file, commands, opening a file in
    /// a window); mdvault serves the vault's files without the app, so use `/vault/` instead.
    NeedsObsidian = ("needs_obsidian", 501),
    /// The disk the write goes to is full (or the user's quota is used up, or the file would
    /// pass the size a process may write); free space, then retry. Nothing was changed.
    DiskFull = ("disk_full", 507),
    /// The vault's disk or folder takes no writes (mounted read-only, or no permission); fix
    /// the mount or the permissions, then retry. Nothing was changed.
    ReadOnly = ("read_only", 507),
    /// The server failed on its own side (a checker that will not run, an unexpected disk error).
    InternalError = ("internal_error", 500),
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A refusal: a code from the closed set and a message written for the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    code: ErrorCode,
    message: String,
    /// The Local REST API plugin's own number for this refusal, when a REST route knows a
    /// more specific one than the status gives (see `api/compat.rs`); never changes the code.
    compat: Option<u32>,
}

impl Error {
    /// A refusal with this code and message.
    pub(crate) fn new(code: ErrorCode, message: impl Into<String>) -> Error {
        Error { code, message: message.into(), compat: None }
    }

    /// The same refusal, carrying the Local REST API plugin's number for it.
    pub(crate) fn with_compat(mut self, number: u32) -> Error {
        self.compat = Some(number);
        self
    }

    /// The plugin's number attached by [`Error::with_compat`], if any.
    pub(crate) fn compat(&self) -> Option<u32> {
        self.compat
    }

    /// The code a caller routes on.
    pub fn code(&self) -> ErrorCode {
        self.code
    }

    /// The message, written for a person or a model to act on.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Maps an I/O failure while reading `what` to `not_found` or `unreadable`.
    pub(crate) fn read_io(what: &str, err: &std::io::Error) -> Error {
        match err.kind() {
            std::io::ErrorKind::NotFound => {
                Error::new(ErrorCode::NotFound, format!("{what} does not exist"))
            }
            std::io::ErrorKind::IsADirectory => Error::new(
                ErrorCode::IsDirectory,
                format!("{what} is a folder; list it instead of reading it"),
            ),
            _ => Error::new(
                ErrorCode::Unreadable,
                format!("{what} exists but could not be read: {err}"),
            ),
        }
    }

    /// Maps an I/O failure while writing `what`: a full disk to `disk_full`, a read-only one
    /// (or a permission refused) to `read_only`, anything else to `internal_error`. Every
    /// write's failure passes through here, so this is the one place the rule is decided.
    pub(crate) fn write_io(what: &str, err: &std::io::Error) -> Error {
        use std::io::ErrorKind as K;
        match err.kind() {
            K::StorageFull | K::QuotaExceeded | K::FileTooLarge => Error::new(
                ErrorCode::DiskFull,
                format!(
                    "writing {what} failed: {err}; nothing was changed. Free space on the \
                     disk that holds it, then retry"
                ),
            ),
            K::ReadOnlyFilesystem | K::PermissionDenied => Error::new(
                ErrorCode::ReadOnly,
                format!(
                    "writing {what} failed: {err}; nothing was changed. The vault's folder \
                     takes no writes: remount it read-write or give this user write \
                     permission, then retry"
                ),
            ),
            _ => Error::new(
                ErrorCode::InternalError,
                format!(
                    "writing {what} failed: {err}; nothing was changed, check disk space and \
                     permissions"
                ),
            ),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// The result type of every engine operation.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_snake_case() {
        let mut seen = std::collections::HashSet::new();
        for code in ErrorCode::ALL {
            let name = code.as_str();
            assert!(seen.insert(name), "duplicate code {name}");
            assert!(
                name.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
                "{name} is not snake_case"
            );
        }
    }

    #[test]
    fn a_full_or_read_only_disk_is_named_507_and_anything_else_stays_internal() {
        use std::io::{Error as Io, ErrorKind as K};
        for (kind, code) in [
            (K::StorageFull, ErrorCode::DiskFull),
            (K::QuotaExceeded, ErrorCode::DiskFull),
            (K::FileTooLarge, ErrorCode::DiskFull),
            (K::ReadOnlyFilesystem, ErrorCode::ReadOnly),
            (K::PermissionDenied, ErrorCode::ReadOnly),
            (K::Other, ErrorCode::InternalError),
        ] {
            let e = Error::write_io("Notes/a.md", &Io::from(kind));
            assert_eq!(e.code(), code, "{kind:?}");
            assert!(e.message().contains("Notes/a.md") && e.message().contains("nothing was"));
        }
        assert_eq!(ErrorCode::DiskFull.http_status(), 507);
        assert_eq!(ErrorCode::ReadOnly.http_status(), 507);
    }

    #[test]
    fn only_a_missing_thing_is_404() {
        for code in ErrorCode::ALL {
            assert_eq!(code.http_status() == 404, *code == ErrorCode::NotFound);
        }
    }
}
