//! `mdvault migrate`: carry a predecessor's setup (the vault MCP server's, or vault-search's)
//! over to an mdvault config.
//!
//! The mapping lives in `config::migrate`; this module finds the files, prints the table, the
//! environment lines and the MCP client entry, and (only under `--write`) writes the config
//! file mdvault reads. Writing merges into an existing file and refuses a key it already sets
//! differently; a file that already says everything is left byte for byte as it was, so running
//! it twice changes nothing. The written file is loaded back before the command succeeds, and
//! the old text restored if that fails.

use std::path::{Path, PathBuf};

use clap::Args;

use super::{Failure, print};
use crate::config::migrate::{self, Merged, Plan};
use crate::config::{self, Env, Overrides, ProcessEnv};
use crate::wire::{McpClientConfig, McpHeaders, McpServer, McpServers};

/// `mdvault migrate`.
#[derive(Debug, Args)]
pub(crate) struct MigrateArgs {
    /// The predecessor's config: the vault MCP server's config.yaml or vault-search's
    /// vaults.json (default: VAULT_MCP_CONFIG or VAULT_SEARCH_CONFIG, or vault-search's
    /// ~/.config/vault-search/vaults.json).
    #[arg(long, value_name = "FILE")]
    from: Option<PathBuf>,
    /// Write the settings into mdvault's config file (--config, MDVAULT_CONFIG or
    /// ~/.config/mdvault/config.yaml), adding to what it holds; without it nothing is written.
    #[arg(long)]
    write: bool,
}

/// The environment without the predecessors' variables: what mdvault sees once the user has
/// followed the printed advice, used to check the written file on its own merits.
struct WithoutPredecessors<'a>(&'a dyn Env);

impl Env for WithoutPredecessors<'_> {
    fn var(&self, name: &str) -> Option<String> {
        if migrate::predecessor_vars().contains(&name) { None } else { self.0.var(name) }
    }

    fn with_prefix(&self, prefix: &str) -> Vec<(String, String)> {
        self.0.with_prefix(prefix)
    }
}

/// Runs `mdvault migrate`; `config_file` is the global `--config`.
pub(crate) fn run(args: MigrateArgs, config_file: Option<PathBuf>) -> Result<(), Failure> {
    let env = ProcessEnv;
    let (predecessor, source) = migrate::detect(args.from.as_deref(), &env)?;
    let plan = migrate::plan(predecessor, source.as_deref(), &env)?;
    let default = config::default_file(&env);
    let target = match (config_file, env.var("MDVAULT_CONFIG")) {
        (Some(p), _) if !p.as_os_str().is_empty() => p,
        (None, Some(p)) if !p.trim().is_empty() => PathBuf::from(p),
        (None, None) => default.clone().ok_or_else(|| {
            Failure::Config("cannot find a config location: set HOME or pass --config FILE".into())
        })?,
        _ => {
            return Err(Failure::Config(
                "--config or MDVAULT_CONFIG is empty (no config file); name the file to write \
                 with --config FILE"
                    .into(),
            ));
        }
    };
    let same_file = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    };
    if plan.source.as_deref().is_some_and(|s| same_file(s, &target)) {
        return Err(Failure::Config(format!(
            "{} is {}'s own file, which migrate reads and never writes; name another with \
             --config FILE (or unset MDVAULT_CONFIG)",
            target.display(),
            predecessor.label()
        )));
    }
    let custom = default.as_deref() != Some(target.as_path());
    print(&render(&plan, &target, custom));
    if !args.write {
        print(&format!(
            "Nothing written. Run `mdvault migrate{} --write` to write {}.",
            args.from.as_ref().map(|p| format!(" --from {}", p.display())).unwrap_or_default(),
            target.display()
        ));
        return Ok(());
    }
    write(&plan, &target)
}

fn write(plan: &Plan, target: &Path) -> Result<(), Failure> {
    let existing = match std::fs::read_to_string(target) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            return Err(Failure::Config(format!("cannot read {}: {e}", target.display())));
        }
    };
    let base = existing.clone().unwrap_or_else(|| {
        format!(
            "# Written by `mdvault migrate` from {}'s setup{}.\n# Every key: config.example.yaml \
             and docs/configuration.md.\n",
            plan.predecessor.label(),
            plan.source.as_ref().map(|p| format!(" ({})", p.display())).unwrap_or_default()
        )
    });
    let (text, added) = match migrate::merge(&base, &plan.settings, target)? {
        Merged::Unchanged if existing.is_some() => {
            print(&format!("{} already holds all of this; nothing changed.", target.display()));
            return Ok(());
        }
        Merged::Unchanged => (base, Vec::new()),
        Merged::Text(text, added) => (text, added),
    };
    if let Some(dir) = target.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| Failure::Config(format!("cannot create {}: {e}", dir.display())))?;
    }
    replace(target, &text)?;
    let check = Overrides { config_file: Some(target.to_path_buf()), ..Overrides::default() };
    if let Err(e) = config::load(&check, &WithoutPredecessors(&ProcessEnv)) {
        // Keep the user's file as it was: a config that does not load is worse than none.
        match &existing {
            Some(old) => replace(target, old)?,
            None => {
                let _ = std::fs::remove_file(target);
            }
        }
        return Err(Failure::Config(format!(
            "the migrated config did not load, so {} was left as it was: {}",
            target.display(),
            e.0
        )));
    }
    print(&format!(
        "Wrote {} ({} key{} added). Set the environment lines above, then start mdvault.",
        target.display(),
        added.len(),
        if added.len() == 1 { "" } else { "s" }
    ));
    Ok(())
}

