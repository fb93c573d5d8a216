//! The optional system tools extraction can lean on: Poppler's `pdftotext` (when the Rust PDF
//! parser gives up) and `pdftoppm` plus Tesseract's `tesseract` (OCR for scans).
//!
//! They are found on `PATH` once and run as child processes with a deadline: a PDF that makes
//! one of them hang costs a timeout, never a stuck server. Nothing here is required; a missing
//! tool turns into a reason in the verdict (`needs_ocr`), not an error at start.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The tools found on this machine.
#[derive(Debug, Clone, Default)]
pub(crate) struct Tools {
    /// Poppler's text extractor.
    pub(crate) pdftotext: Option<PathBuf>,
    /// Poppler's page renderer.
    pub(crate) pdftoppm: Option<PathBuf>,
    /// Tesseract, only when it also lists at least one installed language.
    pub(crate) tesseract: Option<PathBuf>,
    /// The language Tesseract is asked for (`eng` when installed, else the first listed).
    pub(crate) language: String,
}

impl Tools {
    /// Looks the tools up on `PATH`.
    pub(crate) fn detect() -> Tools {
        let tesseract = on_path("tesseract");
        let language = tesseract.as_deref().and_then(tesseract_language);
        Tools {
            pdftotext: on_path("pdftotext"),
            pdftoppm: on_path("pdftoppm"),
            tesseract: if language.is_some() { tesseract } else { None },
            language: language.unwrap_or_default(),
        }
    }

    /// Why OCR cannot run on this machine, or `None` when it can.
    pub(crate) fn ocr_missing(&self) -> Option<String> {
        match (&self.pdftoppm, &self.tesseract) {
            (Some(_), Some(_)) => None,
            (None, Some(_)) => Some(
                "pdftoppm is not installed, so pages cannot be rendered for OCR; install \
                 poppler-utils"
                    .into(),
            ),
            (_, None) => Some(
                "tesseract (with at least one language) is not installed; install tesseract-ocr \
                 and poppler-utils, then re-index"
                    .into(),
            ),
        }
    }

    /// Text of every page through `pdftotext -layout`, split at its form feeds.
    pub(crate) fn pdftotext(&self, pdf: &Path, timeout: Duration) -> Result<Vec<String>, String> {
        let exe = self.pdftotext.as_deref().ok_or("pdftotext is not installed")?;
        let out = run(
            Command::new(exe).arg("-layout").arg("-enc").arg("UTF-8").arg(pdf).arg("-"),
            timeout,
        )?;
        let mut pages: Vec<String> = out.split('\u{c}').map(str::to_string).collect();
        // pdftotext ends the last page with a form feed too.
        if pages.last().is_some_and(|p| p.trim().is_empty()) {
            pages.pop();
        }
        Ok(pages)
    }

    /// OCR of one page (1-based): rendered at 300 dpi in grey, then read by Tesseract.
    pub(crate) fn ocr_page(
        &self,
        pdf: &Path,
        page: u32,
        work: &Path,
        timeout: Duration,
    ) -> Result<String, String> {
        let (Some(ppm), Some(tess)) = (&self.pdftoppm, &self.tesseract) else {
            return Err(self.ocr_missing().unwrap_or_default());
        };
        let prefix = work.join(format!("page-{page}"));
        let n = page.to_string();
        run(
            Command::new(ppm)
                .args(["-r", "300", "-gray", "-png", "-singlefile", "-f", &n, "-l", &n])
                .arg(pdf)
                .arg(&prefix),
            timeout,
        )?;
        let image = prefix.with_extension("png");
        // One thread per Tesseract: the caller runs pages side by side, which uses the cores
        // better than Tesseract's own threading on one page.
        let text = run(
            Command::new(tess)
                .arg(&image)
                .arg("stdout")
                .args(["-l", &self.language])
                .env("OMP_THREAD_LIMIT", "1"),
            timeout,
        );
        let _ = std::fs::remove_file(&image);
        text
    }
}

/// The first executable called `name` in a `PATH` folder.
pub(crate) fn on_path(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(name)).find(|candidate| {
        std::fs::metadata(candidate)
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}

/// The language to OCR with: `eng` when installed, else the first installed one (`osd`, the
/// orientation model, is not a language).
fn tesseract_language(exe: &Path) -> Option<String> {
    let listed = run(Command::new(exe).arg("--list-langs"), Duration::from_secs(10)).ok()?;
    let langs: Vec<&str> = listed
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.contains(' ') && !l.ends_with(':') && *l != "osd")
        .collect();
    langs.iter().find(|l| **l == "eng").or(langs.first()).map(|l| l.to_string())
}

/// Runs a command to completion within `timeout`, returning its standard output. A non-zero
/// exit is an error carrying the last line of its standard error.
fn run(cmd: &mut Command, timeout: Duration) -> Result<String, String> {
    let name = Path::new(cmd.get_program())
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{name} could not be started: {e}"))?;
    // Drain both pipes on threads so a chatty tool never blocks on a full pipe while we wait.
    let mut stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let out = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = stdout.read_to_end(&mut buf);
        buf
    });
    let err = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = stderr.read_to_end(&mut buf);
        buf
    });
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{name} took longer than {} s and was stopped",
                    timeout.as_secs()
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => return Err(format!("{name} could not be waited for: {e}")),
        }
    };
    let out = out.join().unwrap_or_default();
    let err = err.join().unwrap_or_default();
    if !status.success() {
        let err = String::from_utf8_lossy(&err);
        let last = err.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("no message");
        return Err(format!("{name} failed ({status}): {}", last.trim()));
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_tool_is_a_reason_not_a_panic() {
        let none = Tools::default();
        assert!(none.ocr_missing().unwrap().contains("tesseract"));
        let no_render = Tools { tesseract: Some("/bin/true".into()), ..Tools::default() };
        assert!(no_render.ocr_missing().unwrap().contains("poppler-utils"));
        assert!(none.pdftotext(Path::new("x.pdf"), Duration::from_secs(1)).is_err());
    }

    #[test]
    fn a_command_that_overruns_is_stopped() {
        let started = Instant::now();
        let err = run(Command::new("sleep").arg("5"), Duration::from_millis(200)).unwrap_err();
        assert!(err.contains("took longer"), "{err}");
        assert!(started.elapsed() < Duration::from_secs(3));
    }

    #[test]
    fn a_failing_command_reports_its_last_error_line() {
        let err = run(
            Command::new("sh").args(["-c", "echo one >&2; echo two >&2; exit 3"]),
            Duration::from_secs(5),
        )
        .unwrap_err();
        assert!(err.contains("two") && err.contains('3'), "{err}");
        let ok = run(Command::new("sh").args(["-c", "printf hi"]), Duration::from_secs(5)).unwrap();
        assert_eq!(ok, "hi");
    }
}
