//! `mdvault service install`: the systemd user units for `serve` and a nightly `index`.
//!
//! The units are the templates in `contrib/systemd/`, compiled in, with this binary's path and
//! the environment file filled in. The environment file (`~/.config/mdvault/env`, 0600) holds
//! the API key, so it never appears in a unit or a process list. Installing writes files and
//! prints the `systemctl` lines to run; it never enables or starts anything itself.

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

use super::{Failure, print};
use crate::config::{Config, escape_vault_entry};

const SERVE: &str = include_str!("../../contrib/systemd/mdvault.service");
const INDEX: &str = include_str!("../../contrib/systemd/mdvault-index.service");
const TIMER: &str = include_str!("../../contrib/systemd/mdvault-index.timer");

/// `mdvault service`.
#[derive(Debug, Subcommand)]
pub(crate) enum ServiceCommand {
    /// Write the systemd user units (serve, and a nightly index timer) and the environment
    /// file with the API key; print how to enable them. Enables nothing by itself.
    #[command(
        after_help = "Examples:\n  mdvault service install --vault ~/Notes\n  mdvault service install --force   # rewrite units that differ"
    )]
    Install(InstallArgs),
}

/// `mdvault service install`.
#[derive(Debug, Args)]
pub(crate) struct InstallArgs {
    /// Replace units or an environment file that exist and differ.
    #[arg(long)]
    force: bool,
}

fn fail(msg: impl Into<String>) -> Failure {
    Failure::Config(msg.into())
}

/// The environment file the units read: `$XDG_CONFIG_HOME/mdvault/env` (`~/.config/...`).
pub(super) fn env_file() -> Result<PathBuf, Failure> {
    Ok(config_home()?.join("mdvault").join("env"))
}

/// One `KEY="value"` line of a systemd environment file. Inside double quotes systemd (and a
/// shell that sources the file) unescapes `\\`, `\"`, `\$` and `` \` ``, so any value but
/// one with a line break survives the trip.
fn env_line(key: &str, value: &str) -> Result<String, Failure> {
    if value.contains(['\n', '\r']) {
        return Err(fail(format!(
            "{key} would hold a line break, which an environment file cannot"
        )));
    }
    let mut out = format!("{key}=\"");
    for c in value.chars() {
        if matches!(c, '\\' | '"' | '$' | '`') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push_str("\"\n");
    Ok(out)
}

/// The assignments of an environment file, unquoted the way systemd reads them (double or
/// single quotes, backslash escapes in double quotes); comments and malformed lines skipped.
pub(super) fn read_env_file(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with(['#', ';']) {
            continue;
        }
        let Some((key, raw)) = line.split_once('=') else { continue };
        let raw = raw.trim();
        let value = if let Some(inner) = raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
            let mut v = String::new();
            let mut chars = inner.chars();
            while let Some(c) = chars.next() {
                match (c, chars.clone().next()) {
                    ('\\', Some(n @ ('\\' | '"' | '$' | '`'))) => {
                        v.push(n);
                        chars.next();
                    }
                    _ => v.push(c),
                }
            }
            v
        } else if let Some(inner) = raw.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')) {
            inner.to_string()
        } else {
            raw.to_string()
        };
        out.push((key.trim().to_string(), value));
    }
    out
}

/// The value of `key` in the environment file at `path`, if it has a non-empty one.
pub(super) fn env_file_value(path: &Path, key: &str) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    read_env_file(&text)
        .into_iter()
        .rev()
        .find(|(k, v)| k == key && !v.trim().is_empty())
        .map(|(_, v)| v.trim().to_string())
}

