//! The vault's own checker scripts: finding them in `.scripts/`, asking each what it is, running
//! it, and turning what it printed into a [`CheckRun`].
//!
//! A checker is a `*.py` file directly in `<vault>/.scripts/`. Asked `--describe`, a contract
//! check prints its [`Declaration`]; one that cannot but is named `check_*` is kept as a legacy
//! (pre-contract) check whose text is shown as printed; anything else is a helper module and is
//! not a check. The contract itself (shapes, problems, statuses) lives in `findings`.
//!
//! Execution rules, because these scripts run with the server's rights:
//! - Only regular files the vault owner put in `.scripts/` run: a symlink there (or a symlinked
//!   `.scripts` folder) is skipped, since it could point at any Python file on the machine. This
//!   is checked at discovery and again just before each run.
//! - The argument vector is constant: `<python> <script> --describe`, `<python> <script>
//!   --vault-path <root> --json` for contract checks and `<python> <script> --vault-path <root>`
//!   for legacy ones. Nothing from a request ever reaches it.
//! - The working directory is the vault root (made absolute, so `--vault-path` means the same
//!   thing inside the child).
//! - The environment is cleared, then only `PATH` (copied from this process),
//!   `PYTHONDONTWRITEBYTECODE=1` (no `__pycache__` written into the vault) and
//!   `PYTHONIOENCODING=utf-8` are set, so an API key or any other secret in mdvault's
//!   environment never reaches a script. Python needs nothing else; `HOME` is not passed.
//! - stdin is null; stdout and stderr are drained on their own threads, so a chatty script
//!   cannot deadlock on a full pipe. stdout is kept up to 16 MiB and stderr's last 64 KiB.
//! - Each script runs in its own process group. At the timeout the whole group is killed
//!   (`SIGKILL` to `-<pgid>`), so a script's own children die with it; if a script exits
//!   while a child it started still holds its output open, the group is killed after a short
//!   grace. A grandchild that moved itself to another process group can survive; its output is
//!   then abandoned rather than waited for.
//!
//! This module does not decide which checks a request runs, run them in parallel, time the
//! whole run or render anything; it returns one [`CheckRun`] per script and leaves the rest to
//! the caller.

use std::collections::HashMap;
use std::ffi::OsString;
use std::fs;
use std::io::{self, Read};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::{Duration, Instant};

use super::findings::{
    CheckRun, Counts, Declaration, NotFindings, Source, Status, parse_declaration, parse_envelope,
};

/// The folder, directly under the vault root, that holds the checker scripts.
pub(crate) const SCRIPTS_DIR: &str = ".scripts";

/// The order given to legacy checks: far above any order a script would declare, so they sort
/// after every contract check, yet far from `i64::MAX` so adding to it cannot overflow.
pub(crate) const LEGACY_ORDER: i64 = i64::MAX / 2;

/// How much of stderr a could-not-run result shows.
const STDERR_TAIL_CHARS: usize = 2000;
/// stdout kept from one run: far beyond any honest findings document, small enough that a
/// runaway script cannot exhaust memory.
const STDOUT_LIMIT: usize = 16 << 20;
/// stderr kept from one run (its end: that is where a traceback's cause is).
const STDERR_KEEP: usize = 64 << 10;
/// How long to wait for the pipes to close after the script exited, before killing whatever in
/// its process group still holds them.
const PIPE_GRACE: Duration = Duration::from_secs(2);

/// How scripts are run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ScriptSettings {
    /// The Python interpreter, a name looked up on `PATH` or a path; `python3` by default.
    pub(crate) python: String,
    /// How long one `--json` (or legacy) run may take before it is stopped.
    pub(crate) timeout: Duration,
    /// How long `--describe` may take; it must not walk files, so this is short.
    pub(crate) describe_timeout: Duration,
}

impl Default for ScriptSettings {
    fn default() -> Self {
        ScriptSettings {
            python: "python3".to_string(),
            timeout: Duration::from_secs(120),
            describe_timeout: Duration::from_secs(10),
        }
    }
}

/// A checker script found in `.scripts/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Script {
    /// Its vault-relative path, e.g. `.scripts/check_links.py`.
    pub(crate) script: String,
    /// What it declared; for a legacy script, a declaration made up from its file name.
    pub(crate) declaration: Declaration,
    /// Whether it is a pre-contract script (no valid `--describe`), run without `--json` and
    /// shown as printed.
    pub(crate) legacy: bool,
    /// For a legacy script, why its `--describe` output was rejected. For a contract check, a
    /// problem found at discovery (its check name is already taken), which makes its run
    /// invalid.
    pub(crate) describe_problem: Option<String>,
}

