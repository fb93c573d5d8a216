//! Full and read-only disks on the real binary: the server runs in a mount namespace of its
//! own (`unshare`, no privileges needed where user namespaces are allowed) with the vault and
//! the data directory on small tmpfs mounts, which the test fills, empties and remounts
//! read-only through a control pipe into that namespace. A write the vault's disk cannot take
//! is a 507 with a named code and changes nothing; an index the data directory cannot take
//! leaves the write whole, answers `"indexed": "behind"` and turns `/readyz` degraded until
//! the index takes changes again.
//!
//! Where namespaces are not allowed (some containers), the test says so and passes without
//! running: it needs a kernel feature, not a fix.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::Command;

use crate::common::*;

/// The script run inside the namespace: mount the two tmpfs, fill the vault from the fixture,
/// start a shell that runs the test's commands from the control pipe, then become the server.
const SETUP: &str = r#"set -e
T="$1"; shift
mount -t tmpfs -o size=32m none "$T/vault"
mount -t tmpfs -o size=64m none "$T/data"
cp -a "$T/src/." "$T/vault/"
( while IFS= read -r cmd; do
    out=$(sh -c "$cmd" 2>&1) && rc=0 || rc=$?
    printf '%s\n%s\n.\n' "$rc" "$out" > "$T/reply"
  done < "$T/control" ) &
exec 3> "$T/control"
exec "$@"
"#;

/// A server in its own mount namespace, and the pipe into it.
struct Jailed {
    server: Server,
    work: PathBuf,
    control: std::fs::File,
}

impl Jailed {
    /// `None` when this machine does not allow an unprivileged mount namespace.
    fn start(dir: &tempfile::TempDir) -> Option<Jailed> {
        let probe = Command::new("unshare")
            .args(["-rmpf", "--kill-child", "sh", "-c", "mount -t tmpfs none /mnt || exit 3"])
            .output();
        if !probe.is_ok_and(|o| o.status.success()) {
            eprintln!("skipped: this machine allows no mount namespace (unshare -rm)");
            return None;
        }
        let work = dir.path().to_path_buf();
        for d in ["vault", "data"] {
            std::fs::create_dir(work.join(d)).unwrap();
        }
        copy_tree(&fixture_root(), &work.join("src"));
        for pipe in ["control", "reply"] {
            let path = std::ffi::CString::new(work.join(pipe).to_str().unwrap()).unwrap();
            // SAFETY: a NUL-terminated path; mkfifo only creates the pipe.
            assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
        }
        let work_arg = work.to_str().unwrap().to_string();
        let wrapper = ["unshare", "-rmpf", "--kill-child", "sh", "-c", SETUP, "sh", &work_arg];
        let vault = format!("full={}", work.join("vault").display());
        let data = work.join("data");
        let launch = Launch { wrapper: &wrapper, data_dir: Some(&data), ..Launch::default() };
        let server = Server::launch(&[vault], &[], &launch);
        server.wait_ready();
        let control = std::fs::OpenOptions::new().write(true).open(work.join("control")).unwrap();
        Some(Jailed { server, work, control })
    }

    /// Runs `cmd` inside the namespace (`$T` is the work folder); its exit status and output.
    fn run(&mut self, cmd: &str) -> (i32, String) {
        let cmd = cmd.replace("$T", self.work.to_str().unwrap());
        writeln!(self.control, "{cmd}").unwrap();
        self.control.flush().unwrap();
        // Each reply opens the pipe, writes and closes it: read it to its end.
        let mut reply = String::new();
        std::fs::File::open(self.work.join("reply")).unwrap().read_to_string(&mut reply).unwrap();
        let mut lines: Vec<String> = reply.lines().map(String::from).collect();
        assert_eq!(lines.pop().as_deref(), Some("."), "{reply}");
        let rc = lines.remove(0).parse().unwrap();
        (rc, lines.join("\n"))
    }

    fn put(&self, path: &str, body: &str) -> Reply {
        let headers = [("Accept", "application/json"), ("Content-Type", "text/markdown")];
        self.server.call("PUT", &format!("/vault/{path}"), &headers, Some(body.as_bytes()))
    }

    fn readyz(&self) -> serde_json::Value {
        serde_json::from_str(&self.server.get("/readyz").1).unwrap()
    }