/// Replaces `path`'s content in one step (a temporary beside it, renamed over it).
fn replace(path: &Path, text: &str) -> Result<(), Failure> {
    let tmp = path.with_extension(format!("migrate-{}.tmp", std::process::id()));
    std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, path)).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Failure::Config(format!("cannot write {}: {e}", path.display()))
    })
}

/// The table, the settings as YAML, the environment lines and the MCP client entry.
fn render(plan: &Plan, target: &Path, custom: bool) -> String {
    let mut out = format!(
        "Migrating {}'s setup{}\n\n",
        plan.predecessor.label(),
        plan.source.as_ref().map(|p| format!(" ({})", p.display())).unwrap_or_default()
    );
    let header = ["SETTING", "FROM", "VALUE", "MDVAULT", "OUTCOME", "WHY"];
    let cells: Vec<[String; 6]> = plan
        .rows
        .iter()
        .map(|r| {
            [
                r.old.clone(),
                r.layer.to_string(),
                clip(&r.value),
                r.new.clone(),
                r.outcome.as_str().to_string(),
                r.why.clone(),
            ]
        })
        .collect();
    let mut widths = header.map(str::len);
    for row in &cells {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |row: &[String]| {
        let mut s = String::new();
        for (i, c) in row.iter().enumerate() {
            if i + 1 == row.len() {
                s.push_str(c);
            } else {
                s.push_str(&format!("{c:<w$}  ", w = widths[i]));
            }
        }
        s.trim_end().to_string() + "\n"
    };
    out.push_str(&line(&header.map(String::from)));
    for row in &cells {
        out.push_str(&line(row));
    }
    let yaml = match migrate::merge("", &plan.settings, target) {
        Ok(Merged::Text(text, _)) => text,
        _ => String::new(),
    };
    out.push_str(&format!("\nmdvault config ({}):\n", target.display()));
    for l in yaml.lines() {
        out.push_str(&format!("  {l}\n"));
    }
    out.push_str("\nEnvironment (instead of the old variables):\n");
    if plan.env_lines.is_empty() && !custom && plan.unset.is_empty() {
        out.push_str("  (nothing to set)\n");
    }
    for l in &plan.env_lines {
        out.push_str(&format!("  export {l}\n"));
    }
    if custom {
        out.push_str(&format!(
            "  export MDVAULT_CONFIG={}\n",
            shell_word(&target.display().to_string())
        ));
    }
    if !plan.unset.is_empty() {
        out.push_str(&format!("  unset {}\n", plan.unset.join(" ")));
    }
    let mut args = vec!["mcp".to_string()];
    if custom {
        args.extend(["--config".to_string(), target.display().to_string()]);
    }
    let stdio = client_config(McpServer::Stdio { command: "mdvault", args });
    out.push_str("\nMCP client (stdio: the client starts `mdvault mcp` itself):\n");
    out.push_str(&format!("  {stdio}\n"));
    if plan.http_mcp {
        let listen = plan
            .settings
            .iter()
            .find(|s| s.path() == "server.listen")
            .and_then(|s| s.value.as_str().map(str::to_string))
            .unwrap_or_else(|| "127.0.0.1:8080".into());
        let listen = listen.replace("0.0.0.0", "127.0.0.1");
        let http = client_config(McpServer::Http {
            url: format!("http://{listen}/mcp"),
            headers: McpHeaders { authorization: "Bearer ${MDVAULT_API_KEY}" },
        });
        out.push_str("MCP client (HTTP, as before: `mdvault serve` answers at /mcp):\n");
        out.push_str(&format!("  {http}\n"));
    }
    out
}

/// An MCP client's `mcpServers` entry for mdvault, as one line of JSON to paste.
fn client_config(mdvault: McpServer) -> String {
    let config = McpClientConfig { mcp_servers: McpServers { mdvault } };
    serde_json::to_string(&config).unwrap_or_default()
}

/// A long value cut for the table (the written file has it whole).
fn clip(s: &str) -> String {
    const MAX: usize = 48;
    if s.chars().count() <= MAX {
        s.to_string()
    } else {
        s.chars().take(MAX - 3).collect::<String>() + "..."
    }
}

/// A word as the shell reads it: quoted when it holds anything but plain path characters.
fn shell_word(s: &str) -> String {
    if s.chars().all(|c| c.is_ascii_alphanumeric() || "/._-~".contains(c)) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}
