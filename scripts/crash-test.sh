#!/usr/bin/env bash
# Kills a real server mid-write, over and over, and checks what the restart leaves.
#
#   scripts/crash-test.sh [BINARY]
#
# BINARY defaults to target/debug/mdvault (under CARGO_TARGET_DIR when set), built with
# `cargo build` when it is missing. The script serves a scratch copy of tests/fixtures/vault
# plus a hub note with 60 notes linking to it, with the hashing embedder (no model needed), and
# runs CRASH_CYCLES cycles (default 30). Each cycle starts the server, sends note writes
# (PUT /vault/...), one move of the hub (POST /move/..., which rewrites 60 links) and one
# rename of the tag the 60 linking notes carry (POST /tags/rename, which rewrites the same 60
# notes) at once, kills the server with SIGKILL at a random moment (every other cycle aimed
# inside a journaled commit: after a journal record appears, within the commit time of an
# uninterrupted move measured first), restarts it, and checks:
#
# - every write that was acknowledged (2xx), in any cycle so far, is on disk byte for byte;
# - every append to the shared note acknowledged by either process (the server's 2xx, or exit
#   0 of a CLI `mdvault append` running beside it, every other one on the server's data
#   directory and the rest on one of their own, some killed mid-way too) is in that note
#   exactly once;
# - the move is whole: the hub at its old path with all 60 links old, or at its new path with
#   all 60 links new (and the new one when the move was acknowledged);
# - the tag rename is whole: all 60 notes carry the old tag, or all carry the new one (the new
#   one when the rename was acknowledged), and no other byte of theirs changed;
# - no `.mdvault-*.tmp` temporary of a dead process is left anywhere in the vault, and no move
#   record in the data directory's journal.
#
# It prints one line per cycle and a summary, and exits 1 on any violation (2 when it could not
# run). CRASH_SEED fixes the random choices; CRASH_KEEP=1 keeps the scratch folder (vault, data
# directory, server logs).
set -euo pipefail
cd "$(dirname "$0")/.."

bin="${1:-${CARGO_TARGET_DIR:-target}/debug/mdvault}"
if [[ ! -x "$bin" ]]; then
    echo "crash-test.sh: building $bin" >&2
    cargo build --quiet
fi
if [[ ! -x "$bin" ]]; then
    echo "crash-test.sh: no binary at $bin" >&2
    exit 2
fi

exec python3 - "$bin" <<'PY'
import json, os, random, shutil, signal, subprocess, sys, tempfile, threading, time
import urllib.error, urllib.parse, urllib.request

BIN = os.path.abspath(sys.argv[1])
CYCLES = int(os.environ.get("CRASH_CYCLES", "30"))
SEED = int(os.environ.get("CRASH_SEED", str(random.randrange(1 << 30))))
KEEP = os.environ.get("CRASH_KEEP") == "1"
LINKS = 60  # inbound links: each a file the move rewrites, which widens its commit window
KEY = "crash-test-key-0123456789"
OLD, NEW = "Crash/Hub.md", "Crash/Moved/Hub Moved.md"
OLD_LINK, NEW_LINK = "[[Hub]]", "[[Hub Moved]]"
TAG_A, TAG_B = "crash/alpha", "crash/beta"  # the linking notes' tag, renamed back and forth

rng = random.Random(SEED)
work = tempfile.mkdtemp(prefix="mdvault-crash.")
vault, data = os.path.join(work, "vault"), os.path.join(work, "data")
shutil.copytree("tests/fixtures/vault", vault)
os.makedirs(os.path.join(vault, "Crash/Links"))
os.makedirs(os.path.join(vault, "Crash/W"))
SHARED = "Crash/Shared.md"
with open(os.path.join(vault, SHARED), "w") as f:
    f.write("# Shared\n")
shared_acked = []  # every append to SHARED acknowledged by the server or the CLI
CLI_ENV = {
    "PATH": os.environ.get("PATH", ""),
    "HOME": os.path.join(work, "home"),
    "MDVAULT_CONFIG": "",
    "MDVAULT_EMBEDDING__BACKEND": "hashing",
    "MDVAULT_INDEX__INDEX_MD": "false",
    "MDVAULT_LOG": "warn",
}