/// The checker scripts in `<root>/.scripts/`, each asked `--describe`, sorted by (order, check
/// name, path). A missing folder means no scripts. Helper modules (no valid declaration, name
/// not starting with `check_`) are left out. When two scripts declare the same check name both
/// are kept, and the later one gets a `describe_problem`.
pub(crate) fn discover(root: &Path, settings: &ScriptSettings) -> Vec<Script> {
    let root = absolute(root);
    let names = script_files(&root);

    // `--describe` is one interpreter start per script; asking a few at a time keeps a vault
    // with many helpers from taking seconds to list.
    let width = thread::available_parallelism().map_or(4, |n| n.get()).clamp(1, 8);
    let mut described: Vec<(String, Described)> = Vec::with_capacity(names.len());
    for chunk in names.chunks(width) {
        thread::scope(|scope| {
            let handles: Vec<_> = chunk
                .iter()
                .map(|name| {
                    let root = &root;
                    scope.spawn(move || describe(root, name, settings))
                })
                .collect();
            for (name, handle) in chunk.iter().zip(handles) {
                let result = handle.join().unwrap_or_else(|_| Described {
                    declaration: Err("asking --describe failed inside mdvault".to_string()),
                    printed_json: false,
                    unanswered: true,
                });
                described.push((name.clone(), result));
            }
        });
    }

    let mut scripts: Vec<Script> = Vec::new();
    for (name, d) in described {
        let script = format!("{SCRIPTS_DIR}/{name}");
        match d.declaration {
            Ok(declaration) => {
                scripts.push(Script { script, declaration, legacy: false, describe_problem: None })
            }
            Err(why) if name.starts_with("check_") => {
                // One that never answered is run as a contract check all the same (with
                // `--json`, its problem listed): as legacy its error findings would be lost.
                tracing::debug!(script, why, "kept as a check without a declaration");
                scripts.push(Script {
                    script,
                    declaration: legacy_declaration(&name),
                    legacy: !d.unanswered,
                    describe_problem: Some(why),
                });
            }
            Err(why) => {
                // A helper module is the normal case; one that printed JSON probably meant to
                // be a check, so say so where the vault owner will look.
                if d.printed_json {
                    tracing::warn!(script, why, "not a check: its declaration was rejected");
                } else {
                    tracing::debug!(script, "not a check (a helper module)");
                }
            }
        }
    }

    scripts.sort_by(|a, b| {
        (a.declaration.order, &a.declaration.check, &a.script).cmp(&(
            b.declaration.order,
            &b.declaration.check,
            &b.script,
        ))
    });

    let mut first_with: HashMap<String, String> = HashMap::new();
    for s in &mut scripts {
        match first_with.get(&s.declaration.check) {
            Some(first) => {
                let clash = format!(
                    "the check name `{}` is already declared by {first}; rename one of them",
                    s.declaration.check
                );
                s.describe_problem = Some(match s.describe_problem.take() {
                    Some(earlier) => format!("{earlier}; {clash}"),
                    None => clash,
                });
            }
            None => {
                first_with.insert(s.declaration.check.clone(), s.script.clone());
            }
        }
    }
    scripts
}

/// Runs one script over the vault and classifies what it did.
///
/// A contract check runs with `--json`. Its stdout, if a findings envelope, gives the findings:
/// passed or failed by them, invalid if it broke the contract, could not run if it exited 2.
/// If stdout is not a findings document: exit status 2, a non-zero exit with nothing on stdout,
/// or death by a signal mean it could not run (with the stderr tail); anything else is shown as
/// legacy text. A legacy script is always legacy (its text and exit code) unless it could not
/// be started, timed out or was killed by a signal. A contract check with a `describe_problem`
/// is reported invalid with that problem first.
pub(crate) fn run(root: &Path, script: &Script, settings: &ScriptSettings) -> CheckRun {
    let root = absolute(root);
    let mut args: Vec<OsString> = vec!["--vault-path".into(), root.clone().into_os_string()];
    if !script.legacy {
        args.push("--json".into());
    }
    let started = Instant::now();
    let outcome = match runnable(&root, &script.script) {
        Ok(path) => execute(&root, &path, &args, &settings.python, settings.timeout),
        Err(why) => Outcome::Failed(why),
    };
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);

    let mut result = CheckRun {
        declaration: script.declaration.clone(),
        source: Source::Script { script: script.script.clone() },
        status: Status::CouldNotRun,
        exit_code: None,
        duration_ms,
        counts: Counts::default(),
        problems: Vec::new(),
        error: None,
        output: None,
        findings: Vec::new(),
    };

    match outcome {
        Outcome::Failed(why) => result.error = Some(why),
        Outcome::TimedOut { stderr } => {
            result.error =
                Some(format!("took longer than {} and was stopped", seconds(settings.timeout)));
            result.output = tail(&stderr);
        }
        Outcome::Exited { status, stdout, stderr } => {
            classify(&mut result, script.legacy, status, &stdout, &stderr)
        }
    }

    if !script.legacy
        && let Some(problem) = &script.describe_problem
    {
        result.problems.insert(0, problem.clone());
        if result.status != Status::CouldNotRun {
            result.status = Status::Invalid;
        }
    }
    result
}

/// The vault's own callout extractor, which replaces the built-in parser when present.
pub(crate) const CALLOUT_SCRIPT: &str = "extract_callouts.py";

/// Whether `.scripts/<name>` is a regular file the rules above let run.
pub(crate) fn present(root: &Path, name: &str) -> bool {
    runnable(&absolute(root), &format!("{SCRIPTS_DIR}/{name}")).is_ok()
}

/// Runs `.scripts/<name> --vault-path <root> --json` under the same rules as a check and
/// returns what it printed, or a sentence saying why it did not succeed (not found, could not
/// start, timed out, a non-zero exit with the end of its output).
pub(crate) fn run_tool(
    root: &Path,
    name: &str,
    settings: &ScriptSettings,
) -> Result<String, String> {
    /// How much of a failed tool's output its error carries: its last words are the cause.
    const ERROR_TAIL: usize = 500;
    let root = absolute(root);
    let script = format!("{SCRIPTS_DIR}/{name}");
    let path = runnable(&root, &script)?;
    let args: Vec<OsString> =
        vec!["--vault-path".into(), root.clone().into_os_string(), "--json".into()];
    match execute(&root, &path, &args, &settings.python, settings.timeout) {
        Outcome::Failed(why) => Err(format!("{script} could not run: {why}")),
        Outcome::TimedOut { .. } => {
            Err(format!("{script} took longer than {} and was stopped", seconds(settings.timeout)))
        }
        Outcome::Exited { status, stdout, .. } if status.success() => Ok(stdout),
        Outcome::Exited { status, stdout, stderr } => {
            let text = combined(&stdout, &stderr);
            let chars: Vec<char> = text.trim().chars().collect();
            let tail: String = chars[chars.len().saturating_sub(ERROR_TAIL)..].iter().collect();
            let code = status.code().map_or_else(|| "a signal".to_string(), |c| c.to_string());
            Err(format!("{script} exited with {code}: {tail}"))
        }
    }
}

