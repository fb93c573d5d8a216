//! `mdvault doctor` and `mdvault status`: is this setup able to work, and how much of each
//! vault is searchable.
//!
//! `doctor` checks, in order: the configuration, the API key, the vaults (present, readable,
//! writable), whether index.md is generated (and how to turn it on), the embedding model, the
//! store, the watcher's inotify limits and the PDF/OCR tools. Each check prints one line; a problem's line says how to fix it. It exits 1 when
//! anything fails (warnings alone exit 0), and it never writes to a vault.
//! `status` reads the store without loading the model, so it works while a server runs.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use clap::Args;

use super::{Failure, print, print_json};
use crate::config::{Config, ConfigError, EmbeddingBackend};
use crate::engine::Engine;
use crate::upkeep::indexmd;
use crate::vault::Vaults;
use crate::wire::{self, DoctorCheck, DoctorReport};

/// `mdvault status`.
#[derive(Debug, Args)]
pub(crate) struct StatusArgs {
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// `mdvault doctor`.
#[derive(Debug, Args)]
pub(crate) struct DoctorArgs {
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

pub(crate) fn status(
    config: &Config,
    vaults: &Vaults,
    only: Option<&str>,
    args: StatusArgs,
) -> Result<(), Failure> {
    let coverage = Engine::coverage_offline(config, vaults, only)?;
    if args.json {
        print_json(&wire::status(&coverage));
    } else {
        print(&crate::index::coverage::render(&coverage));
    }
    Ok(())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Level {
    Ok,
    Warn,
    Fail,
}

impl Level {
    fn as_str(self) -> &'static str {
        match self {
            Level::Ok => "ok",
            Level::Warn => "warn",
            Level::Fail => "FAIL",
        }
    }
}

/// One line of the report.
struct Check {
    level: Level,
    area: &'static str,
    what: String,
    fix: Option<String>,
}

fn ok(area: &'static str, what: impl Into<String>) -> Check {
    Check { level: Level::Ok, area, what: what.into(), fix: None }
}

fn warn(area: &'static str, what: impl Into<String>, fix: impl Into<String>) -> Check {
    Check { level: Level::Warn, area, what: what.into(), fix: Some(fix.into()) }
}

fn fail(area: &'static str, what: impl Into<String>, fix: impl Into<String>) -> Check {
    Check { level: Level::Fail, area, what: what.into(), fix: Some(fix.into()) }
}

/// Runs every check. `loaded` is the configuration, or why it could not be loaded.
pub(crate) fn doctor(loaded: Result<Config, ConfigError>, args: DoctorArgs) -> Result<(), Failure> {
    let mut checks = Vec::new();
    let key = std::env::var("MDVAULT_API_KEY").unwrap_or_default();
    match loaded {
        Err(e) => {
            checks.push(fail(
                "config",
                e.0,
                "fix the setting it names, or run with MDVAULT_CONFIG= to ignore the file",
            ));
            checks.push(api_key(&key, None));
        }
        Ok(config) => {
            checks.push(ok(
                "config",
                match &config.file {
                    Some(f) => format!("{} loaded", f.display()),
                    None => "no config file; defaults and MDVAULT_ variables".to_string(),
                },
            ));
            checks.push(api_key(&key, Some(&config.data_dir)));
            checks.extend(vaults(&config));
            checks.extend(index_md(&config));
            checks.push(model(&config));
            checks.extend(store(&config.data_dir));
            checks.extend(credentials(&config.data_dir));
            checks.extend(watcher(&config));
            checks.extend(tools(&config));
        }
    }
    let worst = checks.iter().map(|c| c.level).max().unwrap_or(Level::Ok);
    if args.json {
        print_json(&DoctorReport {
            ok: worst != Level::Fail,
            checks: checks
                .iter()
                .map(|c| DoctorCheck {
                    level: c.level.as_str().to_ascii_lowercase(),
                    area: c.area,
                    what: c.what.clone(),
                    fix: c.fix.clone(),
                })
                .collect(),
        });
    } else {
        let colour = super::colour(std::io::stdout().is_terminal());
        let mut out = String::new();
        for c in &checks {
            let label = format!("{:<4}", c.level.as_str());
            let label = match (colour, c.level) {
                (false, _) => label,
                (true, Level::Ok) => format!("\x1b[32m{label}\x1b[0m"),
                (true, Level::Warn) => format!("\x1b[33m{label}\x1b[0m"),
                (true, Level::Fail) => format!("\x1b[1;31m{label}\x1b[0m"),
            };
            out.push_str(&format!("{label}  {:<8} {}", c.area, c.what));
            if let Some(fix) = &c.fix {
                out.push_str(&format!(" -> {fix}"));
            }
            out.push('\n');
        }
        let fails = checks.iter().filter(|c| c.level == Level::Fail).count();
        let warns = checks.iter().filter(|c| c.level == Level::Warn).count();
        out.push_str(&match (fails, warns) {
            (0, 0) => "\nall good\n".to_string(),
            (0, w) => format!("\nworks, with {w} warning(s)\n"),
            (f, _) => format!("\n{f} problem(s) to fix before mdvault can do its job\n"),
        });
        print(&out);
    }
    if worst == Level::Fail { Err(Failure::Exit(1)) } else { Ok(()) }
}

fn api_key(key: &str, data_dir: Option<&Path>) -> Check {
    let kept = data_dir.map(|d| d.join("api-key")).filter(|p| p.is_file());
    // The key `mdvault service install` put in the units' environment file: the service has
    // a key even when this shell has none, and two different keys confuse clients.
    let env_file = super::service::env_file().ok();
    let installed =
        env_file.as_deref().and_then(|f| super::service::env_file_value(f, "MDVAULT_API_KEY"));
    if let (Some(file), Some(k)) = (&env_file, &installed) {
        if key.trim().is_empty() {
            return ok(
                "api key",
                format!(
                    "MDVAULT_API_KEY is not set in this shell; the service's {} has one (to \
                     serve by hand: set -a; . {0}; set +a)",
                    file.display()
                ),
            );
        }
        if key.trim() != k {
            return warn(
                "api key",
                format!("MDVAULT_API_KEY differs from the one in {}", file.display()),
                format!(
                    "clients set up with one key are refused by a server started with the \
                     other; use the file's key (set -a; . {}; set +a) or re-install with --force",
                    file.display()
                ),
            );
        }
    }
    if key.trim().is_empty() {
        let fix = match kept {
            Some(p) => format!("export MDVAULT_API_KEY=$(cat {})", p.display()),
            None => "export MDVAULT_API_KEY=$(openssl rand -hex 24) (scripts/start.sh makes and \
                     keeps one for you)"
                .to_string(),
        };
        return fail("api key", "MDVAULT_API_KEY is not set, so `serve` will not start", fix);
    }
    if key.trim().len() < 16 {
        return warn(
            "api key",
            format!("MDVAULT_API_KEY is only {} characters", key.trim().len()),
            "use at least 16 random characters, e.g. $(openssl rand -hex 24)",
        );
    }
    ok("api key", "MDVAULT_API_KEY is set")
}

/// `access(2)`: whether this process may read (or write) `path`.
fn may(path: &Path, mode: libc::c_int) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else { return false };
    // SAFETY: `c` is a valid NUL-terminated string that outlives the call.
    unsafe { libc::access(c.as_ptr(), mode) == 0 }
}

fn vaults(config: &Config) -> Vec<Check> {
    if config.vaults.is_empty() {
        return vec![fail(
            "vaults",
            "no vault is configured",
            "pass --vault ~/Notes, set MDVAULT_VAULTS, or list vaults: in the config file",
        )];
    }
    config
        .vaults
        .iter()
        .map(|v| {
            let root = &v.root;
            let name = format!("{} ({})", v.name, root.display());
            if !root.is_dir() {
                return fail(
                    "vault",
                    format!("{name} is not a folder"),
                    "create it, or point the vault at the folder that holds your notes",
                );
            }
            if !may(root, libc::R_OK | libc::X_OK) {
                return fail(
                    "vault",
                    format!("{name} cannot be read by this user"),
                    format!("chmod u+rx {}, or run mdvault as the vault's owner", root.display()),
                );
            }
            if !may(root, libc::W_OK) {
                return warn(
                    "vault",
                    format!("{name} is read-only for this user: search works, edits will fail"),
                    format!("chmod u+w {} if agents should edit notes", root.display()),
                );
            }
            ok("vault", format!("{name} readable and writable"))
        })
        .collect()
}

/// Whether a server keeps a generated index.md, and how to have one. A page mdvault generated
/// earlier that nothing keeps up to date any more (the setting turned off since) is a warning.
fn index_md(config: &Config) -> Vec<Check> {
    let how = "set index: {index_md: true} in the config file (or MDVAULT_INDEX__INDEX_MD=true)";
    if config.index.index_md {
        return vec![ok(
            "index.md",
            "generated at each vault's root and kept up to date by a running server \
             (index.index_md)",
        )];
    }
    let stale: Vec<Check> = config
        .vaults
        .iter()
        .filter_map(|v| {
            let text = std::fs::read_to_string(v.root.join(indexmd::INDEX_MD)).ok()?;
            indexmd::generated(&text).then(|| {
                warn(
                    "index.md",
                    format!(
                        "{} holds an index.md mdvault generated, which nothing keeps up to date \
                         while index.index_md is off",
                        v.name
                    ),
                    format!("{how} to keep it current, or delete it"),
                )
            })
        })
        .collect();
    if !stale.is_empty() {
        return stale;
    }
    vec![ok(
        "index.md",
        format!(
            "not generated (index.index_md is off: no file is written into a vault unasked); to have one, {how}"
        ),
    )]
}

fn model(config: &Config) -> Check {
    match &config.embedding.backend {
        EmbeddingBackend::Local { model_dir } => {
            let fix = if *model_dir == Config::default_model_dir(&config.data_dir) {
                format!(
                    "run `mdvault model fetch --data-dir {}` to install the default model there",
                    config.data_dir.display()
                )
            } else {
                "point embedding.model_dir at a folder with model.safetensors, tokenizer.json \
                 and config.json, or unset it to use the default model"
                    .to_string()
            };
            if !model_dir.is_dir() {
                return fail("model", format!("no model folder at {}", model_dir.display()), fix);
            }
            let missing: Vec<&str> = ["model.safetensors", "tokenizer.json", "config.json"]
                .into_iter()
                .filter(|f| !model_dir.join(f).is_file())
                .collect();
            if !missing.is_empty() {
                return fail(
                    "model",
                    format!("{} lacks {}", model_dir.display(), missing.join(", ")),
                    fix,
                );
            }
            match crate::embed::local::LocalEmbedder::load(model_dir) {
                Ok(e) => {
                    ok("model", format!("{} loads ({} dimensions)", model_dir.display(), e.dims()))
                }
                Err(e) => fail("model", format!("{} does not load: {e}", model_dir.display()), fix),
            }
        }
        EmbeddingBackend::Http { url, model, .. } => {
            let mut probe = config.clone();
            probe.embedding.max_attempts = 1;
            let tried = crate::engine::load_embedder(&probe)
                .map_err(|e| e.message().to_string())
                .and_then(|e| e.embed(&["mdvault doctor"]).map_err(|e| e.to_string()));
            match tried {
                Ok(_) => ok("model", format!("{url} answers for {model}")),
                Err(e) => fail(
                    "model",
                    format!("the embedding endpoint {url} failed: {e}"),
                    "start the embedding server, or check embedding.url and embedding.model",
                ),
            }
        }
        EmbeddingBackend::Hashing { .. } => warn(
            "model",
            "the hashing embedder is configured: search matches words, not meaning",
            "set embedding.backend: local (the default) for real vectors",
        ),
    }
}

fn store(data_dir: &Path) -> Vec<Check> {
    let shown = data_dir.display();
    if data_dir.exists() && !data_dir.is_dir() {
        return vec![fail(
            "store",
            format!("the data directory {shown} is not a folder"),
            "move that file away, or pick another place with --data-dir or MDVAULT_DATA_DIR",
        )];
    }
    // The data directory is ours, so a probe file there is fine; the vaults are never probed.
    let probe = data_dir.join(format!(".doctor-{}", std::process::id()));
    let created = crate::index::store::create_private_dir(data_dir)
        .map_err(|e| std::io::Error::other(e.message().to_string()));
    let writable = created
        .and_then(|()| std::fs::write(&probe, b"probe"))
        .and_then(|()| std::fs::remove_file(&probe));
    if let Err(e) = writable {
        return vec![fail(
            "store",
            format!("cannot write to the data directory {shown}: {e}"),
            "make it writable by this user, or pick another place with --data-dir or \
             MDVAULT_DATA_DIR",
        )];
    }
    let mut out = Vec::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(m) = std::fs::metadata(data_dir)
            && m.permissions().mode() & 0o077 != 0
        {
            out.push(warn(
                "store",
                format!("{shown} is readable by other users (it holds your notes' text)"),
                format!("chmod 700 {shown}"),
            ));
        }
    }
    let db = crate::config::DataDir::new(data_dir).store();
    if !db.exists() {
        out.push(ok(
            "store",
            format!("{shown} is writable; no index yet (the first run builds it)"),
        ));
        return out;
    }
    let checked = crate::index::store::Store::quick_check(&db);
    out.push(match checked {
        Ok(s) if s == "ok" => ok("store", format!("{} is healthy", db.display())),
        Ok(s) => fail(
            "store",
            format!("{} is damaged: {s}", db.display()),
            format!("move it aside (mv {0} {0}.broken) and run `mdvault index`", db.display()),
        ),
        Err(e) => fail(
            "store",
            format!("{} cannot be read: {e}", db.display()),
            format!("move it aside (mv {0} {0}.broken) and run `mdvault index`", db.display()),
        ),
    });
    out
}