def link_note(n, link, tag):
    """A linking note's whole text with this link and tag: what every byte must be."""
    return f"# Link {n}\n\nSee {link} for the hub. #{tag}\n\n" + "Filler line.\n" * 20


with open(os.path.join(vault, OLD), "w") as f:
    f.write("# Hub\n\nThe note every crash test link points at.\n")
for n in range(LINKS):
    with open(os.path.join(vault, f"Crash/Links/L{n:02}.md"), "w") as f:
        f.write(link_note(n, OLD_LINK, TAG_A))


def free_port():
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Server:
    def __init__(self, n):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = os.path.join(work, f"server-{n:02}.log")
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": os.path.join(work, "home"),
            "MDVAULT_CONFIG": "",
            "MDVAULT_API_KEY": KEY,
            "MDVAULT_EMBEDDING__BACKEND": "hashing",
            # No background writes of index.md: every temporary seen is a request's.
            "MDVAULT_INDEX__INDEX_MD": "false",
            "MDVAULT_LOG": "mdvault=info,warn",
        }
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(
            [BIN, "serve", "--listen", f"127.0.0.1:{self.port}", "--data-dir", data,
             "--vault", f"crash={vault}"],
            env=env, stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log)
        deadline = time.time() + 120
        while time.time() < deadline:
            if self.proc.poll() is not None:
                sys.exit(f"crash-test: the server exited at start; see {self.log_path}")
            try:
                urllib.request.urlopen(self.base + "/healthz", timeout=2)
                return
            except OSError:
                time.sleep(0.05)
        sys.exit("crash-test: the server did not answer /healthz within 120 s")

    def call(self, method, path, body=None, ctype="text/markdown", timeout=60):
        req = urllib.request.Request(self.base + path, data=body, method=method, headers={
            "Authorization": "Bearer " + KEY, "Content-Type": ctype})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()
        except OSError:
            return None, ""  # killed mid-request: not acknowledged

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self.log.close()

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def quote(path):
    return urllib.parse.quote(path)


def move(server, src, dst):
    body = json.dumps({"destination": dst}).encode()
    return server.call("POST", "/move/" + quote(src), body, "application/json")


acked = {}  # path -> content of every acknowledged write
hub = OLD   # where the hub is known to be
tag = TAG_A  # the tag the linking notes are known to carry
violations = []
counts = {"kills": 0, "aimed": 0, "mid_commit": 0, "writes": 0, "moves_acked": 0, "renames_acked": 0, "forward": 0, "back": 0,
          "swept": 0, "cli_appends": 0, "cli_killed": 0, "rest_appends": 0}


