//! The vault: Markdown files on disk and every operation on them.
pub mod frontmatter;
pub mod text;
