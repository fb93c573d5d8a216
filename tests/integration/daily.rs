//! Daily use from the shell: `mdvault status` (index coverage, without the model) and
//! `mdvault doctor` on a healthy setup and on broken ones.

use serde_json::Value;

use crate::common::{TempVault, mdvault_with, model_dir, stderr, stdout};

/// The first check of a `doctor --json` report in `area`.
fn doctor_check<'a>(report: &'a Value, area: &str) -> &'a Value {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["area"] == area)
        .unwrap_or_else(|| panic!("no {area} check: {report:#}"))
}

fn json(o: &std::process::Output) -> Value {
    serde_json::from_str(&stdout(o))
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", stdout(o), stderr(o)))
}

#[test]
fn status_reports_coverage_problems_skipped_files_and_stale_entries() {
    let vault = TempVault::fixture();
    vault.write("Inbox/Binary.md", "\u{0}");
    std::fs::write(vault.root().join("Inbox/Garbled.md"), b"\xff\xfe\x00 not text").unwrap();
    std::fs::write(vault.root().join("Home/photo.jpg"), b"jpeg").unwrap();
    let data = tempfile::tempdir().unwrap();
    let root = vault.root().to_str().unwrap().to_string();
    let d = data.path().to_str().unwrap().to_string();
    let env = [
        ("MDVAULT_EMBEDDING__BACKEND", "hashing"),
        ("MDVAULT_SEARCH__EXCLUDE_DIRS", "Workflows,Reports"),
    ];
    let run = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend_from_slice(&["--vault", &root, "--data-dir", &d]);
        mdvault_with(&all, &env, None)
    };

    // No index yet: say so, and how to build one.
    let o = run(&["status"]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stderr(&o).contains("run `mdvault index`"), "{}", stderr(&o));

    let o = run(&["index"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = run(&["status", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let s = json(&o);
    let v = &s["vaults"][0];
    assert_eq!(v["notes"], 29, "28 fixture notes and Binary.md; Garbled.md failed: {v:#}");
    assert_eq!(v["documents"], 1);
    assert_eq!(v["chunks_without_vectors"], 0);
    let problems: Vec<(&str, &str)> = v["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["path"].as_str().unwrap(), p["status"].as_str().unwrap()))
        .collect();
    assert_eq!(problems, [("Inbox/Garbled.md", "failed")], "{v:#}");
    let reasons: Vec<&str> =
        v["skipped"].as_array().unwrap().iter().map(|s| s["reason"].as_str().unwrap()).collect();
    assert!(reasons.iter().any(|r| r.contains("(.jpg)")), "{reasons:?}");
    assert!(reasons.iter().any(|r| r.starts_with("in Workflows/")), "{reasons:?}");
    assert_eq!(v["stale"], Value::Array(vec![]));
    assert_eq!(v["last_build"]["files_seen"], 31, "{v:#}");
    assert_eq!(v["last_build"]["failed"], 1);

    // Behind the index's back: an edit, a new note and a deletion are all stale now.
    std::thread::sleep(std::time::Duration::from_millis(20));
    vault.write("Home/Boiler.md", "# Boiler\n\nReplaced in 2027.\n");
    vault.write("Inbox/New.md", "# New\n");
    std::fs::remove_file(vault.root().join("Tech/NAS.md")).unwrap();
    let o = run(&["status"]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(text.contains("stale     3 entries"), "{text}");
    assert!(text.contains("Home/Boiler.md: changed on disk since it was indexed"), "{text}");
    assert!(text.contains("Inbox/New.md: on disk but not indexed yet"), "{text}");
    assert!(text.contains("Tech/NAS.md: deleted or moved on disk"), "{text}");
    assert!(text.contains("Inbox/Garbled.md [failed]: not valid UTF-8 text"), "{text}");
}

#[test]
fn doctor_says_how_to_turn_index_md_on_and_warns_of_a_generated_page_nothing_keeps() {
    let vault = TempVault::fixture();
    let data = tempfile::tempdir().unwrap();
    let root = vault.root().to_str().unwrap().to_string();
    let d = data.path().to_str().unwrap().to_string();
    let doctor = |env: &[(&str, &str)]| {
        let o = mdvault_with(&["doctor", "--json", "--vault", &root, "--data-dir", &d], env, None);
        doctor_check(&json(&o), "index.md").clone()
    };
    // Off by default, with the way to turn it on.
    let c = doctor(&[]);
    assert_eq!(c["level"], "ok", "{c}");
    assert!(c["what"].as_str().unwrap().contains("index_md: true"), "{c}");
    // On: it says a server keeps one.
    let c = doctor(&[("MDVAULT_INDEX__INDEX_MD", "true")]);
    assert!(c["level"] == "ok" && c["what"].as_str().unwrap().contains("kept up to date"), "{c}");
    // Off, beside a page mdvault generated earlier: nothing keeps it current, so it warns.
    vault.write("index.md", "---\ngenerator: mdvault\ntimestamp: x\n---\n\n# Vault Index\n");
    let c = doctor(&[]);
    assert_eq!(c["level"], "warn", "{c}");
    assert!(c["fix"].as_str().unwrap().contains("index_md: true"), "{c}");
    // A hand-written index.md is the user's own note: nothing to say about it.
    vault.write("index.md", "# My start page\n");
    assert_eq!(doctor(&[])["level"], "ok");
}

#[test]
fn doctor_passes_a_working_setup_and_names_the_fix_for_each_broken_part() {
    let vault = TempVault::fixture();
    let data = tempfile::tempdir().unwrap();
    let root = vault.root().to_str().unwrap().to_string();
    let model = model_dir();
    let good = [
        ("MDVAULT_API_KEY", "a-long-enough-test-key-1234"),
        ("MDVAULT_EMBEDDING__MODEL_DIR", model.to_str().unwrap()),
    ];
    let d = data.path().to_str().unwrap().to_string();
    let o = mdvault_with(&["doctor", "--vault", &root, "--data-dir", &d], &good, None);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    for area in ["config", "api key", "vault", "model", "store", "watcher"] {
        assert!(text.contains(&format!("ok    {area}")), "{area}: {text}");
    }
    assert!(text.contains("(384 dimensions)"), "{text}");

    // No key, no model, and a data directory that cannot be created (its parent is a file:
    // tests run as root in CI, and root may write anywhere else).
    let blocker = data.path().join("a-file");
    std::fs::write(&blocker, "not a folder").unwrap();
    let store = blocker.join("data");
    let o = mdvault_with(
        &["doctor", "--json", "--vault", &root, "--data-dir", store.to_str().unwrap()],
        &[],
        None,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let report = json(&o);
    assert_eq!(report["ok"], false);
    let failed: Vec<(&str, &str)> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["level"] == "fail")
        .map(|c| (c["area"].as_str().unwrap(), c["fix"].as_str().unwrap()))
        .collect();
    let areas: Vec<&str> = failed.iter().map(|(a, _)| *a).collect();
    assert_eq!(areas, ["api key", "model", "store"], "{report:#}");
    assert!(failed[0].1.contains("export MDVAULT_API_KEY="), "{report:#}");
    assert!(failed[1].1.contains("mdvault model fetch"), "{report:#}");
    assert!(failed[2].1.contains("--data-dir"), "{report:#}");

    // A damaged store, and a configuration that does not load.
    std::fs::write(data.path().join("index.db"), b"this is not a database, only text").unwrap();
    let o = mdvault_with(&["doctor", "--vault", &root, "--data-dir", &d], &good, None);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("FAIL  store"), "{}", stdout(&o));
    assert!(stdout(&o).contains("move it aside"), "{}", stdout(&o));
    let mut bad = good.to_vec();
    bad.push(("MDVAULT_SEARCH__DEFAULT_K", "many"));
    let o = mdvault_with(&["doctor", "--vault", &root], &bad, None);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("FAIL  config"), "{}", stdout(&o));
    assert!(stdout(&o).contains("search.default_k"), "{}", stdout(&o));
}

#[test]
fn service_install_writes_units_and_a_private_key_file_and_enables_nothing() {
    let home = tempfile::tempdir().unwrap();
    // A vault whose folder name has a comma, a quote, a dollar sign and a backslash: the
    // environment file must carry it intact to systemd (and to a shell that sources the file).
    let vault = home.path().join("Notes, \"2026\" $HOME \\ too");
    crate::common::copy_tree(&crate::common::fixture_root(), &vault);
    let root = vault.to_str().unwrap().to_string();
    let h = home.path().to_str().unwrap().to_string();
    // Installed the usual way: a link in ~/.local/bin, run by its bare name from PATH.
    let bin_dir = home.path().join(".local/bin");
    std::fs::create_dir_all(&bin_dir).unwrap();
    let link = bin_dir.join("mdvault");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_mdvault"), &link).unwrap();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let install = |args: &[&str], extra: &[(&str, &str)]| {
        let o = std::process::Command::new("mdvault")
            .env_clear()
            .env("PATH", &path)
            .env("HOME", &h)
            .envs(extra.iter().copied())
            .args(["service", "install"])
            .args(args)
            .output()
            .unwrap();
        (o.status.code(), stdout(&o), stderr(&o))
    };

    let (code, _, err) = install(&[], &[]);
    assert_eq!(code, Some(2), "no vault, no service: {err}");
    assert!(err.contains("no vault to serve") && err.contains("--vault"), "{err}");
    assert!(!home.path().join(".config/mdvault/env").exists(), "nothing written");

    // An HTTP embedder's key goes with the service; a local model's setup has none.
    let embed_key = [
        ("MDVAULT_EMBEDDING_API_KEY", "sk-embed-123"),
        ("MDVAULT_EMBEDDING__BACKEND", "http"),
        ("MDVAULT_EMBEDDING__URL", "http://127.0.0.1:9/v1/embeddings"),
        ("MDVAULT_EMBEDDING__MODEL", "m"),
        ("MDVAULT_EMBEDDING__DIMS", "8"),
    ];
    let (code, out, err) = install(&["--vault", &root], &embed_key);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("Nothing is enabled yet"), "{out}");
    assert!(out.contains("systemctl --user enable --now mdvault.service mdvault-index.timer"));
    let units = home.path().join(".config/systemd/user");
    let serve = std::fs::read_to_string(units.join("mdvault.service")).unwrap();
    assert!(
        serve.contains(&format!("ExecStart={} serve\n", link.display())),
        "the link, not the build folder it points into: {serve}"
    );
    let env_file = home.path().join(".config/mdvault/env");
    assert!(serve.contains(&format!("EnvironmentFile={}\n", env_file.display())), "{serve}");
    assert!(!serve.contains('@'), "every placeholder is filled: {serve}");
    let index = std::fs::read_to_string(units.join("mdvault-index.service")).unwrap();
    assert!(index.contains(&format!("ExecStart={} index\n", link.display())), "{index}");
    assert!(
        std::fs::read_to_string(units.join("mdvault-index.timer")).unwrap().contains("OnCalendar=")
    );
    let written = std::fs::read_to_string(&env_file).unwrap();
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&env_file).unwrap().permissions().mode() & 0o777, 0o600);
    let key = written.lines().find_map(|l| l.strip_prefix("MDVAULT_API_KEY=")).unwrap();
    assert_eq!(key.trim_matches('"').len(), 48, "a fresh random key: {written}");
    assert!(written.contains("MDVAULT_EMBEDDING_API_KEY=\"sk-embed-123\"\n"), "{written}");

    // Sourced the way systemd reads it, the file names the same vault, key and data folder.
    let sourced = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!("set -a; . '{}'; set +a; exec mdvault doctor --json", env_file.display()))
        .env_clear()
        .env("PATH", &path)
        .env("HOME", &h)
        .output()
        .unwrap();
    let report = json(&sourced);
    let vault_check = doctor_check(&report, "vault");
    assert!(vault_check["what"].as_str().unwrap().contains(&format!("({root})")), "{report:#}");
    assert_eq!(doctor_check(&report, "api key")["level"], "ok", "{report:#}");

    // Without the key in this shell, doctor finds the service's.
    let o = mdvault_with(&["doctor", "--json", "--vault", &root], &[("HOME", h.as_str())], None);
    let report = json(&o);
    let key_check = doctor_check(&report, "api key");
    assert_eq!(key_check["level"], "ok", "{report:#}");
    assert!(key_check["what"].as_str().unwrap().contains("the service's"), "{report:#}");

    // Idempotent: the same install changes nothing and keeps both keys.
    let (code, out, err) = install(&["--vault", &root], &embed_key);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out.matches("unchanged").count(), 4, "{out}");
    assert_eq!(std::fs::read_to_string(&env_file).unwrap(), written);

    // Back on the local model, the endpoint's key is dropped (a change: it takes --force).
    let (code, _, err) = install(&["--force", "--vault", &root], &[]);
    assert_eq!(code, Some(0), "{err}");
    let written = std::fs::read_to_string(&env_file).unwrap();
    assert!(!written.contains("MDVAULT_EMBEDDING_API_KEY"), "{written}");

    // The same values in an older layout (unquoted) are rewritten without --force.
    let unquoted: String = written
        .lines()
        .filter(|l| !l.starts_with("MDVAULT_VAULTS") && !l.starts_with('#'))
        .map(|l| format!("{}\n", l.replacen("=\"", "=", 1).trim_end_matches('"')))
        .chain(
            written.lines().filter(|l| l.starts_with("MDVAULT_VAULTS")).map(|l| format!("{l}\n")),
        )
        .collect();
    std::fs::write(&env_file, &unquoted).unwrap();
    let (code, out, err) = install(&["--vault", &root], &[]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("reformatted"), "{out}");
    assert_eq!(std::fs::read_to_string(&env_file).unwrap(), written);

    // Another key is not silently swapped in, and doctor notices the mismatch.
    let other = [("MDVAULT_API_KEY", "another-key-0123456789")];
    let (code, _, err) = install(&["--vault", &root], &other);
    assert_eq!(code, Some(2));
    assert!(err.contains("--force"), "{err}");
    assert_eq!(std::fs::read_to_string(&env_file).unwrap(), written);
    let o = mdvault_with(
        &["doctor", "--json", "--vault", &root],
        &[("HOME", h.as_str()), other[0]],
        None,
    );
    let report = json(&o);
    assert_eq!(doctor_check(&report, "api key")["level"], "warn", "{report:#}");
    let (code, _, err) = install(&["--force", "--vault", &root], &other);
    assert_eq!(code, Some(0), "{err}");
    assert!(std::fs::read_to_string(&env_file).unwrap().contains("=\"another-key-0123456789\"\n"));
}