/// The script's absolute path, if `script` still names a regular file directly in `.scripts/`.
/// Checked again at run time because [`Script`]'s fields are public and the folder may have
/// changed since discovery (a file swapped for a symlink must not run).
fn runnable(root: &Path, script: &str) -> Result<PathBuf, String> {
    let name = script
        .strip_prefix(SCRIPTS_DIR)
        .and_then(|rest| rest.strip_prefix('/'))
        .filter(|name| {
            name.ends_with(".py") && !name.starts_with('.') && !name.contains(['/', '\\'])
        })
        .ok_or_else(|| format!("{script} is not a script directly in {SCRIPTS_DIR}/"))?;
    let dir = root.join(SCRIPTS_DIR);
    if !fs::symlink_metadata(&dir).is_ok_and(|meta| meta.is_dir()) {
        return Err(format!("{SCRIPTS_DIR}/ is no longer a plain folder, so {script} is not run"));
    }
    let path = dir.join(name);
    match fs::symlink_metadata(&path) {
        Ok(meta) if meta.is_file() => Ok(path),
        Ok(_) => Err(format!("{script} is no longer a regular file, so it is not run")),
        Err(e) => Err(format!("{script} cannot be read: {e}")),
    }
}

/// Fills `result` from a process that exited (on its own or by a signal).
fn classify(result: &mut CheckRun, legacy: bool, status: ExitStatus, stdout: &str, stderr: &str) {
    let Some(code) = status.code() else {
        let signal =
            status.signal().map_or_else(|| "a signal".to_string(), |s| format!("signal {s}"));
        result.error = Some(with_last_line(format!("was killed by {signal}"), stderr));
        result.output = tail(stderr);
        return;
    };
    result.exit_code = Some(code);

    if legacy {
        result.status = Status::Legacy;
        result.output = Some(combined(stdout, stderr));
        return;
    }

    match parse_envelope(stdout, &result.declaration, Some(code)) {
        Ok((findings, problems)) => {
            result.counts = Counts::of(&findings);
            result.findings = findings;
            result.status = if code == 2 {
                // The script printed findings but also said it could not finish: believe it,
                // and keep what it found.
                result.error = Some(with_last_line(
                    "exited with status 2 (the check says it could not run)".to_string(),
                    stderr,
                ));
                result.output = tail(stderr);
                Status::CouldNotRun
            } else if !problems.is_empty() {
                Status::Invalid
            } else if result.counts.error > 0 {
                Status::Failed
            } else {
                Status::Passed
            };
            result.problems = problems;
        }
        // A script that declared the contract and then printed no envelope is never shown
        // as legacy (which cannot fail a run): a non-zero exit is a crash, a zero exit a
        // broken promise.
        Err(NotFindings) if code != 0 => {
            result.error = Some(with_last_line(format!("exited with status {code}"), stderr));
            result.output = tail(stderr);
        }
        Err(NotFindings) => {
            result.status = Status::Invalid;
            result.problems.push(
                "it declared the findings contract but its --json output is not a findings \
                 envelope (a JSON object with a findings list)"
                    .to_string(),
            );
            result.output = Some(combined(stdout, stderr));
        }
    }
}

/// What `--describe` gave.
struct Described {
    declaration: Result<Declaration, String>,
    /// Whether stdout looked like a JSON object, i.e. the script tried to declare something.
    printed_json: bool,
    /// It never answered (timed out, or could not be started): it may well be a contract
    /// check on a busy machine.
    unanswered: bool,
}

/// Asks `.scripts/<name>` for its declaration, within the describe timeout.
fn describe(root: &Path, name: &str, settings: &ScriptSettings) -> Described {
    let path = root.join(SCRIPTS_DIR).join(name);
    let args = [OsString::from("--describe")];
    let outcome = execute(root, &path, &args, &settings.python, settings.describe_timeout);
    let declaration = match &outcome {
        Outcome::Failed(why) => Err(why.clone()),
        Outcome::TimedOut { .. } => Err(format!(
            "--describe took longer than {} and was stopped",
            seconds(settings.describe_timeout)
        )),
        Outcome::Exited { status, stdout, stderr } => match status.code() {
            Some(0) => parse_declaration(stdout),
            Some(code) => {
                Err(with_last_line(format!("--describe exited with status {code}"), stderr))
            }
            None => Err(with_last_line("--describe was killed by a signal".to_string(), stderr)),
        },
    };
    let printed_json =
        matches!(&outcome, Outcome::Exited { stdout, .. } if stdout.trim_start().starts_with('{'));
    let unanswered = matches!(&outcome, Outcome::Failed(_) | Outcome::TimedOut { .. });
    Described { declaration, printed_json, unanswered }
}

/// File names of the candidate scripts, sorted: regular files (not symlinks) ending in `.py`
/// directly in `.scripts/`, with UTF-8 names not starting with a dot (editor and sync leftovers).
fn script_files(root: &Path) -> Vec<String> {
    let dir = root.join(SCRIPTS_DIR);
    match fs::symlink_metadata(&dir) {
        Ok(meta) if meta.is_dir() => {}
        Ok(meta) if meta.file_type().is_symlink() => {
            tracing::warn!(dir = %dir.display(), "a symlinked .scripts folder is not run");
            return Vec::new();
        }
        _ => return Vec::new(),
    }
    let Ok(entries) = fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|entry| {
            // `DirEntry::file_type` does not follow symlinks: a link is never a regular file here.
            let regular = entry.file_type().is_ok_and(|t| t.is_file());
            if !regular && entry.file_type().is_ok_and(|t| t.is_symlink()) {
                tracing::warn!(path = %entry.path().display(), "a symlinked script is not run");
            }
            regular
        })
        .filter_map(|entry| entry.file_name().into_string().ok())
        .filter(|name| name.ends_with(".py") && name.len() > 3 && !name.starts_with('.'))
        .collect();
    names.sort();
    names
}