    /// Our temporaries left anywhere in the vault.
    fn temporaries(&mut self) -> String {
        self.run("find $T/vault -name '.mdvault-*'").1
    }
}

fn fill(jail: &mut Jailed, disk: &str) {
    // dd stops at the first refused write: the disk is full when it ends, whatever it held.
    let (_, out) =
        jail.run(&format!("dd if=/dev/zero of=$T/{disk}/.filler bs=64k 2>&1; df $T/{disk}"));
    assert!(out.contains("No space left"), "{out}");
}

#[test]
fn a_full_or_read_only_vault_disk_is_a_named_507_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let Some(mut jail) = Jailed::start(&dir) else { return };
    let before = jail.server.get("/vault/Meta/Conventions.md");
    assert_eq!(before.0, 200, "{}", before.1);

    fill(&mut jail, "vault");
    let r = jail.put("Meta/Conventions.md", &"a replacement that does not fit\n".repeat(200));
    assert_eq!((r.status, r.code()), (507, "disk_full".into()), "{}", r.body);
    assert!(r.json()["message"].as_str().unwrap().contains("Free space"), "{}", r.body);
    let r = jail.put("Inbox/new.md", "# New\n\nnot enough room\n");
    assert_eq!((r.status, r.code()), (507, "disk_full".into()), "{}", r.body);
    assert_eq!(jail.server.get("/vault/Meta/Conventions.md"), before);
    assert_eq!(jail.server.get("/vault/Inbox/new.md").0, 404);
    assert_eq!(jail.temporaries(), "");

    let (rc, out) = jail.run("rm $T/vault/.filler && mount -o remount,ro $T/vault");
    assert_eq!(rc, 0, "{out}");
    let r = jail.put("Meta/Conventions.md", "# Alpha\n\nread-only now\n");
    assert_eq!((r.status, r.code()), (507, "read_only".into()), "{}", r.body);
    assert!(r.json()["message"].as_str().unwrap().contains("remount"), "{}", r.body);
    assert_eq!(jail.server.get("/vault/Meta/Conventions.md"), before);

    let (rc, out) = jail.run("mount -o remount,rw $T/vault");
    assert_eq!(rc, 0, "{out}");
    let r = jail.put("Inbox/new.md", "# New\n\nroom again\n");
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(jail.server.get("/vault/Inbox/new.md").1, "# New\n\nroom again\n");
}

#[test]
fn an_index_the_data_directory_cannot_take_is_behind_and_readyz_says_so_until_it_recovers() {
    let dir = tempfile::tempdir().unwrap();
    let Some(mut jail) = Jailed::start(&dir) else { return };
    assert_eq!(jail.readyz()["status"], "ready");

    fill(&mut jail, "data");
    let body = format!("# Quarry\n\n{}\n", "zanzibarite deposits in the quarry ".repeat(200));
    let r = jail.server.call(
        "PUT",
        "/vault/Inbox/quarry.md",
        &[("Accept", "application/json")],
        Some(body.as_bytes()),
    );
    assert!(r.status < 300, "{}: {}", r.status, r.body);
    assert_eq!(r.json()["indexed"], "behind", "{}", r.body);
    // The note is whole on the vault's disk, whatever the index could not take.
    assert_eq!(jail.server.get("/vault/Inbox/quarry.md").1, body);
    let ready = jail.readyz();
    assert_eq!(ready["status"], "degraded", "{ready}");
    assert_eq!(ready["index"]["behind"], true, "{ready}");
    assert!(ready["index"]["behind_error"].is_string(), "{ready}");

    let (rc, out) = jail.run("rm $T/data/.filler");
    assert_eq!(rc, 0, "{out}");
    let r = jail.server.call(
        "PUT",
        "/vault/Inbox/quarry.md",
        &[("Accept", "application/json")],
        Some(format!("{body}\nmore zanzibarite\n").as_bytes()),
    );
    assert_eq!(r.json()["indexed"], "full", "{}", r.body);
    let ready = jail.readyz();
    assert_eq!(
        (ready["status"].as_str(), &ready["index"]["behind"]),
        (Some("ready"), &false.into())
    );
    let hits = jail.server.call("GET", "/search?q=zanzibarite&mode=lexical", &[], None);
    assert!(hits.body.contains("Inbox/quarry.md"), "{}", hits.body);
}