#[test]
fn completions_cover_the_subcommands_for_each_shell() {
    for shell in ["bash", "zsh", "fish"] {
        let o = mdvault_with(&["completions", shell], &[], None);
        assert_eq!(o.status.code(), Some(0), "{shell}: {}", stderr(&o));
        let script = stdout(&o);
        for sub in ["search", "status", "doctor", "eval", "service"] {
            assert!(script.contains(sub), "{shell} lacks {sub}");
        }
    }
    let o = mdvault_with(&["completions", "tcsh"], &[], None);
    assert_eq!(o.status.code(), Some(2), "an unknown shell is a usage error");
}

#[test]
fn index_asks_a_running_server_to_do_the_pass() {
    use crate::common::Server;
    let vault = TempVault::fixture();
    let second = TempVault::empty();
    second.write("Trips.md", "# Trips\n\nThe ferry leaves at nine.\n");
    let spec = format!("fixture={}", vault.root().display());
    // The CLI may call the second vault by another name; the roots decide.
    let other = format!("trips={}", second.root().display());
    // The server notices changes only when asked: no watcher events, no periodic pass.
    let hashing = [
        ("MDVAULT_EMBEDDING__BACKEND", "hashing"),
        ("MDVAULT_WATCH__DEBOUNCE_SECONDS", "3600"),
        ("MDVAULT_INDEX__RECONCILE_SECONDS", "0"),
    ];
    let s = Server::start(&[spec.clone(), format!("second={}", second.root().display())], &hashing);
    vault.write("Inbox/Added.md", "# Added\n\nA note the server has not seen yet.\n");
    second.write("Later.md", "# Later\n\nWritten after the server started.\n");
    // No key and no address: the server is found through the data directory it owns.
    let env = [("MDVAULT_EMBEDDING__BACKEND", "hashing")];
    // The same vaults into another data directory: another index, built here.
    let elsewhere = tempfile::tempdir().unwrap();
    let d = elsewhere.path().to_str().unwrap();
    let o =
        mdvault_with(&["index", "--vault", &spec, "--vault", &other, "--data-dir", d], &env, None);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(!stderr(&o).contains("owns this index"), "{}", stderr(&o));
    assert!(elsewhere.path().join("index.db").is_file());
    let (_, body) = s.get("/search?q=has+not+seen+yet&k=1");
    assert!(!body.contains("Inbox/Added.md"), "the server's index was not touched: {body}");

    let d = s.data.path().to_str().unwrap();
    let o =
        mdvault_with(&["index", "--vault", &spec, "--vault", &other, "--data-dir", d], &env, None);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(stderr(&o).contains("owns this index; asking it"), "{}", stderr(&o));
    // Reported under this command's own names for the vaults.
    let lines: Vec<String> = stdout(&o).lines().map(str::to_string).collect();
    assert!(lines[0].starts_with("fixture: ") && lines[1].starts_with("trips: "), "{lines:?}");
    let (status, body) = s.get("/search?q=has+not+seen+yet&k=1");
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("Inbox/Added.md"), "the server indexed it: {body}");
    let (_, body) = s.get("/search?q=written+after+the+server+started&k=3");
    assert!(body.contains("Later.md"), "the server indexed the second vault: {body}");

    // One of the server's vaults alone: the server does that pass.
    let o = mdvault_with(&["index", "--vault", &spec, "--data-dir", d], &env, None);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).starts_with("fixture: "), "{}", stdout(&o));

    // A vault the server does not index: refused, not written beside the server.
    let stranger = TempVault::empty();
    let spec3 = format!("stranger={}", stranger.root().display());
    let o = mdvault_with(&["index", "--vault", &spec3, "--data-dir", d], &env, None);
    assert_eq!(o.status.code(), Some(2), "{}{}", stdout(&o), stderr(&o));
    assert!(stderr(&o).contains("owns the index"), "{}", stderr(&o));
    assert!(stderr(&o).contains("another --data-dir"), "{}", stderr(&o));
}

