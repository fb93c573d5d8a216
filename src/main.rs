//! The `mdvault` binary: everything lives in the library; see `mdvault::cli`.

fn main() -> std::process::ExitCode {
    mdvault::cli::main()
}
