//! Property test of the path gate: whatever a caller sends, nothing resolves outside the root
//! and nothing passes through a symlink or a hidden component.

use std::path::Path;

use mdvault::vault::path::{Access, Suffixes, gate};
use proptest::prelude::*;

const SEGMENTS: &[&str] = &[
    "..",
    ".",
    "",
    "a",
    "b.md",
    "Files",
    "x y.md",
    "%2e%2e",
    "%2E%2E%2F",
    "%252e%252e",
    "..%2f",
    ".hidden",
    "~",
    "\\",
    "a\\..",
    "\0",
    "in",
    "out",
    "index.md",
    "c.pdf",
    "d.png",
    "dir.md",
    "%00",
    "…",
];

fn access() -> impl Strategy<Value = Access> {
    prop_oneof![
        Just(Access::Read),
        Just(Access::ReadAttachment),
        Just(Access::List),
        Just(Access::WriteNote),
        Just(Access::WriteFile),
        Just(Access::WriteDocument),
        Just(Access::Folder),
    ]
}

fn raw_path() -> impl Strategy<Value = String> {
    (any::<bool>(), prop::collection::vec(prop::sample::select(SEGMENTS), 0..7)).prop_map(
        |(lead, segs)| {
            let joined = segs.join("/");
            if lead { format!("/{joined}") } else { joined }
        },
    )
}

fn world() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("vault");
    std::fs::create_dir_all(root.join("a/Files")).unwrap();
    std::fs::create_dir_all(dir.path().join("outside")).unwrap();
    std::fs::write(root.join("a/b.md"), "x").unwrap();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(dir.path().join("outside"), root.join("out")).unwrap();
        std::os::unix::fs::symlink(root.join("a"), root.join("in")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("outside"), root.join("a/out")).unwrap();
    }
    dir
}

fn inside(root: &Path, abs: &Path) -> bool {
    // The deepest existing ancestor, fully resolved, must still be under the root.
    let mut probe = abs.to_path_buf();
    loop {
        if let Ok(real) = probe.canonicalize() {
            return real.starts_with(root);
        }
        if !probe.pop() {
            return false;
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]
    #[test]
    fn nothing_resolves_outside_the_root(raw in raw_path(), access in access()) {
        let dir = world();
        let root = dir.path().join("vault").canonicalize().unwrap();
        let suffixes = Suffixes { documents: vec![".pdf".into()] };
        if let Ok(target) = gate(&root, &suffixes, &raw, access) {
            prop_assert!(target.abs.starts_with(&root), "{raw:?} -> {:?}", target.abs);
            prop_assert!(inside(&root, &target.abs), "{raw:?} escapes via {:?}", target.abs);
            for part in target.rel.split('/').filter(|p| !p.is_empty()) {
                prop_assert!(!part.starts_with('.'), "{raw:?} kept a hidden part");
                prop_assert!(!part.contains(['\0', '\\']));
            }
            let mut walk = root.clone();
            for part in target.rel.split('/').filter(|p| !p.is_empty()) {
                walk.push(part);
                if let Ok(meta) = std::fs::symlink_metadata(&walk) {
                    prop_assert!(!meta.file_type().is_symlink(), "{raw:?} via symlink");
                }
            }
        }
    }
}
