//! Shared helpers: fixture copies, vault snapshots, running the binary.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use mdvault::config::{Config, EmbeddingBackend, Overrides, VaultSettings};
use mdvault::vault::Vault;

/// The committed fixture vault.
pub fn fixture_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/vault")
}

/// A private copy of a folder tree, deleted when dropped.
pub struct TempVault {
    pub dir: tempfile::TempDir,
}

impl TempVault {
    /// A copy of the fixture vault.
    pub fn fixture() -> TempVault {
        TempVault::copy_of(&fixture_root())
    }

    /// A copy of any folder.
    pub fn copy_of(src: &Path) -> TempVault {
        let dir = tempfile::tempdir().unwrap();
        copy_tree(src, dir.path());
        TempVault { dir }
    }

    /// An empty vault.
    pub fn empty() -> TempVault {
        TempVault { dir: tempfile::tempdir().unwrap() }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn open(&self) -> Vault {
        Vault::open("test", self.root(), &settings()).unwrap()
    }

    pub fn write(&self, rel: &str, text: &str) {
        let p = self.root().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root().join(rel)).unwrap()
    }

    /// Every file and folder with its bytes, for byte-identical comparisons.
    pub fn snapshot(&self) -> BTreeMap<String, Option<Vec<u8>>> {
        let mut out = BTreeMap::new();
        for entry in walkdir::WalkDir::new(self.root()).min_depth(1).sort_by_file_name() {
            let entry = entry.unwrap();
            let rel =
                entry.path().strip_prefix(self.root()).unwrap().to_string_lossy().into_owned();
            let bytes = if entry.file_type().is_file() {
                Some(std::fs::read(entry.path()).unwrap())
            } else {
                None
            };
            out.insert(rel, bytes);
        }
        out
    }
}

/// The local model folder: `MDVAULT_MODEL_DIR`, else the default data directory's.
pub fn model_dir() -> PathBuf {
    std::env::var_os("MDVAULT_MODEL_DIR").map(PathBuf::from).unwrap_or_else(|| {
        let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default();
        home.join(".local/share/mdvault/models/all-MiniLM-L6-v2")
    })
}

/// A configuration with defaults, one vault named `fixture`, and the given data directory.
pub fn test_config(vault: &Path, data: &Path) -> Config {
    let dir = tempfile::tempdir().unwrap();
    let env = [("HOME", dir.path().to_str().unwrap())];
    let overrides = Overrides {
        vaults: vec![format!("fixture={}", vault.display())],
        data_dir: Some(data.to_path_buf()),
        config_file: Some(PathBuf::new()),
    };
    let mut c = mdvault::config::load(&overrides, &env).unwrap();
    c.embedding.backend = EmbeddingBackend::Local { model_dir: model_dir() };
    c
}

pub fn settings() -> VaultSettings {
    VaultSettings {
        doc_suffixes: vec![".pdf".into()],
        doc_files_dir: "Files".into(),
        doc_ocr: false,
        doc_max_bytes: 50 * 1024 * 1024,
    }
}

pub fn copy_tree(src: &Path, dst: &Path) {
    for entry in walkdir::WalkDir::new(src).min_depth(1) {
        let entry = entry.unwrap();
        let rel = entry.path().strip_prefix(src).unwrap();
        let target = dst.join(rel);
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
        } else if entry.file_type().is_file() {
            std::fs::create_dir_all(target.parent().unwrap()).unwrap();
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Runs `mdvault` with a clean environment (no user config) and optional stdin.
pub fn mdvault(args: &[&str], stdin: Option<&str>) -> Output {
    let home = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mdvault"));
    cmd.args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    if let Some(input) = stdin {
        use std::io::Write;
        child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    }
    child.wait_with_output().unwrap()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