def check(cycle, server_pid, move_acked, rename_acked):
    """The invariants after a restart; records where the hub is and which tag the notes carry."""
    global hub, tag
    found = []
    for path, content in acked.items():
        try:
            with open(os.path.join(vault, path)) as f:
                if f.read() != content:
                    found.append(f"acknowledged write {path} has other content")
        except FileNotFoundError:
            found.append(f"acknowledged write {path} is missing")
    old, new = (os.path.exists(os.path.join(vault, p)) for p in (OLD, NEW))
    if old == new:
        found.append(f"the hub is at {'both paths' if old else 'neither path'}")
    where = OLD if old else NEW
    want, other = (OLD_LINK, NEW_LINK) if old else (NEW_LINK, OLD_LINK)
    stale, tagged = [], {TAG_A: 0, TAG_B: 0}
    texts = []
    for n in range(LINKS):
        with open(os.path.join(vault, f"Crash/Links/L{n:02}.md")) as f:
            text = f.read()
        texts.append(text)
        if want not in text or other in text:
            stale.append(n)
        for t in tagged:
            tagged[t] += f"#{t}\n" in text
    if stale:
        found.append(f"hub at {where} but {len(stale)} of {LINKS} links do not point at it "
                     f"(half-done move): {stale[:8]}")
    carried = TAG_A if tagged[TAG_A] == LINKS else TAG_B if tagged[TAG_B] == LINKS else None
    if carried is None:
        found.append(f"half-done tag rename: {tagged[TAG_A]} notes carry #{TAG_A} and "
                     f"{tagged[TAG_B]} #{TAG_B}, of {LINKS}")
    else:
        # The move and the rename each change only their own span: every other byte stays.
        changed = [n for n in range(LINKS) if texts[n] != link_note(n, want, carried)]
        if changed:
            found.append(f"linking notes changed beyond their link and tag: {changed[:8]}")
        if rename_acked and carried != rename_acked:
            found.append(f"an acknowledged tag rename to #{rename_acked} was lost")
        tag = carried
    with open(os.path.join(vault, SHARED)) as f:
        lines = f.read().splitlines()
    for line in shared_acked:
        n = lines.count(line)
        if n != 1:
            found.append(f"acknowledged append {line!r} is in {SHARED} {n} times")
    if move_acked and where != move_acked:
        found.append(f"an acknowledged move to {move_acked} was lost")
    for dirpath, dirnames, filenames in os.walk(vault):
        for name in filenames + dirnames:
            if name.startswith(".mdvault-") and not name.startswith(f".mdvault-{server_pid}-"):
                found.append(f"stray temporary {os.path.relpath(os.path.join(dirpath, name), vault)}")
        dirnames[:] = [d for d in dirnames if not d.startswith(".mdvault-")]
    if records():
        found.append(f"journal records left: {records()}")
    for v in found:
        violations.append(f"cycle {cycle}: {v}")
    hub = where
    return found


def log_counts(path):
    with open(path) as f:
        text = f.read()
    counts["forward"] += text.count("rolled forward")
    counts["back"] += text.count("rolled back")
    counts["swept"] += text.count("temporary file(s) left by mdvault processes")


JOURNAL = os.path.join(data, "journal")


def records():
    try:
        return [n for n in os.listdir(JOURNAL) if n.endswith(".json")]
    except FileNotFoundError:
        return []


