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
    // A refusal carries no structured content (strict clients validate any that comes).
    assert_eq!(report["refused"]["structured"], false, "{report}");
    assert_eq!(report["output_schemas"].as_array().unwrap().len(), 22, "{report}");
    // Every typed tool answered, with structured content that fits its outputSchema by the
    // SDK's own check and by jsonschema's.
    for call in report["typed"].as_array().unwrap() {
        assert_eq!(call["sdk_error"], Value::Null, "{call}");
        assert_eq!(call["error"], false, "{call}");
        assert_eq!(call["structured"], true, "{call}");
        assert_eq!(call["problem"], Value::Null, "{call}");
    }
    assert!(v.read("Home/Boiler.md").contains("Checked by the Python SDK driver."));
}

#[test]
fn the_python_sdk_drives_streamable_http() {
    let v = TempVault::fixture();
    let s = Server::start(&[format!("fixture={}", v.root().display())], &[]);
    let report = drive(&["http".into(), format!("{}/mcp", s.base), KEY.into()], &[]);
    check(&report, &v);
}

#[test]
fn the_python_sdk_drives_stdio() {
    let v = TempVault::fixture();
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