/// The credentials file (`auth.db`): opens (which brings an older schema up to date), and says
/// who it lets in. Absent is fine: the first sign-in or token makes it.
fn credentials(data_dir: &Path) -> Vec<Check> {
    let path = crate::config::DataDir::new(data_dir).auth();
    if !path.exists() {
        return vec![ok("credentials", "no auth.db yet (the first sign-in or token makes it)")];
    }
    let shown = path.display();
    let creds = match crate::auth::Credentials::open(data_dir) {
        Ok(c) => c,
        Err(e) => {
            return vec![fail(
                "credentials",
                e.message().to_string(),
                format!(
                    "move it aside (mv {shown} {shown}.broken): that signs every browser out and \
                     ends every token and OAuth sign-in, which are then given again"
                ),
            )];
        }
    };
    let mut out = Vec::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(m) = std::fs::metadata(&path)
            && m.permissions().mode() & 0o077 != 0
        {
            out.push(warn(
                "credentials",
                format!("{shown} is readable by other users"),
                format!("chmod 600 {shown}"),
            ));
        }
    }
    let counted = creds.clients().and_then(|c| Ok((c, creds.sessions()?)));
    out.push(match counted {
        Ok((clients, sessions)) => {
            let live: Vec<_> = clients.iter().filter(|c| c.revoked.is_none()).collect();
            let oauth = live.iter().filter(|c| c.kind == "oauth").count();
            ok(
                "credentials",
                format!(
                    "{shown} is healthy; live clients: {} ({oauth} signed in with OAuth); web \
                     sessions: {}",
                    live.len(),
                    sessions.len()
                ),
            )
        }
        Err(e) => fail(
            "credentials",
            e.message().to_string(),
            format!("move it aside (mv {shown} {shown}.broken) and sign in again"),
        ),
    });
    out
}