#[test]
fn model_list_fetch_and_use_state_the_cost_and_edit_only_the_embedding_section() {
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("data");
    std::fs::create_dir_all(data.join("models")).unwrap();
    std::os::unix::fs::symlink(model_dir(), data.join("models/all-MiniLM-L6-v2")).unwrap();
    let config_dir = home.path().join(".config/mdvault");
    std::fs::create_dir_all(&config_dir).unwrap();
    let config = config_dir.join("config.yaml");
    let original = "# my settings\nembedding:\n  backend: hashing   # for now\n  batch_size: 16\n\
                    search:\n  default_k: 5\n";
    std::fs::write(&config, original).unwrap();
    let vault = TempVault::fixture();
    let (h, d, root) = (
        home.path().to_str().unwrap().to_string(),
        data.to_str().unwrap().to_string(),
        vault.root().to_str().unwrap().to_string(),
    );
    let env = [("HOME", h.as_str())];
    let run = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend_from_slice(&["--vault", &root, "--data-dir", &d]);
        mdvault_with(&all, &env, None)
    };
    assert_eq!(run(&["index"]).status.code(), Some(0));

    let o = run(&["model", "list", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let listed = json(&o);
    let models = listed["models"].as_array().unwrap();
    assert_eq!(models[0]["name"], "default");
    assert_eq!(models[0]["state"], "installed", "{listed:#}");
    assert_eq!(models[0]["active"], false);
    assert!(models.iter().any(|m| m["name"] == "hashing" && m["active"] == true), "{listed:#}");
    assert!(listed["index_model"].as_str().unwrap().starts_with("hashing"), "{listed:#}");

    let o = run(&["model", "fetch"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("already installed"), "nothing is downloaded: {}", stdout(&o));

    // Without --yes and without a terminal: the cost is stated, nothing changes.
    let o = run(&["model", "use", "default"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stdout(&o).contains("re-embeds 63 texts"), "{}", stdout(&o));
    assert!(stdout(&o).contains("texts/s it managed just now"), "{}", stdout(&o));
    assert!(stderr(&o).contains("--yes"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&config).unwrap(), original);

    let o = run(&["model", "use", "default", "--yes"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert_eq!(
        std::fs::read_to_string(&config).unwrap(),
        "# my settings\nembedding:\n  model_dir: \"\"\n  backend: local   # for now\n  \
         batch_size: 16\nsearch:\n  default_k: 5\n",
        "only the embedding keys changed; comments and other sections are kept"
    );
    let o = run(&["model", "list", "--json"]);
    assert_eq!(json(&o)["models"][0]["active"], true);

    // The switch waits for the next start or index pass, and status says so.
    let o = run(&["status", "--json"]);
    let m = &json(&o)["model"];
    assert!(m["index"].as_str().unwrap().starts_with("hashing@"), "{m:#}");
    assert!(m["configured"].as_str().unwrap().starts_with("local:all-MiniLM-L6-v2@"), "{m:#}");
    assert_eq!(m["switch_pending"], true, "{m:#}");
    assert!(stdout(&run(&["status"])).contains("SWITCH PENDING"));
    assert_eq!(run(&["index"]).status.code(), Some(0));
    let o = run(&["status", "--json"]);
    let m = &json(&o)["model"];
    assert_eq!(m["switch_pending"], false, "{m:#}");
    assert_eq!(m["index"], m["configured"]);

    // Another local model folder: a folder of its own (the same weights under another name).
    let other = home.path().join("models/other-minilm");
    std::fs::create_dir_all(&other).unwrap();
    for f in ["model.safetensors", "tokenizer.json", "config.json"] {
        std::os::unix::fs::symlink(model_dir().join(f), other.join(f)).unwrap();
    }
    let o = run(&["model", "use", other.to_str().unwrap(), "--yes"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("re-embeds 63 texts"), "{}", stdout(&o));
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(text.contains(&format!("model_dir: \"{}\"", other.display())), "{text}");
    assert!(text.contains("backend: local   # for now"), "{text}");
    let o = run(&["status", "--json"]);
    let m = &json(&o)["model"];
    assert!(m["configured"].as_str().unwrap().starts_with("local:other-minilm@"), "{m:#}");
    assert_eq!(m["switch_pending"], true, "{m:#}");

    // An HTTP endpoint: its width is asked of it, and the index follows it.
    let url = crate::common::fake_embedding_endpoint(24);
    let o = run(&["model", "use", &url, "--model", "toy", "--yes"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("24 dimensions"), "{}", stdout(&o));
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(text.contains("backend: http   # for now"), "{text}");
    assert!(text.contains("dims: 24"), "{text}");
    assert_eq!(run(&["index"]).status.code(), Some(0));
    let o = run(&["status", "--json"]);
    let s = json(&o);
    assert_eq!(s["model"]["index"], "http:toy@24", "{s:#}");
    assert_eq!(s["model"]["switch_pending"], false);
    assert_eq!(s["vaults"][0]["chunks_without_vectors"], 0, "every chunk has a 24-wide vector");
    let o = run(&["search", "boiler service", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));

    // Things that cannot embed are refused before the file is touched.
    let edited = std::fs::read_to_string(&config).unwrap();
    let o = run(&["model", "use", home.path().to_str().unwrap(), "--yes"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("is not a model folder"), "{}", stderr(&o));
    let o = run(&["model", "use", "http://127.0.0.1:9/v1/embeddings", "--yes"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("pass --dims"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&config).unwrap(), edited);
}

#[test]
fn colour_only_on_a_terminal_and_never_with_no_color() {
    // `script` gives the command a pseudo-terminal, as a person's shell would.
    let vault = TempVault::fixture();
    let on_a_terminal = |no_color: Option<&str>| {
        // A fresh data directory each time, so every run builds and logs.
        let data = tempfile::tempdir().unwrap();
        let command = format!(
            "{} index --vault '{}' --data-dir '{}' && {0} doctor --vault '{1}' --data-dir '{2}'",
            env!("CARGO_BIN_EXE_mdvault"),
            vault.root().display(),
            data.path().display()
        );
        let mut cmd = std::process::Command::new("script");
        cmd.args(["-qec", &command, "/dev/null"])
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", data.path())
            .env("MDVAULT_LOG", "info")
            .env("MDVAULT_EMBEDDING__BACKEND", "hashing")
            .stdin(std::process::Stdio::null());
        if let Some(v) = no_color {
            cmd.env("NO_COLOR", v);
        }
        String::from_utf8_lossy(&cmd.output().unwrap().stdout).into_owned()
    };
    // Colour codes (SGR): green INFO in the log, the doctor's labels.
    let coloured = |t: &str| t.contains("\x1b[32m") || t.contains("\x1b[33m");
    let plain = on_a_terminal(None);
    assert!(plain.contains(" INFO") && plain.contains("watcher"), "{plain}");
    assert!(coloured(&plain), "a terminal gets colour: {plain:?}");
    let text = on_a_terminal(Some("1"));
    assert!(text.contains(" INFO") && text.contains("watcher"), "{text}");
    assert!(!coloured(&text), "{text:?}");
    // An empty NO_COLOR does not count (no-color.org), and a pipe never gets colour.
    assert!(coloured(&on_a_terminal(Some(""))));
    let piped = mdvault_with(
        &["doctor", "--vault", vault.root().to_str().unwrap()],
        &[("MDVAULT_EMBEDDING__BACKEND", "hashing")],
        None,
    );
    assert!(!stdout(&piped).contains('\x1b') && !stderr(&piped).contains('\x1b'));
}
