//! The command line: argument parsing, dispatch, and printing for people and scripts.
//!
//! Each subcommand is a thin call into the engine; the confirmations it prints are the ones
//! REST and MCP return. A refusal prints `error[code]: message` on stderr and exits 1; a usage
//! or configuration problem exits 2. This module owns clap; nothing below it knows clap exists.

mod audit;
mod bench;
mod cold;
mod coldstart;
mod doctor;
mod eval;
mod load;
mod memory;
mod migrate;
mod model;
pub(crate) mod notes;
mod scan;
mod search;
mod service;
mod sessions;
mod tokens;
mod upkeep;

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use crate::config::{self, ConfigError, Overrides};
use crate::engine::Engine;
use crate::error::Error;
use crate::vault::Vaults;

/// mdvault: search, read and edit a Markdown vault from the shell, from agents (MCP) and over
/// REST.
#[derive(Debug, Parser)]
#[command(name = "mdvault", version, about, max_term_width = 100)]
pub(crate) struct Cli {
    #[command(flatten)]
    global: GlobalArgs,
    #[command(subcommand)]
    command: Command,
}

/// Flags every subcommand takes, before or after its name.
#[derive(Debug, Args)]
struct GlobalArgs {
    /// A vault as PATH or NAME=PATH; repeat for several (the first is the default).
    /// Overrides MDVAULT_VAULTS and the config file's `vaults:`. A bare NAME that is not a
    /// folder picks one configured vault instead (`search`, `index`).
    #[arg(long = "vault", value_name = "[NAME=]PATH", global = true)]
    vaults: Vec<String>,
    /// The config file [env: MDVAULT_CONFIG] (default: $XDG_CONFIG_HOME/mdvault/config.yaml,
    /// if present).
    #[arg(long, value_name = "FILE", global = true)]
    config: Option<PathBuf>,
    /// Where the index and models live [env: MDVAULT_DATA_DIR] (default:
    /// $XDG_DATA_HOME/mdvault).
    #[arg(long, value_name = "DIR", global = true)]
    data_dir: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Bring the search index up to date, then exit.
    #[command(after_help = "Examples:\n  mdvault index --vault ~/Notes\n  mdvault index --full")]
    Index(search::IndexArgs),
    /// Search by meaning and by exact token, and print the best passages.
    #[command(
        after_help = "Examples:\n  mdvault search \"when is the boiler serviced\"\n  mdvault search NB-7726041 --explain\n  mdvault search \"notice period\" --prefix Personal -k 3 --json"
    )]
    Search(search::SearchArgs),
    /// Measure this machine: embedding, indexing, search latency at 1k/10k/100k chunks,
    /// warm start, edit-to-searchable and memory. Prints figures; asserts nothing.
    #[command(
        after_help = "Examples:\n  mdvault bench\n  mdvault bench --scales 1000,10000 --json\n  mdvault bench --compare-python --real-vault ~/Notes"
    )]
    Bench(bench::BenchArgs),
    /// Score search against judged queries, every mode side by side (hit@k, MRR, nDCG,
    /// crowding, leaks, latency), and fail on a regression against a recorded baseline.
    #[command(
        after_help = "Examples:\n  mdvault eval tests/eval/queries.json --vault tests/fixtures/vault\n  mdvault eval queries.json --baseline baseline.json            # exit 1 on a regression\n  mdvault eval queries.json --baseline baseline.json --update-baseline\n  mdvault eval ~/beir/scifact --modes lexical,hybrid --json     # a BEIR folder"
    )]
    Eval(eval::EvalArgs),
    /// Serve REST and MCP over HTTP (MCP at /mcp), indexing in the background and watching
    /// the vaults. Needs MDVAULT_API_KEY.
    #[command(
        after_help = "Examples:\n  MDVAULT_API_KEY=$(openssl rand -hex 24) mdvault serve --vault ~/Notes\n  mdvault serve --listen 0.0.0.0:8080   # also set server.allowed_hosts"
    )]
    Serve(ServeArgs),
    /// Serve MCP over stdin and stdout (for agents that start the server themselves),
    /// indexing in the background and watching the vaults. Logs go to stderr.
    #[command(
        after_help = "Example client entry:\n  {\"command\": \"mdvault\", \"args\": [\"mcp\", \"--vault\", \"/home/me/Notes\"]}"
    )]
    Mcp,
    /// Run the maintenance checks (built in, and the vault's own `.scripts/`) and list the
    /// findings. Exits 1 when a finding is an error, 2 when a check could not run.
    #[command(
        after_help = "Examples:\n  mdvault check\n  mdvault check --list\n  mdvault check --json > findings.json"
    )]
    Check(upkeep::CheckArgs),
    /// How much of each vault is searchable: notes, documents and chunks indexed, files that
    /// failed or gave no text (and why), files skipped by rule, stale entries, the last build.
    /// Reads the index without loading the model, so it works beside a running server.
    #[command(after_help = "Examples:\n  mdvault status\n  mdvault status --vault notes --json")]
    Status(doctor::StatusArgs),
    /// Check that this setup can work: config, API key, vaults, model, store, watcher limits
    /// and PDF tools. One line per check; each problem says how to fix it. Exits 1 on a problem.
    #[command(after_help = "Examples:\n  mdvault doctor\n  mdvault doctor --json")]
    Doctor(doctor::DoctorArgs),
    /// Regenerate the vault's index.md now (a server keeps it up to date when index.index_md is on).
    #[command(name = "index-md", after_help = "Example:\n  mdvault index-md --vault ~/Notes")]
    IndexMd,
    /// List the open callouts (`> [!todo]`, `> [!warning]`, ...), most urgent first.
    #[command(
        after_help = "Examples:\n  mdvault callouts\n  mdvault callouts --dir Projects --json"
    )]
    Callouts(upkeep::CalloutsArgs),
    /// List the tags (frontmatter and inline `#tags`) as a tree with how many notes carry
    /// each, a nested tag counting for its parents; with TAG, the notes carrying it. `tags
    /// rename OLD NEW` renames or merges a tag in every note.
    #[command(
        after_help = "Examples:\n  mdvault tags\n  mdvault tags project\n  mdvault tags '#project/alpha' --json\n  mdvault tags rename project work --dry-run"
    )]
    Tags(upkeep::TagsArgs),
    /// Which embedding model the index uses; install the default one; switch to another
    /// (states the re-embedding cost first).
    #[command(
        subcommand,
        after_help = "Examples:\n  mdvault model list\n  mdvault model fetch\n  mdvault model use ~/models/bge-small-en-v1.5"
    )]
    Model(model::ModelCommand),
    /// Install the systemd user units (serve, and a nightly index) with the API key in a
    /// private environment file. Prints how to enable them; enables nothing itself.
    #[command(subcommand, after_help = "Example:\n  mdvault service install --vault ~/Notes")]
    Service(service::ServiceCommand),
    /// List the web page's signed-in sessions, or end them (one by id, or all); a running
    /// server on the same data directory refuses a revoked session at its next request.
    #[command(
        subcommand,
        after_help = "Examples:\n  mdvault sessions list\n  mdvault sessions revoke 3f9a\n  mdvault sessions revoke --all"
    )]
    Sessions(sessions::SessionsCommand),
    /// Make, list or revoke clients' static tokens, each with its rights (vaults, folders,
    /// read-only, tools); a running server on the same data directory refuses a revoked token
    /// at its next request.
    #[command(
        subcommand,
        after_help = "Examples:\n  mdvault token create phone --vault notes --read-only\n  mdvault token create inbox-bot --allow Inbox/ --deny Private/\n  mdvault token list\n  mdvault token revoke phone"
    )]
    Token(tokens::TokenCommand),
    /// List the audit trail: every write with its client, time (UTC), vault, path and kind,
    /// newest first.
    #[command(
        after_help = "Examples:\n  mdvault audit\n  mdvault audit --client phone --since 2026-05-01\n  mdvault audit --path Inbox/ --limit 20 --json"
    )]
    Audit(audit::AuditArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish or powershell).
    #[command(
        after_help = "Examples:\n  mdvault completions bash > ~/.local/share/bash-completion/completions/mdvault\n  mdvault completions zsh > ~/.zfunc/_mdvault\n  mdvault completions fish > ~/.config/fish/completions/mdvault.fish"
    )]
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// List every dated commitment (the `expires` frontmatter), oldest first.
    #[command(
        after_help = "Examples:\n  mdvault expiries --within 60\n  mdvault expiries --untracked --dir Home"
    )]
    Expiries(upkeep::ExpiriesArgs),
    /// Carry a predecessor's setup over: read the vault MCP server's config.yaml or
    /// vault-search's vaults.json plus their variables, print what maps to what, and with
    /// --write add it to mdvault's config file (never overwriting a key it already sets).
    #[command(
        after_help = "Examples:\n  mdvault migrate --from ~/vault-mcp/config.yaml\n  mdvault migrate --from ~/.config/vault-search/vaults.json --write\n  VAULT_MCP_CONFIG=/app/config.yaml mdvault migrate --write --config ./mdvault.yaml"
    )]
    Migrate(migrate::MigrateArgs),
    #[command(flatten)]
    Notes(notes::NoteCommand),
}