/// How many folders the watcher would watch: one inotify watch each, hidden ones (`.git`,
/// `.obsidian`) included, since the recursive watch takes every folder.
fn folders(root: &Path) -> usize {
    walkdir::WalkDir::new(root)
        .follow_links(false)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_dir())
        .count()
}

/// This user's inotify use now: instances (one per watched vault, per program) and watches.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Inotify {
    instances: usize,
    watches: usize,
}

/// Counts the inotify instances and watches held by this user's processes, from `/proc`:
/// those of other programs, and those of running mdvault processes (which already watch the
/// vaults a new server would). Processes of other users do not count against this user's
/// limits; a few of this user's (non-dumpable ones) cannot be inspected and are missed.
fn inotify_in_use() -> (Inotify, Inotify) {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    let (mut others, mut ours) = (Inotify::default(), Inotify::default());
    let Ok(procs) = std::fs::read_dir("/proc") else { return (others, ours) };
    for p in procs.flatten() {
        let name = p.file_name();
        if !name.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if p.metadata().map(|m| m.uid()).ok() != Some(me) {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(p.path().join("fd")) else { continue };
        let comm = std::fs::read_to_string(p.path().join("comm")).unwrap_or_default();
        let used = if comm.trim() == "mdvault" { &mut ours } else { &mut others };
        for fd in fds.flatten() {
            let is_inotify =
                std::fs::read_link(fd.path()).is_ok_and(|t| t.as_os_str() == "anon_inode:inotify");
            if !is_inotify {
                continue;
            }
            used.instances += 1;
            let info = p.path().join("fdinfo").join(fd.file_name());
            used.watches += std::fs::read_to_string(info).map_or(0, |t| watches_in_fdinfo(&t));
        }
    }
    (others, ours)
}

/// The watches an inotify descriptor holds: one `inotify wd:` line each in its fdinfo.
fn watches_in_fdinfo(text: &str) -> usize {
    text.lines().filter(|l| l.starts_with("inotify wd:")).count()
}

fn watcher(config: &Config) -> Vec<Check> {
    let read = |p: &str| -> Option<usize> { std::fs::read_to_string(p).ok()?.trim().parse().ok() };
    let (Some(max_watches), Some(max_instances)) = (
        read("/proc/sys/fs/inotify/max_user_watches"),
        read("/proc/sys/fs/inotify/max_user_instances"),
    ) else {
        return vec![ok("watcher", "no inotify limits to check on this system")];
    };
    let folders: usize = config.vaults.iter().map(|v| folders(&v.root)).sum();
    let (others, ours) = inotify_in_use();
    let mut checks = judge_inotify(
        Inotify { instances: config.vaults.len(), watches: folders },
        others,
        Inotify { instances: max_instances, watches: max_watches },
    );
    if ours.instances > 0 {
        checks.push(ok(
            "watcher",
            format!(
                "a running mdvault holds {} instance(s) and {} watches, left out above (a \
                 server started from this setup would replace it, not add to it)",
                ours.instances, ours.watches
            ),
        ));
    }
    checks
}

/// The verdict on the watcher's needs (one instance per vault, one watch per folder) against
/// what this user's programs already hold and the kernel's per-user limits.
fn judge_inotify(need: Inotify, used: Inotify, max: Inotify) -> Vec<Check> {
    let mut out = Vec::new();
    let fix = "raise it: echo fs.inotify.max_user_watches=524288 | sudo tee \
               /etc/sysctl.d/40-mdvault.conf && sudo sysctl --system";
    out.push(if need.watches >= max.watches {
        fail(
            "watcher",
            format!(
                "the vaults have {} folders but inotify allows {} watches",
                need.watches, max.watches
            ),
            fix,
        )
    } else if need.watches + used.watches >= max.watches || need.watches * 2 >= max.watches {
        warn(
            "watcher",
            format!(
                "the vaults' {} folders and the {} watches your other programs hold now come \
                 close to the limit of {}",
                need.watches, used.watches, max.watches
            ),
            fix,
        )
    } else {
        ok(
            "watcher",
            format!(
                "{} folders to watch; {} watches in use of {} allowed",
                need.watches, used.watches, max.watches
            ),
        )
    });
    let fix = "raise it: echo fs.inotify.max_user_instances=512 | sudo tee \
               /etc/sysctl.d/41-mdvault.conf && sudo sysctl --system";
    out.push(if need.instances + used.instances > max.instances {
        fail(
            "watcher",
            format!(
                "your other programs hold {} of the {} inotify instances allowed; serving {} vault(s) \
                 needs {} more, so changes would go unnoticed until the periodic pass",
                used.instances, max.instances, need.instances, need.instances
            ),
            fix,
        )
    } else if need.instances + used.instances + 8 > max.instances {
        warn(
            "watcher",
            format!(
                "{} of {} inotify instances in use; {} more for the vaults leaves little room",
                used.instances, max.instances, need.instances
            ),
            fix,
        )
    } else {
        ok("watcher", format!("{} of {} inotify instances in use", used.instances, max.instances))
    });
    out
}

fn on_path(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        return Some(PathBuf::from(program)).filter(|p| p.is_file());
    }
    crate::docs::tools::on_path(program)
}

