//! The real `mdvault` binary: note commands, output formats, exit codes and vault selection.

use crate::common::{TempVault, mdvault, stderr, stdout};

fn vault_with_notes() -> TempVault {
    let v = TempVault::empty();
    v.write(
        "Home/Boiler.md",
        "---\ntitle: Boiler\ntimestamp: 2026-01-10T09:00:00Z\n---\n\n# Boiler\n\n## Settings\n\nPressure 1.2 bar.\n\n## Log\n\n- serviced\n",
    );
    v.write("Refs.md", "See [[Boiler]] and [b](Home/Boiler.md).\n");
    v
}

fn arg(v: &TempVault) -> String {
    format!("--vault={}", v.root().display())
}

#[test]
fn read_map_and_ls_in_text_and_json() {
    let v = vault_with_notes();
    let out = mdvault(&["read", "Home/Boiler.md", "--section", "settings", &arg(&v)], None);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "## Settings\n\nPressure 1.2 bar.\n");

    let out = mdvault(&[&arg(&v), "read", "Home/Boiler.md", "--json"], None);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["frontmatter"]["title"], "Boiler");
    assert_eq!(json["path"], "Home/Boiler.md");
    assert!(json["body"].as_str().unwrap().starts_with("# Boiler"));

    let out = mdvault(&["map", "Home/Boiler.md", &arg(&v)], None);
    let map = stdout(&out);
    assert!(
        map.contains("- Boiler::Settings (line ") && map.contains(")\n- Boiler::Log (line "),
        "{map}"
    );

    let out = mdvault(&["ls", &arg(&v), "--json"], None);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> =
        json["entries"].as_array().unwrap().iter().map(|e| e["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["Home", "Refs.md"]);
}

#[test]
fn writes_take_content_from_flags_files_or_stdin() {
    let v = vault_with_notes();
    let out = mdvault(&["write", "Inbox/Idea.md", &arg(&v)], Some("# Idea\n"));
    assert_eq!(stdout(&out), "created Inbox/Idea.md (no frontmatter, so timestamp not bumped)\n");
    assert_eq!(v.read("Inbox/Idea.md"), "# Idea\n");

    let out = mdvault(
        &[
            "patch",
            "Home/Boiler.md",
            "--target",
            "Log",
            "--operation",
            "append",
            "--content",
            "- repaired",
            &arg(&v),
        ],
        None,
    );
    assert_eq!(stdout(&out), "appended to 'Boiler::Log' in Home/Boiler.md\n");
    assert!(v.read("Home/Boiler.md").ends_with("## Log\n\n- serviced\n- repaired\n"));

    let file = v.root().join("../body.md");
    std::fs::write(&file, "New body.\n").unwrap();
    let out =
        mdvault(&["set-body", "Inbox/Idea.md", "--file", file.to_str().unwrap(), &arg(&v)], None);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(v.read("Inbox/Idea.md"), "New body.\n");

    let out = mdvault(
        &[
            "set-frontmatter",
            "Home/Boiler.md",
            "tags",
            "--json-value",
            r#"["home", "heat"]"#,
            &arg(&v),
            "--json",
        ],
        None,
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["message"], "set 'tags' in Home/Boiler.md");
    assert_eq!(json["timestamp_bumped"], true);
    assert!(v.read("Home/Boiler.md").contains("\ntags: [home, heat]\n"));

    let out = mdvault(
        &["replace-text", "Home/Boiler.md", "--find", "1.2 bar", "--replace", "1.4 bar", &arg(&v)],
        None,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(v.read("Home/Boiler.md").contains("Pressure 1.4 bar."));

    let out = mdvault(&["append", "Log.md", "--create", "--content", "first", &arg(&v)], None);
    assert!(out.status.success());
    let out = mdvault(&["mkdir", "A/B", &arg(&v)], None);
    assert_eq!(stdout(&out), "created folder(s): A, A/B\n");
    let out = mdvault(&["rmdir", "A", "--recursive", &arg(&v)], None);
    assert!(out.status.success());
    let out = mdvault(&["rm", "Log.md", &arg(&v)], None);
    assert!(stdout(&out).starts_with("moved Log.md to the vault's trash as .trash/Log.md"));
    let out = mdvault(&["rm", "--permanent", ".trash/Log.md", &arg(&v)], None);
    assert!(!out.status.success(), "the trash is not reachable through the gate");
}

#[test]
fn patch_moves_sections_and_levels_content_and_set_frontmatter_renames_keys() {
    let v = vault_with_notes();
    let note = "---\ntags: [a]\n---\n# A\n\n## Sub\n\nx\n\n# B\n\ny\n";
    assert!(mdvault(&["write", "Tree.md", &arg(&v)], Some(note)).status.success());
    let out = mdvault(
        &["patch", "Tree.md", "-t", "A::Sub", "-o", "replace", "--move-under", "B", &arg(&v)],
        None,
    );
    assert_eq!(stdout(&out), "moved 'A::Sub' under 'B' in Tree.md\n", "{}", stderr(&out));
    assert!(v.read("Tree.md").ends_with("# A\n\n# B\n\ny\n\n## Sub\n\nx\n"));

    let out = mdvault(
        &[
            "patch",
            "Tree.md",
            "-t",
            "Sub",
            "-o",
            "append",
            "--relative-levels",
            "--content",
            "##### Deeper",
            &arg(&v),
        ],
        None,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("warning[heading-depth-overflow]"), "{}", stderr(&out));
    assert!(v.read("Tree.md").ends_with("x\n\n####### Deeper\n"));

    let out =
        mdvault(&["set-frontmatter", "Tree.md", "tags", "--rename-to", "labels", &arg(&v)], None);
    assert_eq!(stdout(&out), "renamed 'tags' to 'labels' in Tree.md\n", "{}", stderr(&out));
    let out = mdvault(
        &["set-frontmatter", "Tree.md", "status", "open", "--before", "labels", &arg(&v)],
        None,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(v.read("Tree.md").contains("\nstatus: open\nlabels: [a]\n"));
    let out =
        mdvault(&["set-frontmatter", "Tree.md", "status", "--rename-to", "labels", &arg(&v)], None);
    assert!(stderr(&out).starts_with("error[key_exists]"), "{}", stderr(&out));
}

#[test]
fn a_move_reports_the_links_it_repointed() {
    let v = vault_with_notes();
    let out = mdvault(&["mv", "Home/Boiler.md", "Appliances/Boiler.md", &arg(&v)], None);
    assert_eq!(
        stdout(&out),
        "moved Home/Boiler.md to Appliances/Boiler.md; repointed links in 1 note(s)\n"
    );
    assert_eq!(v.read("Refs.md"), "See [[Boiler]] and [b](Appliances/Boiler.md).\n");
}

#[test]
fn a_refusal_prints_its_code_and_exits_1() {
    let v = vault_with_notes();
    let before = v.snapshot();
    let out = mdvault(
        &["patch", "Home/Boiler.md", "-t", "Nope", "-o", "replace", "--content", "x", &arg(&v)],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.starts_with("error[no_such_heading]: "), "{err}");
    assert!(err.contains("Boiler::Settings"), "the message lists the headings: {err}");

    let out = mdvault(&["write", "../x.md", "--content", "x", &arg(&v)], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).starts_with("error[invalid_path]: "));

    let out = mdvault(&["write", "Home/Boiler.md", "--content", "x", &arg(&v)], None);
    assert!(stderr(&out).starts_with("error[already_exists]: "));

    let out = mdvault(
        &["append", "Home/Boiler.md", "--content", "x", "--if-match", "abc", &arg(&v)],
        None,
    );
    assert!(stderr(&out).starts_with("error[conflict]: "));

    let out = mdvault(
        &[
            "patch",
            "Home/Boiler.md",
            "--target",
            "Log",
            "--operation",
            "upsert",
            "--content",
            "x",
            &arg(&v),
        ],
        None,
    );
    assert!(stderr(&out).starts_with("error[invalid_request]: "));
    assert_eq!(v.snapshot(), before);
}

#[test]
fn usage_and_configuration_problems_exit_2() {
    let v = vault_with_notes();
    let out = mdvault(&["read", &arg(&v)], None);
    assert_eq!(out.status.code(), Some(2));
    let out = mdvault(&["read", "x.md"], None);
    assert_eq!(out.status.code(), Some(2), "no vault configured");
    assert!(stderr(&out).contains("--vault"));
    let out = mdvault(&["read", "x.md", "--vault=/nonexistent/vault"], None);
    assert_eq!(out.status.code(), Some(2));
    let out = mdvault(&["read", "x.md", "--config=/nonexistent/config.yaml", &arg(&v)], None);
    assert_eq!(out.status.code(), Some(2));
    let out = mdvault(&["write", "x.md", "--content", "a", "--file", "b", &arg(&v)], None);
    assert_eq!(out.status.code(), Some(2), "two content sources");
}

#[test]
fn a_data_directory_written_to_reach_into_the_vault_is_refused_before_anything_is_made() {
    let v = vault_with_notes();
    let before = v.snapshot();
    let parent = v.root().parent().unwrap();
    let name = v.root().file_name().unwrap().to_str().unwrap();
    // Through a folder that does not exist, then back up into the vault.
    let data = parent.join(format!("no-such-{name}/../{name}/.mdvault"));
    let out = mdvault(&["index", &arg(&v), &format!("--data-dir={}", data.display())], None);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(stderr(&out).contains("overlap"), "{}", stderr(&out));
    assert_eq!(v.snapshot(), before, "nothing was made inside the vault");
}

#[test]
fn vaults_come_from_flags_or_the_config_file_and_paths_may_name_them() {
    let home = vault_with_notes();
    let work = TempVault::empty();
    work.write("Plan.md", "# Plan\n");
    let a = format!("--vault=home={}", home.root().display());
    let b = format!("--vault=work={}", work.root().display());
    let out = mdvault(&["read", "work:Plan.md", &a, &b], None);
    assert_eq!(stdout(&out), "# Plan\n");
    let out = mdvault(&["read", "Refs.md", &a, &b, "--json"], None);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["vault"], "home");

    let cfg = work.root().join("../mdvault-config.yaml");
    std::fs::write(
        &cfg,
        format!("vaults:\n  w: {}\n  h: {}\n", work.root().display(), home.root().display()),
    )
    .unwrap();
    let out = mdvault(&["ls", "--config", cfg.to_str().unwrap()], None);
    assert!(stdout(&out).contains("Plan.md"), "{}", stderr(&out));
    let out = mdvault(&["ls", "h:Home", "--config", cfg.to_str().unwrap()], None);
    assert!(stdout(&out).contains("Boiler.md"), "{}", stderr(&out));

    std::fs::write(&cfg, "vaults:\n  w: /x\nsurprise: 1\n").unwrap();
    let out = mdvault(&["ls", "--config", cfg.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("surprise"), "{}", stderr(&out));
}

#[test]
fn every_subcommand_has_help_with_an_example() {
    for cmd in [
        "read",
        "map",
        "ls",
        "write",
        "append",
        "patch",
        "set-body",
        "set-frontmatter",
        "replace-text",
        "mv",
        "rm",
        "mkdir",
        "rmdir",
        "grep",
        "links",
    ] {
        let out = mdvault(&[cmd, "--help"], None);
        assert!(out.status.success(), "{cmd}");
        assert!(stdout(&out).contains("mdvault "), "{cmd} --help has no example");
    }
}
