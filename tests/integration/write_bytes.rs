//! The real `mdvault` binary keeps a note's bytes and writes values that read back as sent.
//!
//! Every write command on a Windows-written note (BOM, CRLF, trailing whitespace and trailing
//! blank lines) leaves it CRLF with its BOM, and changes no byte outside what it edits; and
//! `set-frontmatter --json-value` with numbers and date-like strings that once came back as
//! something else (a float in exponent form, a string, a date) reads back equal. The rules
//! themselves are unit-tested in `vault::text`, `vault::edit` and `vault::frontmatter`.

use serde_json::{Value, json};

use crate::common::{TempVault, mdvault, stderr};

/// A note as a Windows editor leaves it.
const WINDOWS: &str = "\u{feff}---\r\ntitle: Boiler  \r\n---\r\n# Boiler\r\n\r\n## Log\r\n\r\n\
                       - serviced\t\r\n\r\n## Notes\r\n\r\nKeep this.  \r\n\r\n\r\n";

fn run(v: &TempVault, args: &[&str]) {
    let vault = format!("--vault={}", v.root().display());
    let mut all = vec![vault.as_str()];
    all.extend(args);
    let out = mdvault(&all, None);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
}

/// The note with its `timestamp` line (which every write bumps) taken out.
fn without_timestamp(text: &str) -> String {
    text.split_inclusive('\n').filter(|l| !l.starts_with("timestamp: ")).collect()
}

#[test]
fn every_write_command_keeps_a_windows_note_crlf_with_its_untouched_bytes() {
    let cases: [(&[&str], &str); 5] = [
        (
            &["set-frontmatter", "n.md", "status", "done"],
            "\u{feff}---\r\ntitle: Boiler  \r\nstatus: done\r\n---\r\n# Boiler\r\n\r\n## Log\r\n\r\n\
             - serviced\t\r\n\r\n## Notes\r\n\r\nKeep this.  \r\n\r\n\r\n",
        ),
        (
            &["patch", "n.md", "--target", "Log", "--operation", "append", "--content", "- again"],
            "\u{feff}---\r\ntitle: Boiler  \r\n---\r\n# Boiler\r\n\r\n## Log\r\n\r\n\
             - serviced\t\r\n- again\r\n\r\n## Notes\r\n\r\nKeep this.  \r\n\r\n\r\n",
        ),
        (
            &["replace-text", "n.md", "--find", "Keep this.", "--replace", "Kept,\nstill."],
            "\u{feff}---\r\ntitle: Boiler  \r\n---\r\n# Boiler\r\n\r\n## Log\r\n\r\n\
             - serviced\t\r\n\r\n## Notes\r\n\r\nKept,\r\nstill.  \r\n\r\n\r\n",
        ),
        (
            &["append", "n.md", "--content", "Tail.\n"],
            "\u{feff}---\r\ntitle: Boiler  \r\n---\r\n# Boiler\r\n\r\n## Log\r\n\r\n\
             - serviced\t\r\n\r\n## Notes\r\n\r\nKeep this.  \r\n\r\nTail.\r\n",
        ),
        (
            &["set-body", "n.md", "--content", "# New\n\nBody.\n"],
            "\u{feff}---\r\ntitle: Boiler  \r\n---\r\n# New\r\n\r\nBody.\r\n",
        ),
    ];
    for (args, expected) in cases {
        let v = TempVault::empty();
        v.write("n.md", WINDOWS);
        run(&v, args);
        let after = v.read("n.md");
        assert!(after.contains("\r\ntimestamp: "), "{args:?} did not bump: {after:?}");
        assert_eq!(without_timestamp(&after), expected, "{args:?}");
    }
}

#[test]
fn frontmatter_values_read_back_as_they_were_sent() {
    let v = TempVault::empty();
    v.write("n.md", "---\ntitle: T\n---\nBody\n");
    let cases = [
        ("two_to_the_64", "18446744073709551616", "two_to_the_64: 18446744073709551616\n"),
        ("ten_to_the_30", "1000000000000000000000000000000", "ten_to_the_30: 1.0e+30\n"),
        ("tiny", "1e-7", "tiny: 1.0e-7\n"),
        ("day", r#""2024-01-01""#, "day: \"2024-01-01\"\n"),
        ("answer", r#""yes""#, "answer: \"yes\"\n"),
        (" padded key ", "1", "\" padded key \": 1\n"),
    ];
    for (key, value, line) in cases {
        run(&v, &["set-frontmatter", "n.md", key, "--json-value", value]);
        assert!(v.read("n.md").contains(line), "{key}: {:?}", v.read("n.md"));
    }
    let vault = format!("--vault={}", v.root().display());
    let out = mdvault(&[&vault, "read", "n.md", "--json"], None);
    assert!(out.status.success(), "{}", stderr(&out));
    let read: Value = serde_json::from_slice(&out.stdout).unwrap();
    for (key, value, _) in cases {
        let sent: Value = serde_json::from_str(value).unwrap();
        assert_eq!(read["frontmatter"][key], sent, "{key} did not read back");
    }
    assert_eq!(read["frontmatter"]["two_to_the_64"], json!(2f64.powi(64)));
}