def wait_for(predicate, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(0.0005)
    return False


# Cycle 0: an uninterrupted move there and back, timing the commit window: from the move's
# journal record appearing (planning and staging done) to its removal (every rename done).
server = Server(0)
windows = []
for src, dst in ((OLD, NEW), (NEW, OLD)):
    answer = {}
    t = threading.Thread(target=lambda: answer.update(r=move(server, src, dst)))
    t.start()
    if not wait_for(lambda: records(), 30):
        sys.exit("crash-test: no move record appeared in the journal")
    opened = time.time()
    wait_for(lambda: not records(), 30)
    windows.append(time.time() - opened)
    t.join()
    if answer["r"][0] != 200:
        sys.exit(f"crash-test: the timing move failed: {answer['r']}")
window = max(windows)
print(f"crash-test: seed {SEED}; the commit of a move of a note with {LINKS} inbound links "
      f"takes {window:.3f} s; scratch folder {work}", flush=True)

for cycle in range(1, CYCLES + 1):
    aimed = cycle % 2 == 0
    src, dst = (OLD, NEW) if hub == OLD else (NEW, OLD)
    tag_from, tag_to = (TAG_A, TAG_B) if tag == TAG_A else (TAG_B, TAG_A)
    result = {}
    stop = threading.Event()

    def writer(server=server, cycle=cycle):
        i = 0
        while not stop.is_set():
            path = f"Crash/W/c{cycle:02}-{i:03}.md"
            content = f"# Write {cycle}.{i}\n\n{'x' * rng.randrange(10, 2000)}\n"
            status, _ = server.call("PUT", "/vault/" + quote(path), content.encode())
            if status is None:
                return
            if 200 <= status < 300:
                acked[path] = content
                counts["writes"] += 1
            i += 1

    def mover(server=server):
        result["started"] = time.time()
        result["status"] = move(server, src, dst)[0]

    def renamer(server=server):
        body = json.dumps({"from": tag_from, "to": tag_to}).encode()
        result["rename"] = server.call("POST", "/tags/rename", body, "application/json")[0]

    def rest_appender(server=server, cycle=cycle):
        i = 0
        while not stop.is_set():
            line = f"- rest {cycle}.{i}"
            status, _ = server.call("POST", "/vault/" + quote(SHARED), line.encode())
            if status is None:
                return
            if 200 <= status < 300:
                shared_acked.append(line)
                counts["rest_appends"] += 1
            i += 1

    def cli_appender(cycle=cycle):
        # A second process writing the same note: one `mdvault append` after another, one in
        # five killed at a random moment. Every other one runs on the server's data directory
        # (so a CLI that starts while the server lies dead settles the move journal as a
        # restarted server would), the rest on a data directory of its own, which cannot see
        # the journal and must leave a dead move's temporaries to it.
        i = 0
        while not stop.is_set():
            line = f"- cli {cycle}.{i}"
            cli_data = data if i % 2 == 0 else os.path.join(work, "cli-data")
            proc = subprocess.Popen(
                [BIN, "append", SHARED, "--content", line, "--vault", f"crash={vault}",
                 "--data-dir", cli_data],
                env=CLI_ENV, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL)
            if rng.random() < 0.2:
                time.sleep(rng.uniform(0.0, 0.05))
                proc.send_signal(signal.SIGKILL)
                counts["cli_killed"] += 1
            if proc.wait() == 0:
                shared_acked.append(line)
                counts["cli_appends"] += 1
            i += 1

    threads = [threading.Thread(target=writer), threading.Thread(target=mover),
               threading.Thread(target=renamer),
               threading.Thread(target=rest_appender), threading.Thread(target=cli_appender)]
    for t in threads:
        t.start()
    while "started" not in result:
        time.sleep(0.001)
    if aimed:
        # Inside the commit: once the move's record is on disk, somewhere among its renames.
        counts["aimed"] += 1
        wait_for(lambda: records(), 10)
        start, delay = time.time(), window * rng.uniform(0.0, 1.0)
    else:
        start, delay = result["started"], rng.uniform(0.0, 1.5)
    time.sleep(max(0.0, start + delay - time.time()))
    server.kill()
    counts["kills"] += 1
    mid_commit = bool(records())
    counts["mid_commit"] += mid_commit
    stop.set()
    for t in threads:
        t.join()
    move_acked = dst if result.get("status") == 200 else None
    if move_acked:
        counts["moves_acked"] += 1
    rename_acked = tag_to if result.get("rename") == 200 else None
    if rename_acked:
        counts["renames_acked"] += 1

    server = Server(cycle)
    found = check(cycle, server.proc.pid, move_acked, rename_acked)
    log_counts(server.log_path)
    state = "moved" if hub == dst else "not moved"
    ack = "acknowledged" if move_acked else f"answer {result.get('status')}"
    renamed = "acknowledged" if rename_acked else f"answer {result.get('rename')}"
    when = "mid-commit" if mid_commit else "outside a commit"
    print(f"cycle {cycle:2}: killed {'aiming at the commit' if aimed else 'at random'} after "
          f"{delay:.3f} s ({when}); move {ack}, {state} after restart; tag rename {renamed}, "
          f"#{tag} after restart; "
          f"{'OK' if not found else 'VIOLATION: ' + '; '.join(found)}", flush=True)

server.stop()
print(f"crash-test: {CYCLES} cycles, {counts['kills']} kills ({counts['aimed']} aimed at a "
      f"move's commit, {counts['mid_commit']} landed inside one), {counts['writes']} acknowledged writes checked, "
      f"{counts['moves_acked']} moves and {counts['renames_acked']} tag renames acknowledged, "
      f"{counts['rest_appends']} server and "
      f"{counts['cli_appends']} CLI appends to one note acknowledged ({counts['cli_killed']} CLI "
      f"writers killed), recovery rolled {counts['forward']} forward "
      f"and {counts['back']} back, {counts['swept']} sweeps removed temporaries, "
      f"{len(violations)} violation(s)")
if violations:
    for v in violations:
        print("  " + v)
    print(f"crash-test: kept {work}")
    sys.exit(1)
if KEEP:
    print(f"crash-test: kept {work}")
else:
    shutil.rmtree(work, ignore_errors=True)
PY