fn tools(config: &Config) -> Vec<Check> {
    let mut out = Vec::new();
    if config.vault.doc_ocr {
        let missing: Vec<&str> =
            ["pdftoppm", "tesseract"].into_iter().filter(|p| on_path(p).is_none()).collect();
        out.push(if missing.is_empty() {
            ok("pdf", "pdftoppm and tesseract found: scanned PDFs get OCR")
        } else {
            warn(
                "pdf",
                format!(
                    "{} not found: scanned PDFs are filed but not searchable",
                    missing.join(" and ")
                ),
                "sudo apt-get install poppler-utils tesseract-ocr (or set vault.doc_ocr: false)",
            )
        });
    }
    let scripts = config.vaults.iter().any(|v| v.root.join(".scripts").is_dir());
    if scripts {
        let python = &config.maintenance.python;
        out.push(match on_path(python) {
            Some(p) => ok("checks", format!("{} runs the vault's .scripts checks", p.display())),
            None => warn(
                "checks",
                format!("{python} (maintenance.python) is not on PATH: .scripts checks cannot run"),
                "install Python 3, or set maintenance.python to its path",
            ),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn levels(checks: &[Check]) -> Vec<Level> {
        checks.iter().map(|c| c.level).collect()
    }

    #[test]
    fn the_credentials_file_is_counted_when_healthy_and_named_with_the_fix_when_not() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(levels(&credentials(dir.path())), [Level::Ok], "no file yet is fine");
        let creds = crate::auth::Credentials::open(dir.path()).unwrap();
        let grant = crate::vault::grant::Grant { client: "phone".into(), ..Default::default() };
        let pepper = crate::auth::Pepper::new([1; 32]);
        creds.create_client(&pepper, &grant, crate::auth::clients::Kind::Token).unwrap();
        drop(creds);
        let checks = credentials(dir.path());
        assert_eq!(levels(&checks), [Level::Ok]);
        assert!(
            checks[0].what.contains("live clients: 1 (0 signed in with OAuth)"),
            "{}",
            checks[0].what
        );
        let path = crate::config::DataDir::new(dir.path()).auth();
        for extra in ["-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{extra}", path.display()));
        }
        std::fs::write(&path, b"not a database at all, but long enough to be read as one").unwrap();
        let checks = credentials(dir.path());
        assert_eq!(levels(&checks), [Level::Fail]);
        assert!(checks[0].fix.as_deref().unwrap().contains(".broken"));
    }

    #[test]
    fn fdinfo_counts_one_watch_per_wd_line() {
        let text = "pos:\t0\nflags:\t02004000\nmnt_id:\t15\nino:\t1057\n\
                    inotify wd:2 ino:5d sdev:fd00 mask:fc6 ignored_mask:0 fhandle-bytes:8\n\
                    inotify wd:1 ino:2 sdev:fd00 mask:fc6 ignored_mask:0 fhandle-bytes:8\n";
        assert_eq!(watches_in_fdinfo(text), 2);
        assert_eq!(watches_in_fdinfo("pos:\t0\n"), 0);
    }

    #[test]
    fn inotify_verdicts_weigh_needs_against_use_and_limits() {
        let n = |instances, watches| Inotify { instances, watches };
        let max = n(128, 8192);
        assert_eq!(levels(&judge_inotify(n(1, 100), n(3, 200), max)), [Level::Ok, Level::Ok]);
        // Too many folders for the limit: nothing could watch them all.
        let c = judge_inotify(n(1, 9000), n(0, 0), max);
        assert_eq!(c[0].level, Level::Fail);
        assert!(c[0].fix.as_deref().unwrap().contains("max_user_watches"));
        // Fits alone, not beside what other programs already hold.
        assert_eq!(judge_inotify(n(1, 3000), n(1, 6000), max)[0].level, Level::Warn);
        // Every instance taken: the watcher cannot start.
        let c = judge_inotify(n(2, 10), n(127, 10), max);
        assert_eq!(c[1].level, Level::Fail);
        assert!(c[1].what.contains("127 of the 128"), "{}", c[1].what);
        assert!(c[1].fix.as_deref().unwrap().contains("max_user_instances"));
        assert_eq!(judge_inotify(n(1, 10), n(120, 10), max)[1].level, Level::Warn);
    }

    #[test]
    fn this_process_sees_its_own_inotify_instance() {
        let (before, _) = inotify_in_use();
        // SAFETY: plain syscalls on a descriptor this test owns and closes.
        let fd = unsafe { libc::inotify_init1(libc::IN_CLOEXEC) };
        assert!(fd >= 0);
        let dir = std::ffi::CString::new("/tmp").unwrap();
        // SAFETY: `fd` is the descriptor made above and `dir` a NUL-terminated path.
        let wd = unsafe { libc::inotify_add_watch(fd, dir.as_ptr(), libc::IN_CREATE) };
        assert!(wd >= 0);
        let (during, _) = inotify_in_use();
        // SAFETY: closes the descriptor this test opened, once.
        unsafe { libc::close(fd) };
        // Other tests may open and close watchers meanwhile, so only a lower bound is certain.
        assert!(during.instances >= 1 && during.watches >= 1, "{before:?} -> {during:?}");
    }
}
