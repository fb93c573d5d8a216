//! A real MCP client: the official Python SDK drives both transports.
//!
//! `tests/mcp_client.py` runs in the venv `scripts/pyenv.sh` makes (`scripts/test.sh` makes it
//! before the tests; `MDVAULT_PYTHON` names another interpreter). The SDK opens with a
//! `server/discover` probe, so this also proves the server answers it rather than hanging.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

use crate::common::{KEY, Server, TempVault, model_dir};

pub fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("MDVAULT_PYTHON") {
        return PathBuf::from(p);
    }
    let venv = std::env::var_os("MDVAULT_PYENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/pyenv"));
    let p = venv.join("bin/python");
    assert!(
        p.is_file(),
        "no Python with the MCP SDK at {}; run scripts/pyenv.sh (scripts/test.sh does)",
        p.display()
    );
    p
}

fn drive(args: &[String], env: &[(&str, &str)]) -> Value {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_client.py");
    let out =
        Command::new(python()).arg(script).args(args).envs(env.iter().copied()).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the SDK driver failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

fn check(report: &Value, v: &TempVault) {
    assert_eq!(report["server_name"], "mdvault", "{report}");
    let tools = report["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 24, "{report}");
    assert_eq!(report["search"]["error"], false, "{report}");
    assert!(report["search"]["text"].as_str().unwrap().contains("Home/Boiler.md"), "{report}");
    assert!(report["read"]["text"].as_str().unwrap().contains("1.3 bar"), "{report}");
    assert!(report["map"]["text"].as_str().unwrap().contains("::Settings"), "{report}");
    assert_eq!(report["patch"]["error"], false, "{report}");
    assert!(report["patch"]["text"].as_str().unwrap().starts_with("appended to '"), "{report}");
    assert_eq!(report["refused"]["error"], true, "{report}");
    assert!(report["refused"]["text"].as_str().unwrap().contains("no_such_heading"), "{report}");
    assert!(v.read("Home/Boiler.md").contains("Checked by the Python SDK driver."));

    let prompts: Vec<&str> =
        report["prompts"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert_eq!(
        prompts,
        ["daily_review", "file_document", "maintenance_pass", "note_from_template"],
        "{report}"
    );
    let text = |name: &str| report["prompt_texts"][name].as_str().unwrap_or_default().to_string();
    // The fixture's open callout, and the broken link and template `with_extras` adds.
    assert!(text("daily_review").contains("Do not overfill"), "{report}");
    assert!(text("maintenance_pass").contains("Inbox/Broken.md"), "{report}");
    assert!(text("maintenance_pass").contains("Fix: vault_links on Inbox/Broken.md"), "{report}");
    assert!(text("file_document").contains("vault_move"), "{report}");
    assert!(text("note_from_template").contains("# Kickoff"), "{report}");
    assert!(text("note_from_template").contains("vault_write with path `Kickoff.md`"), "{report}");
    assert!(report["prompt_texts"]["unknown"].as_str().unwrap().contains("the prompts are"));

    assert_eq!(report["set_level_error"], Value::Null, "{report}");
    let logs = report["logs"].as_array().unwrap();
    let refusal = logs.iter().find(|l| l["data"]["event"] == "refused");
    let refusal = refusal.unwrap_or_else(|| panic!("no refusal was logged: {report}"));
    assert_eq!(refusal["logger"], "mdvault", "{report}");
    assert_eq!(refusal["level"], "warning", "{report}");
    assert_eq!(refusal["data"]["tool"], "vault_patch", "{report}");
    assert!(refusal["data"]["message"].as_str().unwrap().contains("no_such_heading"), "{report}");
}

/// The fixture vault plus a note with a broken link and a template, for the prompts.
fn with_extras() -> TempVault {
    let v = TempVault::fixture();
    v.write("Inbox/Broken.md", "# Broken\n\nSee [[No Such Note Anywhere]].\n");
    v.write("Templates/Meeting.md", "# {{title}}\n\nHeld on {{date}}.\n");
    v
}

#[test]
fn the_python_sdk_drives_streamable_http() {
    let v = with_extras();
    let s = Server::start(&[format!("fixture={}", v.root().display())], &[]);
    let report = drive(&["http".into(), format!("{}/mcp", s.base), KEY.into()], &[]);
    check(&report, &v);
}

#[test]
fn the_python_sdk_drives_stdio() {
    let v = with_extras();
    let data = tempfile::tempdir().unwrap();
    // Index first, so the stdio server's background build has nothing left to do and search
    // is ready as soon as the SDK asks.
    let vault = format!("fixture={}", v.root().display());
    let bin = env!("CARGO_BIN_EXE_mdvault").to_string();
    let common =
        ["--vault".to_string(), vault, "--data-dir".to_string(), data.path().display().to_string()];
    let model = model_dir().display().to_string();
    let status = Command::new(&bin)
        .arg("index")
        .args(&common)
        .env("MDVAULT_EMBEDDING__MODEL_DIR", &model)
        .env("MDVAULT_CONFIG", "")
        .status()
        .unwrap();
    assert!(status.success());
    // The SDK gives the child a minimal environment; the driver passes MDVAULT_* through.
    let mut args = vec!["stdio".to_string(), bin, "mcp".to_string()];
    args.extend(common);
    let report = drive(&args, &[("MDVAULT_EMBEDDING__MODEL_DIR", &model), ("MDVAULT_CONFIG", "")]);
    check(&report, &v);
}
