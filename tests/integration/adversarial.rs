//! Notes written to be slow, on the real binary: every scan (links, the outline, tags, callouts,
//! index.md, block targets, the chunker) is linear in a note's size, so a vault holding them
//! answers every command, starts and stops in seconds, and a move over it never keeps another
//! write waiting. The fixtures are generated here, not committed; each names the operation
//! that took half a minute or more on it before (docs/serving.md#limits-and-timeouts).
//!
//! The bounds are generous on purpose (debug build, two shared cores): the old behaviour took
//! ten times longer on every one of them.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{KEY, Server, TempVault, http_call};

/// How long any one command or request over the hostile vault may take. Before, each took
/// from 15 seconds to several minutes; now each takes about a second in a debug build.
const BOUND: Duration = Duration::from_secs(12);

/// The lines of a list nested `depth` deep on one line, then blank lines under it: each blank
/// line continued every open item, so each cost the depth (`links` took 40 s on this, 210 KB).
fn deep_list() -> String {
    format!("{}x\n{}end\n", "- ".repeat(5_000), "\n".repeat(200_000))
}

/// A list indented one level more on each line: each line re-measured its indentation once per
/// open item, so its cost grew with the cube of the depth.
fn indented_list() -> String {
    (0..1_500).map(|k| format!("{}- x\n", "  ".repeat(k))).collect()
}

/// A blockquote 5,000 deep, then lazy continuation lines: each line walked every open quote.
fn deep_quote() -> String {
    format!("{}x\n{}", "> ".repeat(5_000), "lazy line\n".repeat(50_000))
}

/// 50,000 headings, many sharing a path: `map` counted each one's twins among all of them.
fn headings() -> String {
    (0..50_000).map(|k| format!("{} Heading {}\n", "#".repeat(k % 6 + 1), k % 1_000)).collect()
}

/// 200,000 distinct tags: each was looked for among those already seen.
fn tags() -> String {
    (0..200_000).map(|k| format!("#t{k} ")).collect::<String>() + "\n"
}

/// One paragraph of 150,000 lines each ending in a block id: each id walked back to the
/// paragraph's start.
fn block_ids() -> String {
    (0..150_000).map(|k| format!("x ^b{k}\n")).collect()
}

/// 4.4 MB of short paragraphs under no heading: each chunk cut from it counted the lines from
/// the start of the note again.
fn flat() -> String {
    "word word\n\n".repeat(400_000)
}

/// A `%%` comment and a thousand backtick runs of distinct lengths on one line: each run
/// looked for its closer to the end of the line.
fn backticks() -> String {
    let runs: String = (1..1_400).map(|k| "`".repeat(k) + " ").collect();
    format!("%% c %% {runs}\n")
}

/// The vault: every hostile note, a note to move and notes linking to it.
fn hostile_vault() -> TempVault {
    let v = TempVault::empty();
    v.write("Hostile/Deep list.md", &deep_list());
    v.write("Hostile/Indented list.md", &indented_list());
    v.write("Hostile/Deep quote.md", &deep_quote());
    v.write("Hostile/Headings.md", &headings());
    v.write("Hostile/Tags.md", &tags());
    v.write("Hostile/Blocks.md", &block_ids());
    v.write("Hostile/Flat.md", &flat());
    v.write("Hostile/Backticks.md", &backticks());
    v.write("Hostile/Pipes.md", &"[[a|".repeat(100_000));
    v.write("Target.md", "# Target\n\nbody\n");
    v.write("Linker.md", "# Linker\n\nsee [t](Target.md)\n");
    v.write("Other.md", "# Other\n\nplain\n");
    v
}