/// `mdvault serve`.
#[derive(Debug, Args)]
struct ServeArgs {
    /// The address to bind [env: MDVAULT_LISTEN] (default: server.listen, 127.0.0.1:8080).
    #[arg(long, value_name = "ADDR")]
    listen: Option<String>,
}

/// What went wrong, and so which exit status to use.
#[derive(Debug)]
pub(crate) enum Failure {
    /// An engine refusal: exit 1.
    Refused(Error),
    /// A configuration or start-up problem: exit 2.
    Config(String),
    /// The command printed its own report and sets this status (`check`).
    Exit(u8),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        Failure::Refused(e)
    }
}

impl From<ConfigError> for Failure {
    fn from(e: ConfigError) -> Failure {
        Failure::Config(e.0)
    }
}

/// Parses the process arguments, runs the command and returns the exit status.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    // A server is watched by people: show what it is doing. Commands print their own results.
    let serving = matches!(cli.command, Command::Serve(_) | Command::Mcp);
    init_logging(if serving { "mdvault=info,warn" } else { "warn" });
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Refused(e)) => {
            eprintln!("error[{}]: {}", e.code(), e.message());
            ExitCode::from(1)
        }
        Err(Failure::Config(msg)) => {
            eprintln!("error: {msg}");
            ExitCode::from(2)
        }
        Err(Failure::Exit(code)) => ExitCode::from(code),
    }
}