/// The declaration a legacy script gets: its file stem as the check name, a title made from it,
/// and an order that lists it after every contract check.
fn legacy_declaration(file_name: &str) -> Declaration {
    let stem = file_name.strip_suffix(".py").unwrap_or(file_name);
    let words = stem.replace('_', " ");
    let words = words.trim();
    let mut chars = words.chars();
    let title = match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => stem.to_string(),
    };
    Declaration {
        schema: super::findings::SCHEMA,
        check: stem.to_string(),
        title,
        description: "A pre-contract script: its output is shown as it printed it.".to_string(),
        order: LEGACY_ORDER,
    }
}

/// How a process ended.
enum Outcome {
    /// It exited, on its own or by a signal.
    Exited { status: ExitStatus, stdout: String, stderr: String },
    /// It was stopped at the timeout.
    TimedOut { stderr: String },
    /// It could not be started or watched; the sentence says why.
    Failed(String),
}

/// Runs `<python> <script> <args…>` under the rules in the module header.
fn execute(
    root: &Path,
    script: &Path,
    args: &[OsString],
    python: &str,
    timeout: Duration,
) -> Outcome {
    let mut command = Command::new(python);
    command
        .arg(script)
        .args(args)
        .current_dir(root)
        .env_clear()
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("PYTHONIOENCODING", "utf-8")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    if let Some(path) = std::env::var_os("PATH") {
        command.env("PATH", path);
    }

    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => return Outcome::Failed(launch_failure(python, &e)),
    };
    let stdout = child.stdout.take().map(|pipe| drain(pipe, Keep::Head(STDOUT_LIMIT)));
    let stderr = child.stderr.take().map(|pipe| drain(pipe, Keep::Tail(STDERR_KEEP)));

    let deadline = Instant::now() + timeout;
    let mut pause = Duration::from_millis(2);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) if Instant::now() >= deadline => {
                kill_group(&mut child);
                let _ = child.wait();
                break Err(None);
            }
            Ok(None) => {
                thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            Err(e) => {
                kill_group(&mut child);
                let _ = child.wait();
                break Err(Some(format!("lost track of the script's process: {e}")));
            }
        }
    };

    let stdout = collect(stdout, &mut child);
    let stderr = collect(stderr, &mut child);
    match status {
        Ok(status) => Outcome::Exited { status, stdout, stderr },
        Err(None) => Outcome::TimedOut { stderr },
        Err(Some(why)) => Outcome::Failed(why),
    }
}

fn launch_failure(python: &str, e: &io::Error) -> String {
    let what = if e.kind() == io::ErrorKind::NotFound {
        "it was not found".to_string()
    } else {
        e.to_string()
    };
    format!(
        "could not start the Python interpreter `{python}`: {what}; install python3, or set \
         maintenance.python to the interpreter's path"
    )
}

/// Kills the child's whole process group (it leads its own, see `process_group(0)`), and the
/// child itself should the group signal fail.
fn kill_group(child: &mut Child) {
    let Ok(group) = libc::pid_t::try_from(child.id()) else {
        let _ = child.kill();
        return;
    };
    // SAFETY: kill(2) with a negative pid signals that process group; it touches no memory.
    let sent = unsafe { libc::kill(-group, libc::SIGKILL) } == 0;
    if !sent {
        let _ = child.kill();
    }
}

/// Which part of a stream to keep.
#[derive(Clone, Copy)]
enum Keep {
    /// The first n bytes.
    Head(usize),
    /// The last n bytes.
    Tail(usize),
}

/// What a drain thread read: the kept bytes and how many it dropped.
type Drained = (Vec<u8>, usize);

/// Reads `pipe` to its end on a thread, keeping part of it, and hands the result back on a
/// channel so the caller can stop waiting.
fn drain(mut pipe: impl Read + Send + 'static, keep: Keep) -> Receiver<Drained> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut kept = Vec::new();
        let mut dropped = 0usize;
        let mut buf = [0u8; 8192];
        loop {
            let n = match pipe.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            };
            match keep {
                Keep::Head(limit) => {
                    let room = limit.saturating_sub(kept.len()).min(n);
                    kept.extend_from_slice(&buf[..room]);
                    dropped += n - room;
                }
                Keep::Tail(limit) => {
                    kept.extend_from_slice(&buf[..n]);
                    // Trim in batches rather than per read, to keep it linear.
                    if kept.len() > 2 * limit {
                        let cut = kept.len() - limit;
                        kept.drain(..cut);
                        dropped += cut;
                    }
                }
            }
        }
        if let Keep::Tail(limit) = keep
            && kept.len() > limit
        {
            let cut = kept.len() - limit;
            kept.drain(..cut);
            dropped += cut;
        }
        let _ = tx.send((kept, dropped));
    });
    rx
}

/// Waits for a drained stream after the process ended. If something the script started still
/// holds the pipe, its process group is killed after a grace period; if even that does not close
/// the pipe (the holder left the group), the output is abandoned.
fn collect(rx: Option<Receiver<Drained>>, child: &mut Child) -> String {
    let Some(rx) = rx else {
        return String::new();
    };
    let received = rx.recv_timeout(PIPE_GRACE).or_else(|_| {
        // The child is reaped, but its group id stays reserved while any member (the likely
        // holder of the pipe) lives, so this reaches only what the script left behind.
        kill_group(child);
        rx.recv_timeout(PIPE_GRACE)
    });
    match received {
        Ok((bytes, 0)) => String::from_utf8_lossy(&bytes).into_owned(),
        Ok((bytes, dropped)) => {
            format!("{}\n[… {dropped} more bytes were cut]", String::from_utf8_lossy(&bytes))
        }
        Err(_) => "[the output was abandoned: a process the script started kept it open]".into(),
    }
}