/// Runs `mdvault` over `vault` and fails if it takes longer than `BOUND` (killing it then);
/// its standard output. The output goes to a file, not a pipe: a large `map` must not wait for
/// this test to read it.
fn within_bound(vault: &Path, args: &[&str]) -> String {
    let home = tempfile::tempdir().unwrap();
    let (out, err) = (home.path().join("out"), home.path().join("err"));
    let spec = format!("v={}", vault.display());
    let mut child = Command::new(env!("CARGO_BIN_EXE_mdvault"))
        .args(["--vault", spec.as_str(), "--data-dir"])
        .arg(home.path().join("data"))
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > BOUND {
            let _ = child.kill();
            let _ = child.wait();
            panic!("`mdvault {}` took longer than {BOUND:?}", args.join(" "));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let said = std::fs::read_to_string(&err).unwrap();
    assert!(status.success(), "`mdvault {}` failed: {said}", args.join(" "));
    std::fs::read_to_string(&out).unwrap()
}

#[test]
fn every_command_over_hostile_notes_finishes_in_seconds() {
    let v = hostile_vault();
    for note in ["Deep list", "Indented list", "Deep quote", "Pipes", "Backticks"] {
        within_bound(v.root(), &["links", &format!("Hostile/{note}.md")]);
    }
    within_bound(v.root(), &["map", "Hostile/Headings.md"]);
    within_bound(v.root(), &["map", "Hostile/Indented list.md"]);
    within_bound(v.root(), &["callouts"]);
    within_bound(v.root(), &["index-md"]);
    let patch = ["patch", "Hostile/Blocks.md", "-t", "^b149999", "-o", "append", "--content", "y"];
    within_bound(v.root(), &patch);
    // Every note is read for links to the moved one, and the one that has some is repointed.
    let said = within_bound(v.root(), &["mv", "Target.md", "Moved/Renamed.md"]);
    assert!(said.contains("repointed links in 1 note(s)"), "{said}");
    assert_eq!(v.read("Linker.md"), "# Linker\n\nsee [t](Moved/Renamed.md)\n");
}

/// A request that must answer within `BOUND`; its status.
fn call_within(s: &Server, method: &str, path: &str, accept: &str, body: Option<&[u8]>) -> u16 {
    let started = Instant::now();
    let r = http_call(&s.base, method, path, Some(KEY), &[("Accept", accept)], body);
    let took = started.elapsed();
    assert!(took < BOUND, "{method} {path} ({accept}) took {took:?}");
    r.status
}

#[test]
fn a_server_over_hostile_notes_is_ready_answers_and_stops_in_seconds() {
    let v = hostile_vault();
    let started = Instant::now();
    let mut s = Server::spawn(
        &[format!("v={}", v.root().display())],
        &[("MDVAULT_EMBEDDING__BACKEND", "hashing")],
    );
    // Ready means every note is chunked and indexed, the flat one and the backticks included.
    while s.get("/readyz").0 != 200 {
        assert!(started.elapsed() < 5 * BOUND, "not ready after {:?}", started.elapsed());
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(call_within(&s, "GET", "/tags/", "application/json", None), 200);
    for note in ["Deep%20list", "Indented%20list", "Deep%20quote", "Headings", "Tags", "Blocks"] {
        let path = format!("/vault/Hostile/{note}.md");
        for accept in ["text/html", "application/vnd.olrapi.note+json"] {
            assert_eq!(call_within(&s, "GET", &path, accept, None), 200, "{path} as {accept}");
        }
    }
    // A write beside a move over these notes is not kept waiting for it.
    let base = s.base.clone();
    let mover = std::thread::spawn(move || {
        let body = br#"{"destination": "Moved/Renamed.md", "update_links": true}"#;
        let json = [("Content-Type", "application/json")];
        http_call(&base, "POST", "/move/Target.md", Some(KEY), &json, Some(body)).status
    });
    // Sent once the move is reading the vault (which takes it over a second), not before.
    std::thread::sleep(Duration::from_millis(300));
    let put = call_within(&s, "PUT", "/vault/Other.md", "*/*", Some(b"# Other\n\nchanged\n"));
    assert_eq!(put, 204);
    let moved = mover.join().unwrap();
    assert!((200..300).contains(&moved), "the move answered {moved}");
    assert_eq!(v.read("Linker.md"), "# Linker\n\nsee [t](Moved/Renamed.md)\n");
    let took = s.terminate();
    assert!(took < Duration::from_secs(7), "SIGTERM took {took:?}");
}