fn run(mut cli: Cli) -> Result<(), Failure> {
    // `token create --vault NAME` grants configured vaults; it declares and picks none.
    let granted = match cli.command {
        Command::Token(_) => std::mem::take(&mut cli.global.vaults),
        _ => Vec::new(),
    };
    // `--vault NAME` selects a configured vault; `--vault PATH` or `NAME=PATH` declares one.
    // Both spellings are in the interface, so both are honoured, by one rule: a bare word
    // that names a configured vault is that vault, even when a folder of that name is in the
    // working directory (write `./notes` for the folder); any other bare word must be a folder.
    let configured: Vec<String> = {
        let plain = Overrides {
            config_file: cli.global.config.clone(),
            vaults: Vec::new(),
            data_dir: cli.global.data_dir.clone(),
        };
        config::load(&plain, &config::ProcessEnv)
            .map(|c| c.vaults.into_iter().map(|v| v.name).collect())
            .unwrap_or_default()
    };
    let (selectors, specs) = split_vault_flags(cli.global.vaults, &configured)?;
    if selectors.len() > 1 {
        return Err(Failure::Config(format!(
            "pick at most one vault, not {}",
            selectors.join(" and ")
        )));
    }
    let only = selectors.into_iter().next();
    let overrides =
        Overrides { config_file: cli.global.config, vaults: specs, data_dir: cli.global.data_dir };
    let kept = overrides.clone();
    if let Command::Completions { shell } = cli.command {
        // Needs no configuration: it only describes the command line.
        let mut cmd = <Cli as clap::CommandFactory>::command();
        let mut out = std::io::stdout().lock();
        clap_complete::generate(shell, &mut cmd, "mdvault", &mut out);
        return Ok(());
    }
    if let Command::Migrate(args) = cli.command {
        // Runs before the config loads: the old names it carries over would refuse to start.
        return migrate::run(args, kept.config_file);
    }
    let loaded = config::load(&overrides, &config::ProcessEnv);
    if let Command::Doctor(args) = cli.command {
        // The doctor reports a configuration that does not load instead of stopping at it.
        return doctor::doctor(loaded, args);
    }
    let config = loaded?;
    match cli.command {
        Command::Doctor(_) | Command::Completions { .. } | Command::Migrate(_) => {
            unreachable!("handled above")
        }
        Command::Service(cmd) => service::run(&config, cmd),
        Command::Sessions(cmd) => sessions::run(&config, cmd),
        Command::Token(cmd) => tokens::run(&config, granted, cmd),
        Command::Audit(args) => audit::run(&config, args),
        Command::Model(cmd) => model::run(&config, &kept, cmd),
        Command::Notes(cmd) => notes::run(&open_light(config)?, only.as_deref(), cmd),
        Command::Index(args) => search::index(config, only.as_deref(), args),
        Command::Search(args) => search::search(&open_engine(config)?, only.as_deref(), args),
        Command::Bench(args) => bench::run(&config, args),
        Command::Eval(args) => eval::run(&config, only.as_deref(), args),
        Command::Status(args) => {
            doctor::status(&config, &open_vaults(&config)?, only.as_deref(), args)
        }
        Command::Check(args) => upkeep::check(&open_light(config)?, only.as_deref(), args),
        Command::IndexMd => upkeep::index_md(&open_light(config)?, only.as_deref()),
        Command::Callouts(args) => upkeep::callouts(&open_light(config)?, only.as_deref(), args),
        Command::Tags(args) => upkeep::tags(&open_light(config)?, only.as_deref(), args),
        Command::Expiries(args) => upkeep::expiries(&open_light(config)?, only.as_deref(), args),
        Command::Serve(args) => {
            let listen = args.listen.unwrap_or_else(|| config.server.listen.clone());
            let key = std::env::var("MDVAULT_API_KEY").unwrap_or_default();
            if key.trim().is_empty() {
                return Err(Failure::Config(
                    "no API key: set MDVAULT_API_KEY to a secret of your choice (for example \
                     `export MDVAULT_API_KEY=$(openssl rand -hex 24)`); serve never runs without one"
                        .into(),
                ));
            }
            let scheme = if config.server.tls { "https" } else { "http" };
            let engine = std::sync::Arc::new(open_engine(config)?);
            let names: Vec<String> = engine
                .vaults()
                .iter()
                .map(|v| format!("{} ({})", v.name(), v.root().display()))
                .collect();
            crate::api::serve(engine, &key, &listen, |addr| {
                eprintln!("mdvault {} serving {}", env!("CARGO_PKG_VERSION"), names.join(", "));
                eprintln!("  UI    {scheme}://{addr}/ui/   (sign in with $MDVAULT_API_KEY)");
                eprintln!(
                    "  REST  {scheme}://{addr}/vault/   search: {scheme}://{addr}/search?q=..."
                );
                eprintln!(
                    "  MCP   {scheme}://{addr}/mcp   (Authorization: Bearer $MDVAULT_API_KEY)"
                );
                if scheme == "https" {
                    eprintln!(
                        "  TLS   self-signed; its certificate: {scheme}://{addr}/obsidian-local-rest-api.crt"
                    );
                }
                eprintln!("  the index builds in the background; /readyz says when it is ready");
            })
            .map_err(|e| Failure::Config(e.0))
        }
        Command::Mcp => {
            let engine = std::sync::Arc::new(open_engine(config)?);
            crate::api::serve_stdio(engine).map_err(|e| Failure::Config(e.0))
        }
    }
}