/// A legacy result's text: stdout, then stderr under a label when there is any.
fn combined(stdout: &str, stderr: &str) -> String {
    let stdout = stdout.trim_end();
    let stderr = stderr.trim_end();
    match (stdout.is_empty(), stderr.is_empty()) {
        (_, true) => stdout.to_string(),
        (true, false) => format!("stderr:\n{stderr}"),
        (false, false) => format!("{stdout}\n\nstderr:\n{stderr}"),
    }
}

/// The last `STDERR_TAIL_CHARS` characters of stderr, or `None` when it is empty.
fn tail(stderr: &str) -> Option<String> {
    let trimmed = stderr.trim_end();
    if trimmed.is_empty() {
        return None;
    }
    let count = trimmed.chars().count();
    Some(trimmed.chars().skip(count.saturating_sub(STDERR_TAIL_CHARS)).collect())
}

/// `what: <last non-empty stderr line>`, or just `what` when stderr is empty.
fn with_last_line(what: String, stderr: &str) -> String {
    match stderr.lines().map(str::trim).rfind(|l| !l.is_empty()) {
        Some(line) => format!("{what}: {line}"),
        None => what,
    }
}

/// `10 s`, `1.5 s`.
fn seconds(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 { format!("{s:.0} s") } else { format!("{s} s") }
}

