//! A real MCP client: the official Python SDK drives both transports.
//!
//! `tests/mcp_client.py` runs in the venv `scripts/pyenv.sh` makes (`scripts/test.sh` makes it
//! before the tests; `MDVAULT_PYTHON` names another interpreter). The SDK opens with a
//! `server/discover` probe, so this also proves the server answers it rather than hanging.
//! Both transports also list every resource to the last cursor, read a note, a PDF (as text
//! and as the original), an image (scaled) and a missing note, and complete a vault and a path,
//! and a prompt's template and heading arguments.

use std::path::PathBuf;
use std::process::Command;

use base64::Engine as _;
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
    check_resources(&report["resources"], v);
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

/// A picture beside the notes, larger than the bound MCP scales images to.
fn with_image(v: &TempVault) {
    std::fs::write(v.root().join("Home/boiler.png"), crate::attachments::png(2048, 512)).unwrap();
}

fn check_resources(r: &Value, v: &TempVault) {
    // Every note, the PDF and the image, each once, across the pages.
    let listed = r["listed"].as_array().unwrap();
    let uris: std::collections::BTreeSet<&str> =
        listed.iter().map(|l| l["uri"].as_str().unwrap()).collect();
    assert_eq!(uris.len(), listed.len(), "a resource was listed twice: {r}");
    let notes = walkdir::WalkDir::new(v.root())
        .into_iter()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "md"))
        .filter_map(|e| e.path().strip_prefix(v.root()).ok().map(|r| r.display().to_string()))
        .filter(|rel| !rel.split('/').any(|part| part.starts_with('.')))
        .count();
    let of = |mime: &str| listed.iter().filter(|l| l["mime_type"] == mime).count();
    assert_eq!((of("text/markdown"), of("application/pdf"), of("image/png")), (notes, 1, 1), "{r}");
    let boiler = listed.iter().find(|l| l["uri"] == "mdvault://fixture/Home/Boiler.md").unwrap();
    assert_eq!(boiler["name"], "Boiler.md");
    assert!(boiler["size"].as_u64().unwrap() > 0);
    assert!(
        uris.contains("mdvault://fixture/Personal/Recipes/%E9%BA%BB%E5%A9%86%E8%B1%86%E8%85%90.md")
    );

    let reads = &r["reads"];
    assert_eq!(reads["note"][0]["mime_type"], "text/markdown", "{r}");
    assert!(reads["note"][0]["text"].as_str().unwrap().contains("1.3 bar"), "{r}");
    assert_eq!(reads["pdf"][0]["mime_type"], "text/plain", "{r}");
    assert!(reads["pdf"][0]["text"].as_str().unwrap().contains("Nordlicht"), "{r}");
    assert_eq!(reads["pdf_original"][0]["mime_type"], "application/pdf", "{r}");
    let blob = |c: &Value| {
        base64::engine::general_purpose::STANDARD.decode(c["blob"].as_str().unwrap()).unwrap()
    };
    let pdf =
        std::fs::read(v.root().join("Home/Utilities/Files/2026-05-02 Nordlicht - Contract.pdf"));
    assert_eq!(blob(&reads["pdf_original"][0]), pdf.unwrap());
    assert_eq!(reads["image"][0]["mime_type"], "image/png", "{r}");
    let shown = image::load_from_memory(&blob(&reads["image"][0])).unwrap();
    assert_eq!((shown.width(), shown.height()), (1024, 256));

    let missing = &r["missing"];
    assert!(missing["code"] == -32002 || missing["code"] == -32602, "{r}");
    assert!(missing["message"].as_str().unwrap().contains("not_found"), "{r}");

    assert_eq!(r["templates"], serde_json::json!(["mdvault://{vault}/{+path}"]));
    assert_eq!(r["complete_vault"], serde_json::json!(["fixture"]));
    let paths = &r["complete_path"];
    assert_eq!(paths["values"][0], "Home/Boiler.md", "{r}");
    assert_eq!(paths["has_more"], false, "{r}");
    assert_eq!(
        paths["total"].as_u64().unwrap() as usize,
        paths["values"].as_array().unwrap().len()
    );
    // A prompt's argument completes too: `note_from_template`'s template to the templates
    // `with_extras` adds, a heading argument to the heading paths of the note `path` names.
    assert_eq!(r["complete_prompt_template"], serde_json::json!(["Meeting"]), "{r}");
    assert_eq!(r["complete_prompt_heading"], serde_json::json!(["Boiler::Settings"]), "{r}");
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
    with_image(&v);
    let s = Server::start(&[format!("fixture={}", v.root().display())], &[]);
    let report = drive(&["http".into(), format!("{}/mcp", s.base), KEY.into()], &[]);
    check(&report, &v);
}

#[test]
fn the_python_sdk_drives_stdio() {
    let v = with_extras();
    with_image(&v);
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