/// Sorts `--vault` values into selectors of configured vaults and declarations of vaults: see
/// the rule in [`run`]. A bare word that is neither a configured name nor a folder is refused.
fn split_vault_flags(
    flags: Vec<String>,
    configured: &[String],
) -> Result<(Vec<String>, Vec<String>), Failure> {
    let (mut selectors, mut specs) = (Vec::new(), Vec::new());
    for flag in flags {
        let bare = !flag.contains(['=', '/']);
        if bare && flag == crate::vault::ALL_VAULTS && !configured.contains(&flag) {
            // Every vault: what no selection means.
            continue;
        }
        if bare && configured.contains(&flag) {
            if std::path::Path::new(&flag).is_dir() {
                eprintln!(
                    "note: --vault {flag} is the configured vault '{flag}', not the folder ./{flag} \
                     (write --vault ./{flag} for the folder)"
                );
            }
            selectors.push(flag);
        } else if bare && !std::path::Path::new(&flag).is_dir() {
            let names = if configured.is_empty() {
                "no vault is configured".to_string()
            } else {
                format!("the configured vaults are {}", configured.join(", "))
            };
            return Err(Failure::Config(format!(
                "--vault {flag}: there is no configured vault of that name and no folder \
                 ./{flag}; {names}"
            )));
        } else {
            specs.push(flag);
        }
    }
    Ok((selectors, specs))
}