/// The vault root as an absolute path, so `--vault-path` still names it from inside the child
/// (whose working directory is the root itself).
fn absolute(root: &Path) -> PathBuf {
    fs::canonicalize(root)
        .or_else(|_| std::path::absolute(root))
        .unwrap_or_else(|_| root.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::upkeep::findings::{Run, Severity, finding_id};
    use std::os::unix::fs::symlink;
    use tempfile::TempDir;

    const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/checks");

    fn settings() -> ScriptSettings {
        ScriptSettings {
            python: "python3".to_string(),
            timeout: Duration::from_secs(20),
            describe_timeout: Duration::from_secs(10),
        }
    }

    /// A vault with the named fixtures in `.scripts/` (and `vaultlib.py`, which they import)
    /// and a few notes.
    fn vault(fixtures: &[&str]) -> TempDir {
        let dir = tempfile::tempdir().unwrap();
        let scripts = dir.path().join(SCRIPTS_DIR);
        fs::create_dir(&scripts).unwrap();
        for name in fixtures.iter().chain(&["vaultlib.py"]) {
            fs::copy(Path::new(FIXTURES).join(name), scripts.join(name)).unwrap();
        }
        fs::create_dir_all(dir.path().join("Home")).unwrap();
        fs::write(dir.path().join("Home/Titled.md"), "---\ntitle: Titled\n---\nText.\n").unwrap();
        dir
    }

    fn write_script(vault: &TempDir, name: &str, body: &str) {
        fs::write(vault.path().join(SCRIPTS_DIR).join(name), body).unwrap();
    }

    /// A contract check named `name` whose `--json` run executes `body` (Python, indented by
    /// four spaces inside `main`).
    fn contract_script(check: &str, body: &str) -> String {
        format!(
            "import json, os, sys, subprocess, time\n\
             D = {{'schema': 2, 'check': '{check}', 'title': 'T {check}', 'description': 'd', 'order': 5}}\n\
             def main():\n\
             \x20   if '--describe' in sys.argv:\n\
             \x20       print(json.dumps(D)); return 0\n\
             {body}\n\
             sys.exit(main())\n"
        )
    }

    fn find<'a>(scripts: &'a [Script], check: &str) -> &'a Script {
        scripts.iter().find(|s| s.declaration.check == check).unwrap()
    }

    #[test]
    fn discovery_keeps_checks_and_legacy_sorted_and_omits_helpers() {
        let v = vault(&[
            "check_tidy.py",
            "check_crash.py",
            "check_legacy.py",
            "check_slow.py",
            "check_sloppy.py",
        ]);
        let scripts = discover(v.path(), &settings());
        let checks: Vec<&str> = scripts.iter().map(|s| s.declaration.check.as_str()).collect();
        assert_eq!(checks, ["tidy", "crash", "slow", "sloppy", "check_legacy"]);
        assert!(scripts.iter().all(|s| s.script != ".scripts/vaultlib.py"));

        let tidy = find(&scripts, "tidy");
        assert_eq!(tidy.script, ".scripts/check_tidy.py");
        assert!(!tidy.legacy);
        assert_eq!(tidy.describe_problem, None);
        assert_eq!((tidy.declaration.order, tidy.declaration.title.as_str()), (10, "Tidy notes"));

        let legacy = find(&scripts, "check_legacy");
        assert!(legacy.legacy);
        assert_eq!(legacy.declaration.title, "Check legacy");
        assert_eq!(
            legacy.declaration.description,
            "A pre-contract script: its output is shown as it printed it."
        );
        assert_eq!(legacy.declaration.order, LEGACY_ORDER);
        let why = legacy.describe_problem.as_deref().unwrap();
        assert!(why.starts_with("--describe exited with status 2: "), "{why}");
        assert!(why.contains("--describe"), "{why}");
    }

    #[test]
    fn discovery_of_an_empty_or_missing_folder_and_what_is_not_a_script() {
        let bare = tempfile::tempdir().unwrap();
        assert!(discover(bare.path(), &settings()).is_empty());

        let v = vault(&["check_tidy.py"]);
        let scripts_dir = v.path().join(SCRIPTS_DIR);
        // A symlink to a real check, a check in a subfolder, a non-Python file and a dotfile
        // are all ignored.
        symlink(Path::new(FIXTURES).join("check_sloppy.py"), scripts_dir.join("check_link.py"))
            .unwrap();
        fs::create_dir(scripts_dir.join("sub")).unwrap();
        fs::copy(
            Path::new(FIXTURES).join("check_crash.py"),
            scripts_dir.join("sub/check_crash.py"),
        )
        .unwrap();
        fs::copy(Path::new(FIXTURES).join("check_crash.py"), scripts_dir.join("check_crash.txt"))
            .unwrap();
        fs::copy(Path::new(FIXTURES).join("check_crash.py"), scripts_dir.join(".check_crash.py"))
            .unwrap();
        let scripts = discover(v.path(), &settings());
        let names: Vec<&str> = scripts.iter().map(|s| s.script.as_str()).collect();
        assert_eq!(names, [".scripts/check_tidy.py"]);

        // A symlinked .scripts folder is not followed.
        let other = tempfile::tempdir().unwrap();
        symlink(&scripts_dir, other.path().join(SCRIPTS_DIR)).unwrap();
        assert!(discover(other.path(), &settings()).is_empty());
    }

    #[test]
    fn a_tidy_vault_passes() {
        let v = vault(&["check_tidy.py"]);
        let scripts = discover(v.path(), &settings());
        let r = run(v.path(), &scripts[0], &settings());
        assert_eq!(r.status, Status::Passed, "{r:#?}");
        assert_eq!(r.exit_code, Some(0));
        assert_eq!(r.counts, Counts::default());
        assert_eq!(r.source, Source::Script { script: ".scripts/check_tidy.py".into() });
        assert!(r.problems.is_empty() && r.error.is_none() && r.output.is_none());
    }

    #[test]
    fn an_untidy_vault_fails_with_counted_findings() {
        let v = vault(&["check_tidy.py"]);
        fs::write(v.path().join("Home/Untitled.md"), "Just text.\n").unwrap();
        fs::write(v.path().join("Empty.md"), "").unwrap();
        // Dotted folders are not notes.
        fs::create_dir(v.path().join(".obsidian")).unwrap();
        fs::write(v.path().join(".obsidian/x.md"), "").unwrap();
        let scripts = discover(v.path(), &settings());
        let r = run(v.path(), &scripts[0], &settings());
        assert_eq!(r.status, Status::Failed, "{r:#?}");
        assert_eq!(r.exit_code, Some(1));
        assert_eq!(r.counts, Counts { error: 1, warning: 2, info: 0 });
        let empty = r.findings.iter().find(|f| f.severity == Severity::Error).unwrap();
        assert_eq!((empty.code.as_str(), empty.path.as_deref()), ("empty_note", Some("Empty.md")));
        // The fixture derives ids exactly as mdvault does.
        assert_eq!(empty.id, finding_id("tidy", "empty_note", &["Empty.md"]));

        let report = Run {
            vault: "v".into(),
            generated_at: "2026-01-01T00:00:00Z".into(),
            duration_ms: 1,
            checks: vec![r],
        };
        assert_eq!(report.exit_code(), 1);
        assert!(report.markdown().contains("### 1. Tidy notes (`tidy`)"));
    }

    #[test]
    fn a_crash_could_not_run_with_the_traceback() {
        let v = vault(&["check_crash.py"]);
        let scripts = discover(v.path(), &settings());
        let r = run(v.path(), &scripts[0], &settings());
        assert_eq!(r.status, Status::CouldNotRun, "{r:#?}");
        assert_eq!(r.exit_code, Some(1));
        assert_eq!(
            r.error.as_deref(),
            Some("exited with status 1: RuntimeError: cannot read the rules file 'rules.yaml'")
        );
        let output = r.output.as_deref().unwrap();
        assert!(output.starts_with("Traceback (most recent call last):"), "{output}");
        assert!(r.findings.is_empty());
    }

    #[test]
    fn a_declared_check_that_prints_and_then_crashes_could_not_run() {
        let v = vault(&[]);
        let body = "    print('scanning the vault...', flush=True)\n    raise RuntimeError('boom')";
        write_script(&v, "check_half.py", &contract_script("half", body));
        let scripts = discover(v.path(), &settings());
        let r = run(v.path(), &scripts[0], &settings());
        assert_eq!(r.status, Status::CouldNotRun, "{r:#?}");
        assert_eq!(r.exit_code, Some(1));
        assert!(r.output.as_deref().unwrap().contains("boom"), "{r:#?}");
    }

    #[test]
    fn a_check_too_slow_to_describe_itself_still_runs_with_json() {
        let v = vault(&[]);
        write_script(
            &v,
            "check_sleepy.py",
            "import json, sys, time\n\
             D = {'schema': 2, 'check': 'sleepy', 'title': 'S', 'description': 'd', 'order': 1}\n\
             if '--describe' in sys.argv:\n\
             \x20   time.sleep(5); print(json.dumps(D)); sys.exit(0)\n\
             f = {'id': 'x', 'severity': 'error', 'code': 'boom', 'message': 'm'}\n\
             print(json.dumps(dict(D, findings=[f]))); sys.exit(1)\n",
        );
        let quick = ScriptSettings { describe_timeout: Duration::from_millis(500), ..settings() };
        let scripts = discover(v.path(), &quick);
        assert_eq!(scripts.len(), 1);
        assert!(!scripts[0].legacy, "{:?}", scripts[0]);
        assert!(scripts[0].describe_problem.as_deref().unwrap().contains("took longer"));
        let r = run(v.path(), &scripts[0], &quick);
        // Its error finding is not lost to a legacy text block.
        assert_eq!(r.status, Status::Invalid, "{r:#?}");
        assert_eq!(r.counts.error, 1);
    }

    #[test]
    fn a_legacy_script_is_shown_as_printed() {
        let v = vault(&["check_legacy.py"]);
        let scripts = discover(v.path(), &settings());
        let r = run(v.path(), &scripts[0], &settings());
        assert_eq!(r.status, Status::Legacy, "{r:#?}");
        assert_eq!(r.exit_code, Some(1));
        assert_eq!(
            r.output.as_deref(),
            Some(
                "Legacy vault report\nNotes seen: 1\n\
                 Problem: the old way of checking found something to look at"
            )
        );
        assert!(r.findings.is_empty() && r.problems.is_empty());
    }

    #[test]
    fn a_slow_script_is_stopped_at_the_timeout() {
        let v = vault(&["check_slow.py"]);
        let quick = ScriptSettings { timeout: Duration::from_secs(3), ..settings() };
        let scripts = discover(v.path(), &quick);
        let started = Instant::now();
        let r = run(v.path(), &scripts[0], &quick);
        let took = started.elapsed();
        assert_eq!(r.status, Status::CouldNotRun, "{r:#?}");
        assert_eq!(r.error.as_deref(), Some("took longer than 3 s and was stopped"));
        assert_eq!(r.exit_code, None);
        assert!(took >= Duration::from_secs(3) && took < Duration::from_secs(6), "{took:?}");
    }

    #[test]
    fn a_sloppy_script_is_invalid_with_each_problem_named() {
        let v = vault(&["check_sloppy.py"]);
        let scripts = discover(v.path(), &settings());
        let r = run(v.path(), &scripts[0], &settings());
        assert_eq!(r.status, Status::Invalid, "{r:#?}");
        assert_eq!(r.exit_code, Some(0));
        assert_eq!(r.counts, Counts { error: 1, warning: 1, info: 1 });
        assert_eq!(r.problems.len(), 4, "{:#?}", r.problems);
        assert!(r.problems[0].contains("\"BadCode\", which is not snake_case"));
        assert!(r.problems[1].contains("share the id \"dup\""));
        assert!(r.problems[2].contains("\"fatal\" is not one of error, warning, info"));
        assert!(
            r.problems[3].contains("exited with status 0 although it reported 1 error finding")
        );
        let run_of =
            Run { vault: "v".into(), generated_at: "t".into(), duration_ms: 0, checks: vec![r] };
        assert_eq!(run_of.exit_code(), 2);
    }

    #[test]
    fn the_child_gets_a_bare_environment_the_vault_as_cwd_and_a_fixed_argv() {
        let v = vault(&[]);
        write_script(
            &v,
            "check_env.py",
            &contract_script(
                "env_probe",
                "    print(json.dumps({'env': sorted(os.environ), 'cwd': os.getcwd(), \
                 'argv': sys.argv[1:]}))\n    return 0",
            ),
        );
        // The real interpreter, not a launcher shim (pyenv's adds its own PYENV_* variables):
        // what is asserted is exactly what the script itself receives.
        let resolved = Command::new("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .unwrap();
        let python = String::from_utf8(resolved.stdout).unwrap().trim().to_string();
        let direct = ScriptSettings { python, ..settings() };
        let scripts = discover(v.path(), &direct);
        assert_eq!(scripts.len(), 1);
        assert!(!scripts[0].legacy);
        let r = run(v.path(), &scripts[0], &direct);
        // Not a findings document, exit 0: a declared check that broke its promise, with its
        // output carried through for the reader.
        assert_eq!(r.status, Status::Invalid, "{r:#?}");
        assert!(r.problems[0].contains("not a findings envelope"), "{:?}", r.problems);
        let seen: serde_json::Value = serde_json::from_str(r.output.as_deref().unwrap()).unwrap();
        let allowed = ["PATH", "PYTHONDONTWRITEBYTECODE", "PYTHONIOENCODING", "LC_CTYPE"];
        let env: Vec<&str> =
            seen["env"].as_array().unwrap().iter().map(|k| k.as_str().unwrap()).collect();
        assert!(env.iter().all(|k| allowed.contains(k)), "leaked into the child: {env:?}");
        assert!(env.contains(&"PATH") && env.contains(&"PYTHONIOENCODING"));
        let root = fs::canonicalize(v.path()).unwrap();
        assert_eq!(seen["cwd"], root.to_str().unwrap());
        assert_eq!(
            seen["argv"],
            serde_json::json!(["--vault-path", root.to_str().unwrap(), "--json"])
        );
        assert!(!v.path().join(".scripts/__pycache__").exists());
    }

    #[test]
    fn a_missing_interpreter_names_the_fix() {
        let v = vault(&["check_tidy.py"]);
        let missing = ScriptSettings { python: "/nonexistent/python3".into(), ..settings() };
        let scripts = discover(v.path(), &missing);
        // Nothing can be described, so the check_* file is kept (as a check that never
        // answered) to carry the error.
        assert_eq!(scripts.len(), 1);
        assert!(!scripts[0].legacy);
        let r = run(v.path(), &scripts[0], &missing);
        assert_eq!(r.status, Status::CouldNotRun);
        let error = r.error.unwrap();
        assert!(error.contains("not found") && error.contains("maintenance.python"), "{error}");
    }

    #[test]
    fn a_duplicate_check_name_is_kept_but_invalid() {
        let v = vault(&["check_tidy.py"]);
        fs::copy(
            Path::new(FIXTURES).join("check_tidy.py"),
            v.path().join(".scripts/check_tidy2.py"),
        )
        .unwrap();
        let scripts = discover(v.path(), &settings());
        assert_eq!(scripts.len(), 2);
        assert_eq!(scripts[0].describe_problem, None);
        let problem = scripts[1].describe_problem.as_deref().unwrap();
        assert!(
            problem.contains("`tidy` is already declared by .scripts/check_tidy.py"),
            "{problem}"
        );
        let r = run(v.path(), &scripts[1], &settings());
        assert_eq!(r.status, Status::Invalid);
        assert_eq!(r.problems, [problem]);
    }

    #[test]
    fn exit_two_means_could_not_run_with_or_without_findings() {
        let v = vault(&[]);
        write_script(
            &v,
            "check_refuse.py",
            &contract_script("refuse", "    print('no config', file=sys.stderr)\n    return 2"),
        );
        write_script(
            &v,
            "check_partial.py",
            &contract_script(
                "partial",
                "    print(json.dumps(dict(D, findings=[{'id': 'a', 'severity': 'warning', \
                 'code': 'half_done', 'message': 'm'}])))\n    print('ran out of time', file=sys.stderr)\n    return 2",
            ),
        );
        let scripts = discover(v.path(), &settings());
        let refuse = run(v.path(), find(&scripts, "refuse"), &settings());
        assert_eq!(refuse.status, Status::CouldNotRun);
        assert_eq!(refuse.error.as_deref(), Some("exited with status 2: no config"));
        assert_eq!(refuse.output.as_deref(), Some("no config"));
        let partial = run(v.path(), find(&scripts, "partial"), &settings());
        assert_eq!(partial.status, Status::CouldNotRun, "{partial:#?}");
        assert_eq!(partial.counts.warning, 1);
        assert!(partial.problems.is_empty());
        assert!(partial.error.unwrap().ends_with("could not run): ran out of time"));
    }

    #[test]
    fn chatty_scripts_do_not_deadlock_and_children_die_with_them() {
        let v = vault(&[]);
        // 2 MB of stderr before the envelope: would block forever on an undrained pipe.
        write_script(
            &v,
            "check_chatty.py",
            &contract_script(
                "chatty",
                "    sys.stderr.write('x' * 2_000_000)\n    print(json.dumps(dict(D, findings=[])))\n    return 0",
            ),
        );
        // Exits at once but leaves a child holding stdout open for a minute.
        write_script(
            &v,
            "check_orphan.py",
            &contract_script(
                "orphan",
                "    print(json.dumps(dict(D, findings=[])), flush=True)\n    subprocess.Popen(['sleep', '60'])\n    return 0",
            ),
        );
        // Times out while its own child sleeps too.
        write_script(
            &v,
            "check_family.py",
            &contract_script("family", "    subprocess.Popen(['sleep', '60'])\n    time.sleep(60)"),
        );
        // The two that must pass get a timeout a loaded machine cannot reach (a Python start
        // and 2 MB through a pipe took over 2 s with both cores busy); the orphan's bound stays
        // well under it and under its child's minute, so waiting for the child still fails.
        let patient = ScriptSettings { timeout: Duration::from_secs(40), ..settings() };
        let quick = ScriptSettings { timeout: Duration::from_secs(2), ..settings() };
        let scripts = discover(v.path(), &quick);

        let chatty = run(v.path(), find(&scripts, "chatty"), &patient);
        assert_eq!(chatty.status, Status::Passed, "{:?}", chatty.error);

        let started = Instant::now();
        let orphan = run(v.path(), find(&scripts, "orphan"), &patient);
        assert_eq!(orphan.status, Status::Passed, "{orphan:#?}");
        assert!(started.elapsed() < Duration::from_secs(20), "{:?}", started.elapsed());

        let started = Instant::now();
        let family = run(v.path(), find(&scripts, "family"), &quick);
        assert_eq!(family.status, Status::CouldNotRun);
        // Had the sleeping child survived the kill, collecting the pipes would have taken the
        // grace period twice and then given up.
        assert!(started.elapsed() < Duration::from_millis(5500), "{:?}", started.elapsed());
        assert!(family.output.is_none(), "{:?}", family.output);
    }

    #[test]
    fn a_describe_that_hangs_is_stopped() {
        let v = vault(&[]);
        write_script(&v, "check_hang.py", "import time\ntime.sleep(60)\n");
        let quick = ScriptSettings { describe_timeout: Duration::from_secs(1), ..settings() };
        let started = Instant::now();
        let scripts = discover(v.path(), &quick);
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(scripts.len(), 1);
        assert!(!scripts[0].legacy, "a check that never answered is not taken for legacy");
        assert_eq!(
            scripts[0].describe_problem.as_deref(),
            Some("--describe took longer than 1 s and was stopped")
        );
    }

    #[test]
    fn only_regular_files_in_the_scripts_folder_run() {
        let v = vault(&["check_tidy.py"]);
        let scripts = discover(v.path(), &settings());
        let mut outside = scripts[0].clone();
        outside.script = ".scripts/../check_tidy.py".into();
        let r = run(v.path(), &outside, &settings());
        assert_eq!(r.status, Status::CouldNotRun);
        assert!(r.error.unwrap().contains("not a script directly in .scripts/"));

        // Swapped for a symlink after discovery.
        let path = v.path().join(".scripts/check_tidy.py");
        fs::remove_file(&path).unwrap();
        symlink(Path::new(FIXTURES).join("check_tidy.py"), &path).unwrap();
        let r = run(v.path(), &scripts[0], &settings());
        assert_eq!(r.status, Status::CouldNotRun);
        assert!(r.error.unwrap().contains("no longer a regular file"));
    }

    #[test]
    fn small_helpers() {
        assert_eq!(seconds(Duration::from_secs(10)), "10 s");
        assert_eq!(seconds(Duration::from_millis(1500)), "1.5 s");
        assert_eq!(legacy_declaration("check_old_links.py").title, "Check old links");
        assert_eq!(legacy_declaration("check_old_links.py").check, "check_old_links");
        assert_eq!(combined("out\n", ""), "out");
        assert_eq!(combined("", "err\n"), "stderr:\nerr");
        assert_eq!(combined("out", "err"), "out\n\nstderr:\nerr");
        assert_eq!(tail(" \n"), None);
        let long = "é".repeat(3000);
        assert_eq!(tail(&long).unwrap().chars().count(), STDERR_TAIL_CHARS);
        assert_eq!(with_last_line("x".into(), "a\nlast\n\n"), "x: last");
        assert_eq!(with_last_line("x".into(), ""), "x");
    }
}