/// This binary's path as the user reached it: `~/.local/bin/mdvault` stays that link rather
/// than becoming the build folder it points into (a rebuild or a moved checkout then needs no
/// re-install). Falls back to the resolved path when argv[0] does not lead to this binary.
fn binary_path() -> Result<PathBuf, Failure> {
    let real = std::env::current_exe()
        .map_err(|e| fail(format!("cannot tell where this mdvault binary is: {e}")))?;
    let same = |p: &Path| {
        use std::os::unix::fs::MetadataExt;
        match (std::fs::metadata(p), std::fs::metadata(&real)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    };
    let invoked = std::env::args_os().next().map(PathBuf::from);
    let found = invoked.and_then(|a| {
        if a.components().count() > 1 {
            std::path::absolute(&a).ok()
        } else {
            crate::docs::tools::on_path(&a.to_string_lossy())
        }
    });
    Ok(match found {
        Some(p) if same(&p) => p,
        _ => real,
    })
}

fn config_home() -> Result<PathBuf, Failure> {
    match std::env::var_os("XDG_CONFIG_HOME").filter(|s| !s.is_empty()) {
        Some(x) => Ok(PathBuf::from(x)),
        None => std::env::var_os("HOME")
            .filter(|s| !s.is_empty())
            .map(|h| PathBuf::from(h).join(".config"))
            .ok_or_else(|| fail("cannot find your config folder: set HOME or XDG_CONFIG_HOME")),
    }
}

/// The API keys this user already has, most authoritative first and without repeats: the
/// shell's MDVAULT_API_KEY, the one installed in the units' environment file, and the one
/// `start.sh` kept in the data directory. Each comes with where it was found.
pub(super) fn known_keys(data_dir: &Path) -> Vec<(String, &'static str)> {
    let candidates = [
        (std::env::var("MDVAULT_API_KEY").ok(), "from MDVAULT_API_KEY"),
        (
            env_file().ok().and_then(|f| env_file_value(&f, "MDVAULT_API_KEY")),
            "kept from the installed environment file",
        ),
        (
            std::fs::read_to_string(data_dir.join("api-key")).ok(),
            "from the data directory's api-key",
        ),
    ];
    let mut out: Vec<(String, &'static str)> = Vec::new();
    for (key, origin) in candidates {
        if let Some(k) = key.map(|k| k.trim().to_string()).filter(|k| !k.is_empty())
            && !out.iter().any(|(seen, _)| *seen == k)
        {
            out.push((k, origin));
        }
    }
    out
}

/// The key for the environment file: the first of [`known_keys`], or a new one.
fn api_key(config: &Config) -> Result<(String, &'static str), Failure> {
    if let Some(first) = known_keys(&config.data_dir).into_iter().next() {
        return Ok(first);
    }
    let mut bytes = [0u8; 24];
    let mut urandom = std::fs::File::open("/dev/urandom")
        .map_err(|e| fail(format!("cannot read /dev/urandom to make a key: {e}")))?;
    std::io::Read::read_exact(&mut urandom, &mut bytes)
        .map_err(|e| fail(format!("cannot read /dev/urandom to make a key: {e}")))?;
    Ok((bytes.iter().map(|b| format!("{b:02x}")).collect(), "newly made"))
}

/// Writes `text` to `path` unless the same text is there; an existing, different file is
/// replaced only with `force`. Returns what happened, for the report.
fn put(path: &Path, text: &str, private: bool, force: bool) -> Result<&'static str, Failure> {
    let io = |e: std::io::Error| fail(format!("cannot write {}: {e}", path.display()));
    match std::fs::read_to_string(path) {
        Ok(old) if old == text => {
            #[cfg(unix)]
            if private {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
                    .map_err(io)?;
            }
            return Ok("unchanged");
        }
        Ok(_) if !force => {
            return Err(fail(format!(
                "{} exists and differs; pass --force to replace it (or remove it first)",
                path.display()
            )));
        }
        _ => {}
    }
    std::fs::create_dir_all(path.parent().unwrap_or(Path::new("."))).map_err(io)?;
    let tmp = path.with_extension("mdvault-tmp");
    let _ = std::fs::remove_file(&tmp);
    {
        // Created with its final mode, so the key is never readable by others, not even
        // for a moment.
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(if private { 0o600 } else { 0o644 })
            .open(&tmp)
            .map_err(io)?;
        f.write_all(text.as_bytes()).map_err(io)?;
    }
    std::fs::rename(&tmp, path).map_err(io)?;
    Ok("written")
}

pub(crate) fn run(config: &Config, cmd: ServiceCommand) -> Result<(), Failure> {
    let ServiceCommand::Install(args) = cmd;
    if config.vaults.is_empty() {
        return Err(fail(
            "no vault to serve: pass --vault ~/Notes (repeatable), set MDVAULT_VAULTS, or list \
             vaults: in the config file, then install again",
        ));
    }
    let home = config_home()?;
    let bin = binary_path()?;
    let env_file = env_file()?;
    // systemd expands `%` specifiers in unit lines (`%%` is a literal percent sign), splits
    // ExecStart= at whitespace and unquotes it, refuses a backslash in an executable's name,
    // and wants EnvironmentFile= normalised. Paths it would misread are refused, not mangled.
    let unit_path = |p: &Path, what: &str, spaces: bool| -> Result<String, Failure> {
        let text = p.to_string_lossy();
        let odd =
            text.contains(['\\', '"', '\'']) || (!spaces && text.contains(char::is_whitespace));
        let unnormalised = p
            .components()
            .any(|c| matches!(c, std::path::Component::CurDir | std::path::Component::ParentDir));
        if odd || unnormalised {
            return Err(fail(format!(
                "{what} {text} has a space, quote, backslash or `..` that a systemd unit would \
                 misread; use a plain path (for the binary, copy it to ~/.local/bin and run it \
                 from there; for the environment file, set XDG_CONFIG_HOME to a plain folder)"
            )));
        }
        Ok(text.replace('%', "%%"))
    };
    let bin_text = unit_path(&bin, "the binary's path", false)?;
    let env_text = unit_path(&env_file, "the environment file", true)?;
    let units = home.join("systemd").join("user");
    let fill = |t: &str| t.replace("@BIN@", &bin_text).replace("@ENVFILE@", &env_text);

    let (key, origin) = api_key(config)?;
    let mut env =
        "# mdvault's service environment (read by the systemd user units; keep it 0600).\n"
            .to_string();
    env.push_str(&env_line("MDVAULT_API_KEY", &key)?);
    // An HTTP embedding endpoint's key travels the same way, so the service can embed; a local
    // model needs none, and a key kept from an earlier endpoint is dropped.
    let http = matches!(config.embedding.backend, crate::config::EmbeddingBackend::Http { .. });
    let embedding_key = std::env::var("MDVAULT_EMBEDDING_API_KEY")
        .ok()
        .filter(|k| http && !k.trim().is_empty())
        .or_else(|| http.then(|| env_file_value(&env_file, "MDVAULT_EMBEDDING_API_KEY")).flatten());
    if let Some(k) = &embedding_key {
        env.push_str(&env_line("MDVAULT_EMBEDDING_API_KEY", k.trim())?);
    }
    // The vaults this command was given (--vault, MDVAULT_VAULTS or the config file): the
    // service must serve the same ones even if it runs with another environment.
    let vaults: Vec<String> = config
        .vaults
        .iter()
        .map(|v| escape_vault_entry(&format!("{}={}", v.name, v.root.display())))
        .collect();
    env.push_str(&env_line("MDVAULT_VAULTS", &vaults.join(","))?);
    if let Some(file) = &config.file {
        env.push_str(&env_line("MDVAULT_CONFIG", &file.to_string_lossy())?);
    }
    env.push_str(&env_line("MDVAULT_DATA_DIR", &config.data_dir.to_string_lossy())?);

    let mut report = Vec::new();
    // A file that says the same in another layout (an earlier version wrote values unquoted)
    // is rewritten without --force: nothing it sets changes.
    let values = |text: &str| {
        read_env_file(text).into_iter().collect::<std::collections::BTreeMap<String, String>>()
    };
    let same_values = std::fs::read_to_string(&env_file)
        .is_ok_and(|old| old != env && values(&old) == values(&env));
    let env_state = match put(&env_file, &env, true, args.force || same_values)? {
        "written" if same_values => "reformatted",
        state => state,
    };
    report.push(format!("{env_state:<9} {} (API key {origin})", env_file.display()));
    for (name, template) in [
        ("mdvault.service", SERVE),
        ("mdvault-index.service", INDEX),
        ("mdvault-index.timer", TIMER),
    ] {
        let path = units.join(name);
        let state = put(&path, &fill(template), false, args.force)?;
        report.push(format!("{state:<9} {}", path.display()));
    }
    print(&format!(
        "{}\n\nNothing is enabled yet. To start the server now and at every login, and to index \
         nightly:\n  systemctl --user daemon-reload\n  systemctl --user enable --now \
         mdvault.service mdvault-index.timer\nTo keep it running while you are logged out:\n  \
         loginctl enable-linger \"$USER\"\nLogs: journalctl --user -u mdvault.service -f",
        report.join("\n")
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_name_the_placeholders_the_installer_fills() {
        for t in [SERVE, INDEX] {
            assert!(t.contains("ExecStart=@BIN@ "), "{t}");
            assert!(t.contains("EnvironmentFile=@ENVFILE@"), "{t}");
        }
        assert!(TIMER.contains("OnCalendar=") && TIMER.contains("Persistent=true"));
    }

    #[test]
    fn environment_lines_read_back_as_written() {
        let values = [
            "plain",
            "notes=/home/me/Work, 2026,b=/x",
            r#"odd "quoted" $HOME `cmd` back\slash"#,
            "50% off",
        ];
        let mut text = String::from("# comment\n\nNOT AN ASSIGNMENT\n");
        for (n, v) in values.iter().enumerate() {
            text.push_str(&env_line(&format!("K{n}"), v).unwrap());
        }
        text.push_str("S='single $kept'\nBARE=as is\n");
        let read = read_env_file(&text);
        let got: Vec<&str> = read.iter().map(|(_, v)| v.as_str()).collect();
        assert_eq!(got[..4], values, "{text}");
        assert_eq!(read[4], ("S".into(), "single $kept".into()));
        assert_eq!(read[5], ("BARE".into(), "as is".into()));
        assert!(env_line("K", "two\nlines").is_err());
    }

    #[test]
    fn put_keeps_identical_files_and_refuses_to_clobber_without_force() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a/unit.service");
        assert_eq!(put(&p, "one", false, false).ok(), Some("written"));
        assert_eq!(put(&p, "one", false, false).ok(), Some("unchanged"));
        assert!(put(&p, "two", false, false).is_err());
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "one");
        assert_eq!(put(&p, "two", true, true).ok(), Some("written"));
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o600);
    }
}