/// The front door without the model, for the note and upkeep commands.
fn open_light(config: config::Config) -> Result<crate::engine::LightEngine, Failure> {
    crate::engine::LightEngine::open(config).map_err(|e| Failure::Config(e.message().to_string()))
}

/// Opens the vaults alone, for commands that need no model or index.
fn open_vaults(config: &config::Config) -> Result<Vaults, Failure> {
    Vaults::open(config).map_err(|e| Failure::Config(e.message().to_string()))
}

/// Opens the engine; a missing model or unreadable store is a start-up problem (exit 2).
fn open_engine(config: config::Config) -> Result<Engine, Failure> {
    Engine::open(config).map_err(|e| Failure::Config(e.message().to_string()))
}

/// Prints to stdout, treating a closed pipe (`| head`) as success.
fn print(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    if !text.ends_with('\n') {
        let _ = out.write_all(b"\n");
    }
    let _ = out.flush();
}

fn print_json(value: &impl serde::Serialize) {
    print(&serde_json::to_string_pretty(value).unwrap_or_default());
}

/// Whether to colour output bound for a stream: only a terminal, and never when `NO_COLOR`
/// is set to anything but the empty string (the no-color.org convention).
pub(crate) fn colour(is_terminal: bool) -> bool {
    is_terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// Logs go to stderr (stdout belongs to results, and to the MCP protocol under `mcp`).
/// `MDVAULT_LOG` (or `RUST_LOG`) sets the filter; the default is `default`.
fn init_logging(default: &str) {
    let filter = std::env::var("MDVAULT_LOG")
        .or_else(|_| std::env::var("RUST_LOG"))
        .unwrap_or_else(|_| default.to_string());
    // The PDF parser warns about every odd file it meets (an encrypted one, say); the
    // extraction verdict already says what went wrong, so only its errors are worth a line.
    let filter = format!("lopdf=error,pdf_extract=error,{filter}");
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        .with_writer(std::io::stderr)
        .with_ansi(colour(std::io::stderr().is_terminal()))
        .try_init();
}
