//! The command line: argument parsing, dispatch, and printing for people and scripts.
//!
//! Each subcommand is a thin call into the engine; the confirmations it prints are the ones
//! REST and MCP return. A refusal prints `error[code]: message` on stderr and exits 1; a usage
//! or configuration problem exits 2. This module owns clap; nothing below it knows clap exists.

mod notes;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use crate::config::{self, ConfigError, Overrides};
use crate::error::Error;
use crate::vault::Vaults;

/// mdvault: search, read and edit a Markdown vault from the shell, from agents (MCP) and over
/// REST.
#[derive(Debug, Parser)]
#[command(name = "mdvault", version, about, max_term_width = 100)]
pub struct Cli {
    #[command(flatten)]
    global: GlobalArgs,
    #[command(subcommand)]
    command: Command,
}

/// Flags every subcommand takes, before or after its name.
#[derive(Debug, Args)]
struct GlobalArgs {
    /// A vault as PATH or NAME=PATH; repeat for several (the first is the default).
    /// Overrides MDVAULT_VAULTS and the config file's `vaults:`.
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
    #[command(flatten)]
    Notes(notes::NoteCommand),
}

/// What went wrong, and so which exit status to use.
pub enum Failure {
    /// An engine refusal: exit 1.
    Refused(Error),
    /// A configuration or start-up problem: exit 2.
    Config(String),
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
    }
}

fn run(cli: Cli) -> Result<(), Failure> {
    let overrides = Overrides {
        config_file: cli.global.config,
        vaults: cli.global.vaults,
        data_dir: cli.global.data_dir,
    };
    let config = config::load(&overrides, &config::ProcessEnv)?;
    match cli.command {
        Command::Notes(cmd) => {
            let vaults =
                Vaults::open(&config).map_err(|e| Failure::Config(e.message().to_string()))?;
            notes::run(&vaults, cmd)
        }
    }
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

fn print_json(value: &serde_json::Value) {
    print(&serde_json::to_string_pretty(value).unwrap_or_default());
}
