//! The example vault's tour (`examples/README.md`), step by step, against a real server with
//! the default model: what the tour promises a new user is what they get.

use crate::common::{Server, TempVault, mdvault_with, stderr, stdout};

fn examples() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/vault")
}

fn paths(v: &serde_json::Value) -> Vec<String> {
    v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_example_vault_tour_does_what_it_says() {
    let vault = TempVault::copy_of(&examples());
    let root = vault.root().to_str().unwrap().to_string();
    // As scripts/start.sh serves it: with the generated index.md the tour shows.
    let s = Server::start(&[format!("example={root}")], &[("MDVAULT_INDEX__INDEX_MD", "true")]);
    s.wait_index_md();
    let search = |q: &str| {
        let r = s.call("GET", &format!("/search?q={}&k=5", q.replace(' ', "+")), &[], None);
        assert_eq!(r.status, 200, "{}", r.body);
        r.json()
    };

    // Search by meaning: no word of the question is in the plumber's note title.
    let got = search("who fixes a dripping tap");
    assert_eq!(paths(&got)[0], "People/Plumber.md", "{got:#}");
    // An exact serial, found only in the filed PDF, is pinned first.
    let pdf = "Home/Files/2026-02-11 Hearthwell Heating - Service Report.pdf";
    let got = search("CE30-4471-0926");
    assert_eq!(paths(&got)[0], pdf, "{got:#}");
    assert_eq!(got["results"][0]["pinned"], true, "{got:#}");
    // A question only the PDF answers lists it.
    let got = search("which part was replaced at the boiler service");
    assert!(paths(&got).iter().any(|p| p == pdf), "{got:#}");

    // Append under a nested heading.
    let r = s.call(
        "PATCH",
        "/vault/Projects/Garden%20Shed.md",
        &[
            ("Operation", "append"),
            ("Target-Type", "heading"),
            ("Target", "Plan::Materials::Timber"),
            ("Markdown-Patch-Version", "1"),
        ],
        Some(b"- 4 fence posts, 75 mm\n"),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let shed = vault.read("Projects/Garden Shed.md");
    let timber = shed.find("#### Timber").expect("the heading is still there");
    let added = shed.find("- 4 fence posts, 75 mm").expect("appended");
    let next_heading = shed[timber + 1..].find("\n#").map_or(shed.len(), |i| timber + 1 + i);
    assert!(timber < added && added < next_heading, "inside Timber, not after it:\n{shed}");

    // Move a note; the folder-qualified link to it follows.
    assert!(vault.read("Welcome.md").contains("Inbox/Ideas"));
    let o =
        mdvault_with(&["mv", "Inbox/Ideas.md", "Projects/Ideas.md", "--vault", &root], &[], None);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let welcome = vault.read("Welcome.md");
    assert!(welcome.contains("Projects/Ideas") && !welcome.contains("Inbox/Ideas"), "{welcome}");
    assert!(!vault.root().join("Inbox/Ideas.md").exists());

    // Expiry dates and open callouts.
    let (status, body) = s.get("/expiries");
    assert_eq!(status, 200, "{body}");
    let expiries: serde_json::Value = serde_json::from_str(&body).unwrap();
    let notes: Vec<&str> = expiries["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["note"].as_str().unwrap())
        .collect();
    assert!(notes.contains(&"Life/Car.md") && notes.contains(&"Home/Home Insurance.md"), "{body}");
    assert_eq!(notes[0], "Life/Car.md", "the soonest date first: {body}");
    let (status, body) = s.get("/callouts");
    assert_eq!(status, 200, "{body}");
    for kind in ["\"todo\"", "\"warning\"", "\"question\""] {
        assert!(body.contains(kind), "{kind}: {body}");
    }

    // The vault's own check now has something to say about the moved note.
    let o = mdvault_with(&["check", "--vault", &root], &[], None);
    let out = stdout(&o);
    assert!(
        out.contains("check_status") && out.contains("Projects/Ideas.md"),
        "{out}{}",
        stderr(&o)
    );

    // index.md is kept by the server: the moved note's entry follows it.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let page = vault.read("index.md");
        if page.contains("(Projects/Ideas.md)") && !page.contains("(Inbox/Ideas.md)") {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "index.md did not follow the move:\n{page}");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}
