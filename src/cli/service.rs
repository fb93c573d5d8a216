//! `mdvault service install`: the systemd user units for `serve` and a nightly `index`.
//!
//! The units are the templates in `contrib/systemd/`, compiled in, with this binary's path and
//! the environment file filled in. The environment file (`~/.config/mdvault/env`, 0600) holds
//! the API key, so it never appears in a unit or a process list. Installing writes files and
//! prints the `systemctl` lines to run; it never enables or starts anything itself.

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

use super::{Failure, print};
use crate::config::Config;

const SERVE: &str = include_str!("../../contrib/systemd/mdvault.service");
const INDEX: &str = include_str!("../../contrib/systemd/mdvault-index.service");
const TIMER: &str = include_str!("../../contrib/systemd/mdvault-index.timer");

/// `mdvault service`.
#[derive(Debug, Subcommand)]
pub enum ServiceCommand {
    /// Write the systemd user units (serve, and a nightly index timer) and the environment
    /// file with the API key; print how to enable them. Enables nothing by itself.
    #[command(
        after_help = "Examples:\n  mdvault service install --vault ~/Notes\n  mdvault service install --force   # rewrite units that differ"
    )]
    Install(InstallArgs),
}

/// `mdvault service install`.
#[derive(Debug, Args)]
pub struct InstallArgs {
    /// Replace units or an environment file that exist and differ.
    #[arg(long)]
    force: bool,
}

fn fail(msg: impl Into<String>) -> Failure {
    Failure::Config(msg.into())
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

/// The key for the environment file: the one in use, the one installed before, the one
/// `start.sh` kept, or a new one.
fn api_key(config: &Config, env_file: &Path) -> Result<(String, &'static str), Failure> {
    if let Ok(k) = std::env::var("MDVAULT_API_KEY")
        && !k.trim().is_empty()
    {
        return Ok((k.trim().to_string(), "from MDVAULT_API_KEY"));
    }
    let installed = std::fs::read_to_string(env_file).unwrap_or_default();
    if let Some(k) = installed.lines().find_map(|l| l.strip_prefix("MDVAULT_API_KEY="))
        && !k.trim().is_empty()
    {
        return Ok((k.trim().to_string(), "kept from the installed environment file"));
    }
    if let Ok(k) = std::fs::read_to_string(config.data_dir.join("api-key"))
        && !k.trim().is_empty()
    {
        return Ok((k.trim().to_string(), "from the data directory's api-key"));
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

pub fn run(config: &Config, cmd: ServiceCommand) -> Result<(), Failure> {
    let ServiceCommand::Install(args) = cmd;
    let home = config_home()?;
    let bin = std::env::current_exe()
        .and_then(|p| p.canonicalize())
        .map_err(|e| fail(format!("cannot tell where this mdvault binary is: {e}")))?;
    let bin_text = bin.to_string_lossy();
    if bin_text.contains(char::is_whitespace) {
        return Err(fail(format!(
            "the binary's path {bin_text} has a space, which systemd's ExecStart would split; \
             copy mdvault to a path without one (e.g. ~/.local/bin) and run it from there"
        )));
    }
    let env_file = home.join("mdvault").join("env");
    let units = home.join("systemd").join("user");
    let fill =
        |t: &str| t.replace("@BIN@", &bin_text).replace("@ENVFILE@", &env_file.to_string_lossy());

    let (key, origin) = api_key(config, &env_file)?;
    let mut env = format!(
        "# mdvault's service environment (read by the systemd user units; keep it 0600).\n\
         MDVAULT_API_KEY={key}\n"
    );
    // The vaults this command was given (--vault, MDVAULT_VAULTS or the config file): the
    // service must serve the same ones even if it runs with another environment.
    let vaults: Vec<String> =
        config.vaults.iter().map(|v| format!("{}={}", v.name, v.root.display())).collect();
    if !vaults.is_empty() {
        env.push_str(&format!("MDVAULT_VAULTS={}\n", vaults.join(",")));
    }
    if let Some(file) = &config.file {
        env.push_str(&format!("MDVAULT_CONFIG={}\n", file.display()));
    }
    env.push_str(&format!("MDVAULT_DATA_DIR={}\n", config.data_dir.display()));

    let mut report = Vec::new();
    let env_state = put(&env_file, &env, true, args.force)?;
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
