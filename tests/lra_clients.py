"""Drive two real Obsidian Local REST API clients against `mdvault serve`, as an agent would.

    python tests/lra_clients.py --base URL --key KEY --vault DIR --work DIR \
        --mcp-obsidian PROGRAM --node NODE --obsidian-mcp-server INDEX_JS [--only CLIENT] [--verbose]

scripts/lra-clients.sh installs the two clients (the Python package `mcp-obsidian` 0.2.3 and
the npm package `obsidian-mcp-server` 3.2.9), serves a copy of tests/fixtures/vault and runs this
with the project's `mcp` SDK (scripts/pyenv.sh). Each client is started as an MCP server over
stdio with the variables its own source reads, and pointed at a small recording proxy in front
of mdvault, so that a failure shows the exact HTTP requests the client sent and what mdvault
answered.

Every tool a client lists is either called, with the arguments an agent would give it, and
checked twice (by the tool's answer, and by the vault on disk: the change made exactly and
every other file byte for byte as before), or is out of scope, with its reason in the client's
OUT_OF_SCOPE table. An out-of-scope tool whose route mdvault refuses on purpose (the Obsidian
app's active file, commands and open; Dataview DQL) is still called, and the refusal must be
clear: an error object with an `errorCode`, 501 for the app-only routes. The checks assert what
the client's user meant, not what the server happens to do today.

Prints one line per call (details under a failure), the out-of-scope table, and a last line
`lra-clients: N passed, M failed`. Exit status 0 when every call passes, 1 when any fails, 2 when
a client could not be started or listed.
"""

import argparse
import asyncio
import difflib
import http.client
import http.server
import json
import os
import sys
import threading
import time
import traceback
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, Callable

import yaml
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import ElicitResult

CALL_TIMEOUT = 90.0

# --------------------------------------------------------------------------------------------
# The recording proxy
# --------------------------------------------------------------------------------------------

HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade"}


@dataclass
class Exchange:
    method: str
    target: str
    headers: list
    body: bytes
    status: int = 0
    response_headers: list = field(default_factory=list)
    response_body: bytes = b""

    def header(self, name, response=False):
        for key, value in self.response_headers if response else self.headers:
            if key.lower() == name.lower():
                return value
        return None

    def route(self):
        return urllib.parse.unquote(urllib.parse.urlsplit(self.target).path)

    def error_code(self):
        try:
            body = json.loads(self.response_body)
        except ValueError:
            return None
        return body.get("errorCode") if isinstance(body, dict) else None


class Recorder:
    """A plain HTTP proxy on a free loopback port that forwards every request to mdvault
    unchanged and keeps each exchange, in order."""

    def __init__(self, upstream):
        parts = urllib.parse.urlsplit(upstream)
        self.host, self.port = parts.hostname, parts.port
        self.exchanges = []
        self.lock = threading.Lock()
        recorder = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def read_body(self):
                if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
                    chunks = []
                    while True:
                        size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                        if size == 0:
                            while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                                pass
                            return b"".join(chunks)
                        chunks.append(self.rfile.read(size))
                        self.rfile.readline()
                length = int(self.headers.get("Content-Length") or 0)
                return self.rfile.read(length) if length else b""

            def forward(self):
                body = self.read_body()
                headers = [(k, v) for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP]
                exchange = Exchange(self.command, self.path, headers, body)
                upstream = http.client.HTTPConnection(recorder.host, recorder.port, timeout=120)
                try:
                    upstream.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
                    for key, value in headers:
                        upstream.putheader(key, value)
                    if body and self.headers.get("Content-Length") is None:
                        upstream.putheader("Content-Length", str(len(body)))
                    upstream.endheaders(body or None)
                    response = upstream.getresponse()
                    data = response.read()
                    exchange.status = response.status
                    exchange.response_headers = response.getheaders()
                    exchange.response_body = data
                except OSError as err:
                    exchange.status = 502
                    data = f"recording proxy: mdvault did not answer: {err}".encode()
                    exchange.response_body = data
                    self.send_response(502)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                finally:
                    upstream.close()
                    with recorder.lock:
                        recorder.exchanges.append(exchange)
                self.send_response_only(response.status, response.reason)
                for key, value in response.getheaders():
                    if key.lower() in HOP_BY_HOP or (key.lower() == "content-length" and self.command != "HEAD"):
                        continue
                    self.send_header(key, value)
                if self.command != "HEAD":
                    self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = forward
            do_OPTIONS = do_MOVE = do_COPY = forward

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def mark(self):
        with self.lock:
            return len(self.exchanges)

    def since(self, mark):
        with self.lock:
            return list(self.exchanges[mark:])


# Headers that say nothing about what the client asked for.
QUIET_HEADERS = {
    "host",
    "content-length",
    "user-agent",
    "accept-encoding",
    "authorization",
    "sec-fetch-mode",
    "accept-language",
}


def show_exchange(ex, limit=600):
    lines = [f"    > {ex.method} {ex.target}"]
    lines += [f"    >   {k}: {v}" for k, v in ex.headers if k.lower() not in QUIET_HEADERS]
    if ex.body:
        lines.append(f"    >   body: {clip(ex.body, limit)}")
    ctype = ex.header("Content-Type", response=True) or ""
    body = clip(ex.response_body, limit) if ex.response_body else "(no body)"
    lines.append(f"    < {ex.status} {ctype}: {body}")
    return "\n".join(lines)


def clip(data, limit):
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else str(data)
    text = json.dumps(text, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + "...(" + str(len(text)) + " chars)"


# --------------------------------------------------------------------------------------------
# The vault on disk
# --------------------------------------------------------------------------------------------


def snapshot(root):
    """Every file of the vault outside dot folders, by vault path."""
    files = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in names:
            if name.startswith("."):
                continue
            path = os.path.join(folder, name)
            with open(path, "rb") as handle:
                files[os.path.relpath(path, root).replace(os.sep, "/")] = handle.read()
    return files


def listing(root, folder=""):
    """A folder's entries as the plugin lists them: sub-folders with a trailing slash."""
    base = os.path.join(root, folder)
    names = []
    for name in os.listdir(base):
        if name.startswith("."):
            continue
        names.append(name + "/" if os.path.isdir(os.path.join(base, name)) else name)
    return sorted(names)


def notes_containing(files, word):
    needle = word.lower()
    return sorted(p for p, b in files.items() if p.endswith(".md") and needle in b.decode("utf-8", "replace").lower())


def file_diff(path, old, new):
    if old is None:
        return f"  {path}: created, {len(new)} bytes: {clip(new, 300)}"
    if new is None:
        return f"  {path}: deleted"
    lines = difflib.unified_diff(
        old.decode("utf-8", "replace").splitlines(keepends=True),
        new.decode("utf-8", "replace").splitlines(keepends=True),
        "before",
        "after",
        n=1,
    )
    body = "".join("      " + repr(line)[1:-1] + "\n" for line in list(lines)[2:40])
    return f"  {path}:\n{body.rstrip()}"


def vault_changes(before, after, expected):
    """Problems unless the vault changed exactly as `expected` says: a path maps to its new
    bytes, None (deleted), or a function of (old bytes, new bytes) that returns a problem or
    None. Every other file must be byte for byte as before."""
    problems = []
    for path in sorted(set(before) | set(after) | set(expected)):
        old, new = before.get(path), after.get(path)
        if path not in expected:
            if old != new:
                problems.append("unexpected change:\n" + file_diff(path, old, new))
            continue
        want = expected[path]
        if callable(want):
            problem = want(old, new)
            if problem:
                problems.append(f"{path}: {problem}")
        elif want is None:
            if new is not None:
                problems.append(f"{path} should be gone from the vault")
        elif new != want:
            if new is None:
                problems.append(f"{path} is missing; expected {clip(want, 300)}")
            else:
                problems.append("not the expected bytes (diff from expected to actual):\n" + file_diff(path, want, new))
    return problems


def text(data):
    return data.decode("utf-8")


def insert_after(old, anchor, addition):
    """`old` (bytes) with `addition` inserted right after the first occurrence of `anchor`."""
    source = text(old)
    at = source.index(anchor) + len(anchor)
    return (source[:at] + addition + source[at:]).encode()


def replace_once(old, find, replacement):
    source = text(old)
    assert source.count(find) == 1, f"anchor {find!r} is not unique"
    return source.replace(find, replacement).encode()


LIST_MARKERS = ("- ", "* ", "+ ")


def appended(old, addition):
    """`old` (bytes) after an append of `addition`, by mdvault's join rule (docs/editing.md, How
    additions join): a list continues without a blank line, anything else follows one blank
    line, and the note ends with one newline."""
    head = text(old).rstrip("\n")
    new = addition.strip("\n")
    last = head.rsplit("\n", 1)[-1].lstrip()
    continues = last.startswith(LIST_MARKERS) and new.startswith(LIST_MARKERS)
    return (head + ("\n" if continues else "\n\n") + new + "\n").encode()


def had_key(key, check):
    """`check`, for a note whose frontmatter had `key` before the call (else the call had nothing
    to do: an earlier call failed)."""

    def guarded(old, new):
        if old is None or key not in split_frontmatter(old)[0]:
            return f"not exercised: the note had no {key!r} before the call (an earlier call failed)"
        return check(old, new)

    return guarded


def split_frontmatter(data):
    source = text(data)
    if not source.startswith("---\n"):
        return {}, source
    end = source.index("\n---\n", 4)
    return yaml.safe_load(source[4:end]) or {}, source[end + 5 :]


def frontmatter_becomes(change):
    """A check for a note whose frontmatter the client rewrote itself (read, edit with its own
    YAML library, PUT back): the keys must be the old ones with `change` applied (a key mapped
    to None is removed) and the body untouched. obsidian-mcp-server 3.2.9 drops the blank line
    after the closing `---` when it re-emits the block, so leading blank lines of the body are
    not compared; that the server stored exactly what the client sent is checked separately
    (see `stored_as_sent`)."""

    def check(old, new):
        if new is None:
            return "the note is gone"
        old_fm, old_body = split_frontmatter(old)
        new_fm, new_body = split_frontmatter(new)
        want = {k: v for k, v in {**old_fm, **change}.items() if v is not None}
        if new_fm != want:
            return f"frontmatter is {new_fm!r}, expected {want!r}"
        if new_body.lstrip("\n") != old_body.lstrip("\n"):
            return "the body changed:\n" + file_diff("body", old_body.encode(), new_body.encode())
        return None

    return check


# --------------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------------


@dataclass
class Outcome:
    result: Any
    error: str
    answer: str
    structured: Any
    before: dict
    after: dict
    exchanges: list

    @property
    def failed(self):
        return self.error is not None or bool(getattr(self.result, "is_error", False))


@dataclass
class Case:
    tool: str
    title: str
    args: dict
    check: Callable
    out_of_scope: bool = False


def succeeded(o):
    if o.error is not None:
        return [f"the call raised: {o.error}"]
    if o.failed:
        return [f"the tool reported an error: {o.answer[:1500]}"]
    return []


def refused_clearly(route_prefix, status=None):
    """An out-of-scope call: the tool reports an error, and every request the client made to
    the route got an error object with an errorCode (and `status`, when given)."""

    def check(o):
        problems = []
        if not o.failed:
            problems.append(f"the tool reported success: {o.answer[:300]}")
        hits = [ex for ex in o.exchanges if ex.route().startswith(route_prefix)]
        if not hits:
            problems.append(f"the client sent no request to {route_prefix}")
        for ex in hits:
            if status is not None and ex.status != status:
                problems.append(f"{ex.method} {ex.target} answered {ex.status}, expected {status}")
            elif ex.status < 400:
                problems.append(f"{ex.method} {ex.target} answered {ex.status}, expected a refusal")
            if ex.error_code() is None:
                problems.append(f"{ex.method} {ex.target}: the answer has no errorCode")
        return problems + unchanged(o)

    return check


def stored_as_sent(o):
    """Every note a client wrote whole (PUT, answered 2xx) holds exactly the bytes it sent."""
    problems = []
    written = {}
    for ex in o.exchanges:
        if ex.method == "PUT" and 200 <= ex.status < 300 and ex.route().startswith("/vault/"):
            written[ex.route()[len("/vault/") :]] = ex.body
    for path, body in written.items():
        if o.after.get(path) != body:
            problems.append(
                f"PUT {path} succeeded, but the file does not hold the bytes sent:\n"
                + file_diff(path, body, o.after.get(path))
            )
    return problems


def answer_json(o):
    return json.loads(o.answer)


def unchanged(o):
    return vault_changes(o.before, o.after, {})


# ---- mcp-obsidian 0.2.3 ----------------------------------------------------------------------

# Each client's out-of-scope tools (and parts of tools), with the reason. Those that reach a
# route mdvault refuses on purpose are still called below, and must be refused clearly.
MCP_OBSIDIAN_OUT_OF_SCOPE = [
    (
        "obsidian_get_recent_changes",
        "",
        "sends a Dataview DQL query to /search/; DQL needs the Dataview plugin inside Obsidian. "
        "Called: must be refused with 400 and an errorCode",
    ),
    (
        "obsidian_get_recent_periodic_notes",
        "",
        "calls GET /periodic/<period>/recent, a route no Local REST API release has (4.x served only "
        "the current and the dated periodic note, 5.x none). Called: must be 404 with an errorCode",
    ),
]


def mcp_obsidian_cases(vault, today):
    daily = f"{today}.md"
    daily_body = f"# {today}\n\n- Boiler pressure read 1.3 bar cold\n- Booked the September service with Pellow\n"

    def list_root(o):
        problems = succeeded(o)
        if not problems and sorted(answer_json(o)) != listing(vault):
            problems.append(f"listed {sorted(answer_json(o))}, the vault root holds {listing(vault)}")
        return problems + unchanged(o)

    def list_dir(folder):
        def check(o):
            problems = succeeded(o)
            if not problems and sorted(answer_json(o)) != listing(vault, folder):
                problems.append(f"listed {sorted(answer_json(o))}, {folder} holds {listing(vault, folder)}")
            return problems + unchanged(o)

        return check

    def read(path):
        def check(o):
            problems = succeeded(o)
            if not problems and answer_json(o) != text(o.before[path]):
                problems.append(f"the answer is not the file's text: {clip(o.answer, 400)}")
            return problems + unchanged(o)

        return check

    def read_batch(paths):
        def check(o):
            problems = succeeded(o)
            want = "".join(f"# {p}\n\n{text(o.before[p])}\n\n---\n\n" for p in paths)
            if not problems and o.answer != want:
                problems.append(f"the answer is not the files' texts: {clip(o.answer, 600)}")
            return problems + unchanged(o)

        return check

    def simple_search(word):
        def check(o):
            problems = succeeded(o)
            if problems:
                return problems + unchanged(o)
            hits = answer_json(o)
            names = sorted(h["filename"] for h in hits)
            want = notes_containing(o.before, word)
            missing = sorted(set(want) - set(names))
            if missing:
                problems.append(f"{len(missing)} of the {len(want)} notes containing {word!r} are missing: {missing}")
            for hit in hits:
                if hit["filename"].endswith(".md") and hit["filename"] not in want:
                    problems.append(f"{hit['filename']} does not contain {word!r}")
                if not hit["matches"]:
                    problems.append(f"{hit['filename']}: no matches")
                for match in hit["matches"]:
                    if word.lower() not in match["context"].lower():
                        problems.append(f"{hit['filename']}: a context without {word!r}: {match['context']!r}")
                        break
            return problems + unchanged(o)

        return check

    def filenames(want):
        def check(o):
            problems = succeeded(o)
            if not problems:
                got = answer_json(o)
                names = sorted(h["filename"] if isinstance(h, dict) else h for h in got)
                if names != sorted(want):
                    problems.append(f"found {names}, expected {sorted(want)}")
            return problems + unchanged(o)

        return check

    def frontmatter_of(want):
        def check(o):
            problems = succeeded(o)
            if not problems and answer_json(o) != want:
                problems.append(f"frontmatter {answer_json(o)!r}, expected {want!r}")
            return problems + unchanged(o)

        return check

    def edits(expected):
        """A write: the tool succeeds and the vault changes exactly as `expected(before)` says."""

        def check(o):
            return succeeded(o) + vault_changes(o.before, o.after, expected(o.before))

        return check

    def periodic(kind):
        def check(o):
            problems = succeeded(o)
            if problems:
                return problems + unchanged(o)
            if kind == "content" and o.answer != daily_body:
                problems.append(f"the answer is not today's note: {clip(o.answer, 300)}")
            if kind == "metadata":
                note = answer_json(o)
                if note.get("path") != daily or note.get("content") != daily_body:
                    problems.append(f"path {note.get('path')!r}, content {clip(note.get('content', ''), 200)}")
            return problems + unchanged(o)

        return check

    boiler_fm = {
        "type": "asset",
        "title": "Boiler",
        "description": "Combi boiler in the kitchen cupboard — model, servicing, fault codes and settings.",
        "tags": ["home", "heating"],
        "timestamp": "2026-02-14T10:30:00Z",
    }
    return [
        Case("obsidian_list_files_in_vault", "the vault root", {}, list_root),
        Case(
            "obsidian_list_files_in_dir",
            "a folder with a sub-folder",
            {"dirpath": "Home/Utilities"},
            list_dir("Home/Utilities"),
        ),
        Case("obsidian_get_file_contents", "a note", {"filepath": "Home/Boiler.md"}, read("Home/Boiler.md")),
        Case(
            "obsidian_batch_get_file_contents",
            "a name with a space and a Chinese name",
            {"filepaths": ["Home/House Log.md", "Personal/Recipes/麻婆豆腐.md"]},
            read_batch(["Home/House Log.md", "Personal/Recipes/麻婆豆腐.md"]),
        ),
        Case(
            "obsidian_get_frontmatter",
            "a note's frontmatter",
            {"filepath": "Home/Boiler.md"},
            frontmatter_of(boiler_fm),
        ),
        Case(
            "obsidian_simple_search",
            "every note that mentions the boiler",
            {"query": "boiler"},
            simple_search("boiler"),
        ),
        Case(
            "obsidian_simple_search", "a year that nearly every note mentions", {"query": "2026"}, simple_search("2026")
        ),
        Case(
            "obsidian_simple_search",
            "a word in many notes, short context",
            {"query": "Wexcombe", "context_length": 40},
            simple_search("Wexcombe"),
        ),
        Case(
            "obsidian_complex_search",
            "JsonLogic: notes under Home/ that name Pellow",
            {"query": {"and": [{"regexp": ["^Home/", {"var": "path"}]}, {"regexp": ["Pellow", {"var": "content"}]}]}},
            filenames(["Home/Boiler.md", "Home/House Log.md"]),
        ),
        Case(
            "obsidian_search_by_tag",
            "an inline tag",
            {"tag": "renewal"},
            filenames(["Home/Boiler.md", "Home/Mortgage/Mortgage — Tallowmere Building Society.md"]),
        ),
        Case(
            "obsidian_search_by_tag",
            "a frontmatter tag in one folder",
            {"tag": "energy", "dirpath": "Home/Utilities"},
            filenames(["Home/Utilities/Electricity.md", "Home/Utilities/Gas.md"]),
        ),
        Case(
            "obsidian_patch_content",
            "append under a heading named by its last part",
            {
                "filepath": "Home/Boiler.md",
                "operation": "append",
                "target_type": "heading",
                "target": "Settings",
                "content": "- 2026-03-01: pressure checked cold, 1.3 bar",
            },
            edits(
                lambda b: {
                    "Home/Boiler.md": (
                        text(b["Home/Boiler.md"]) + "\n- 2026-03-01: pressure checked cold, 1.3 bar\n"
                    ).encode()
                }
            ),
        ),
        Case(
            "obsidian_patch_content",
            "prepend under a nested heading",
            {
                "filepath": "Tech/Home Assistant.md",
                "operation": "prepend",
                "target_type": "heading",
                "target": "Integrations::Notes",
                "content": "- The Zigbee stick moved to a longer extension cable.\n",
            },
            edits(
                lambda b: {
                    "Tech/Home Assistant.md": insert_after(
                        b["Tech/Home Assistant.md"],
                        "### Notes\n\n",
                        "- The Zigbee stick moved to a longer extension cable.\n\n",
                    )
                }
            ),
        ),
        Case(
            "obsidian_patch_content",
            "replace a heading's section",
            {
                "filepath": "Home/Utilities/Water.md",
                "operation": "replace",
                "target_type": "heading",
                "target": "Water::Leak check",
                "content": "Read the meter at 22:00 and again at 07:00 with nothing running.\n",
            },
            edits(
                lambda b: {
                    "Home/Utilities/Water.md": (
                        text(b["Home/Utilities/Water.md"]).split("## Leak check\n")[0]
                        + "## Leak check\n\nRead the meter at 22:00 and again at 07:00 with nothing running.\n"
                    ).encode()
                }
            ),
        ),
        Case(
            "obsidian_patch_content",
            "replace a frontmatter field",
            {
                "filepath": "Home/Boiler.md",
                "operation": "replace",
                "target_type": "frontmatter",
                "target": "type",
                "content": "appliance",
            },
            edits(
                lambda b: {"Home/Boiler.md": replace_once(b["Home/Boiler.md"], "type: asset\n", "type: appliance\n")}
            ),
        ),
        Case(
            "obsidian_patch_content",
            "append to a block",
            {
                "filepath": "Home/Utilities/Electricity.md",
                "operation": "append",
                "target_type": "block",
                "target": "k7d2q9",
                "content": "The display batteries were changed in May 2026.",
            },
            edits(
                lambda b: {
                    "Home/Utilities/Electricity.md": insert_after(
                        b["Home/Utilities/Electricity.md"],
                        " ^k7d2q9\n",
                        "\nThe display batteries were changed in May 2026.\n",
                    )
                }
            ),
        ),
        Case(
            "obsidian_append_content",
            "append to a note",
            {"filepath": "Inbox/Scratch.md", "content": "\n- Ask the allotment society about the waiting list\n"},
            edits(
                lambda b: {
                    "Inbox/Scratch.md": appended(
                        b["Inbox/Scratch.md"], "\n- Ask the allotment society about the waiting list\n"
                    )
                }
            ),
        ),
        Case(
            "obsidian_append_content",
            "append to a note that does not exist yet creates it",
            {"filepath": "Inbox/Call list.md", "content": "- Pellow Heating: confirm the service date\n"},
            edits(lambda b: {"Inbox/Call list.md": b"- Pellow Heating: confirm the service date\n"}),
        ),
        Case(
            "obsidian_put_content",
            "create a note",
            {
                "filepath": "Inbox/Meeting 2026-03-02.md",
                "content": "# Meeting 2026-03-02\n\n- Boiler service booked for 3 September\n",
            },
            edits(
                lambda b: {
                    "Inbox/Meeting 2026-03-02.md": b"# Meeting 2026-03-02\n\n- Boiler service booked for 3 September\n"
                }
            ),
        ),
        Case(
            "obsidian_put_content",
            "overwrite a note",
            {"filepath": "Inbox/Call list.md", "content": "- Corrin Energy: meter reading\n"},
            edits(lambda b: {"Inbox/Call list.md": b"- Corrin Energy: meter reading\n"}),
        ),
        Case(
            "obsidian_put_content",
            "write today's daily note",
            {"filepath": daily, "content": daily_body},
            edits(lambda b: {daily: daily_body.encode()}),
        ),
        Case("obsidian_get_periodic_note", "today's daily note", {"period": "daily"}, periodic("content")),
        Case(
            "obsidian_get_periodic_note",
            "today's daily note with its metadata",
            {"period": "daily", "type": "metadata"},
            periodic("metadata"),
        ),
        Case(
            "obsidian_delete_file",
            "delete a note",
            {"filepath": "Inbox/Meeting 2026-03-02.md", "confirm": True},
            edits(lambda b: {"Inbox/Meeting 2026-03-02.md": None}),
        ),
        Case(
            "obsidian_get_recent_changes",
            "Dataview DQL",
            {"limit": 5, "days": 30},
            refused_clearly("/search/", 400),
            out_of_scope=True,
        ),
        Case(
            "obsidian_get_recent_periodic_notes",
            "no such route",
            {"period": "daily", "limit": 3},
            refused_clearly("/periodic/", 404),
            out_of_scope=True,
        ),
    ]


# ---- obsidian-mcp-server 3.2.9 ---------------------------------------------------------------

OBSIDIAN_MCP_SERVER_OUT_OF_SCOPE = [
    (
        "obsidian_open_in_ui",
        "",
        "opens a file in the Obsidian window (POST /open/): there is no app. " "Called: must be 501 with an errorCode",
    ),
    (
        "obsidian_list_commands",
        "",
        "lists the Obsidian command palette (GET /commands/): needs the app. "
        "Called (with OBSIDIAN_ENABLE_COMMANDS=true): must be 501 with an errorCode",
    ),
    (
        "obsidian_execute_command",
        "",
        "runs an Obsidian command (POST /commands/<id>/): needs the app. "
        "Called (with OBSIDIAN_ENABLE_COMMANDS=true): must be 501 with an errorCode",
    ),
    (
        "obsidian_get_note",
        "target {type: active}, on this and every tool that takes a target",
        "the file open in the Obsidian window (/active/): there is no app. Called: must be 501 with an errorCode",
    ),
    (
        "obsidian_get_note",
        "format document-map",
        "reads the 4.x document map (headings as a flat list of A::B paths) without sending "
        "Markdown-Patch-Version: 1. The 5.x contract, which the plugin's own suite holds mdvault to, "
        "answers that request with the 2.x heading tree, so the client's output check refuses it, as it "
        "would against the plugin 5.x. Not called",
    ),
    (
        "obsidian_search_notes",
        "mode omnisearch",
        "BM25 search through the Omnisearch plugin's own HTTP server, not the Local REST API; the client "
        "offers the mode only when that server answers at start-up. Not offered, not called",
    ),
]


def obsidian_mcp_server_cases(vault):
    def result_of(o):
        data = o.structured or {}
        return data.get("result", data)

    def structured(expect):
        """The tool succeeds, `expect(result, o)` finds no problem and the vault is unchanged."""

        def check(o):
            problems = succeeded(o)
            if not problems:
                problems += expect(result_of(o), o)
            return problems + unchanged(o)

        return check

    def edits(expected, expect=None):
        def check(o):
            problems = succeeded(o)
            if not problems and expect is not None:
                problems += expect(result_of(o), o)
            return problems + vault_changes(o.before, o.after, expected(o.before))

        return check

    def walk(folder, depth, ext=None):
        entries = []

        def visit(rel, level):
            for name in listing(vault, rel):
                is_dir = name.endswith("/")
                bare = name.rstrip("/")
                if not is_dir and ext and not bare.lower().endswith(ext):
                    continue
                path = f"{rel}/{bare}" if rel else bare
                entries.append((path, "directory" if is_dir else "file"))
                if is_dir and level < depth:
                    visit(path, level + 1)

        visit(folder, 1)
        return sorted(entries)

    def listed(folder, depth, ext=None):
        def expect(r, o):
            got = sorted((e["path"], e["type"]) for e in r.get("entries", []))
            want = walk(folder, depth, ext)
            return [] if got == want else [f"entries {got}, expected {want}"]

        return expect

    def content_is(path, echoed=True):
        def expect(r, o):
            if r.get("content") != text(o.before[path]):
                return [f"content is not {path}'s text: {clip(r.get('content', ''), 300)}"]
            if echoed and r.get("path") != path:
                return [f"path {r.get('path')!r}, expected {path!r}"]
            return []

        return expect

    def full_note(r, o):
        path = "Home/Utilities/Gas.md"
        problems = content_is(path)(r, o)
        fm = r.get("frontmatter", {})
        if fm.get("title") != "Gas" or fm.get("tags") != ["home", "utilities", "energy"]:
            problems.append(f"frontmatter {fm!r}")
        if sorted(r.get("tags", [])) != ["energy", "home", "utilities"]:
            problems.append(f"tags {r.get('tags')!r}, expected home, utilities and energy")
        if (r.get("stat") or {}).get("size") != len(o.before[path]):
            problems.append(f"stat {r.get('stat')!r}, expected size {len(o.before[path])}")
        links = sorted((link["type"], link["target"]) for link in r.get("outgoingLinks", []))
        if links != [("markdown", "../Boiler.md"), ("wikilink", "Boiler")]:
            problems.append(f"outgoing links {links}")
        return problems

    def section_text(contains, lacks):
        def expect(r, o):
            value = r.get("valueText", "")
            problems = [f"the section lacks {c!r}: {clip(value, 300)}" for c in contains if c not in value]
            problems += [f"the section runs on into {c!r}" for c in lacks if c in value]
            return problems

        return expect

    def section_json(want):
        def expect(r, o):
            return [] if r.get("valueJson") == want else [f"value {r.get('valueJson')!r}, expected {want!r}"]

        return expect

    def tags_include(want, only=False):
        def expect(r, o):
            got = {t["name"]: t["count"] for t in r.get("tags", [])}
            problems = [
                f"tag {name}: {got.get(name)!r}, expected count {count}"
                for name, count in want.items()
                if got.get(name) != count
            ]
            if only and set(got) != set(want):
                problems.append(f"tags {sorted(got)}, expected only {sorted(want)}")
            return problems

        return expect

    def hits(word=None, prefix="", want=None):
        def expect(r, o):
            names = sorted(h["filename"] for h in r.get("hits", []))
            if r.get("nextCursor"):
                return [f"{len(names)} hits and more pages; expected one page"]
            expected = (
                want if want is not None else [p for p in notes_containing(o.before, word) if p.startswith(prefix)]
            )
            problems = []
            missing = sorted(set(expected) - set(names))
            if missing:
                problems.append(f"{len(missing)} of the {len(expected)} expected notes are missing: {missing}")
            extra = sorted(n for n in set(names) - set(expected) if n.endswith(".md") or want is not None)
            if extra:
                problems.append(f"unexpected hits: {extra}")
            if word:
                for hit in r.get("hits", []):
                    if not hit.get("matches") or any(word.lower() not in m["context"].lower() for m in hit["matches"]):
                        problems.append(f"{hit['filename']}: a match whose context lacks {word!r}")
            return problems

        return expect

    def sizes(r, o):
        path = r.get("path")
        after = o.after.get(path)
        if after is not None and r.get("currentSizeInBytes") != len(after):
            return [f"currentSizeInBytes {r.get('currentSizeInBytes')}, the file has {len(after)} bytes"]
        return []

    def created(flag):
        def expect(r, o):
            return sizes(r, o) + (
                [] if r.get("created") is flag else [f"created {r.get('created')!r}, expected {flag}"]
            )

        return expect

    def replaced(r, o):
        if r.get("totalReplacements") != 1:
            return [f"totalReplacements {r.get('totalReplacements')!r}, expected 1"]
        return sizes(r, o)

    def tag_list(r, o):
        tags = r.get("tags", {})
        if tags.get("frontmatter") != ["home", "heating"] or tags.get("inline") != ["renewal"]:
            return [f"tags {tags!r}, expected frontmatter [home, heating] and inline [renewal]"]
        return []

    def refused_exists(o):
        problems = []
        if not o.failed:
            problems.append(f"the tool overwrote an existing note without overwrite: true: {o.answer[:200]}")
        elif "exists" not in o.answer:
            problems.append(f"refused, but not because the note exists: {o.answer[:300]}")
        return problems + unchanged(o)

    def elicited(r, o):
        return [] if r.get("deleted") is True else [f"deleted {r.get('deleted')!r}"]

    boiler = {"type": "path", "path": "Home/Boiler.md"}
    water = {"type": "path", "path": "Home/Utilities/Water.md"}
    renewal = ["Home/Boiler.md", "Home/Mortgage/Mortgage — Tallowmere Building Society.md"]
    status_line = "status: serviced\n"
    return [
        Case("obsidian_list_notes", "the vault, two levels", {}, structured(listed("", 2))),
        Case(
            "obsidian_list_notes",
            "a folder, notes only, three levels",
            {"path": "Home", "extension": "md", "depth": 3},
            structured(listed("Home", 3, ".md")),
        ),
        Case(
            "obsidian_get_note",
            "content",
            {"format": "content", "target": {"type": "path", "path": "Home/Utilities/Gas.md"}},
            structured(content_is("Home/Utilities/Gas.md")),
        ),
        Case(
            "obsidian_get_note",
            "content, the file name in the wrong case",
            {"format": "content", "target": {"type": "path", "path": "Home/boiler.md"}},
            structured(content_is("Home/Boiler.md", echoed=False)),
        ),
        Case(
            "obsidian_get_note",
            "full, with links",
            {"format": "full", "target": {"type": "path", "path": "Home/Utilities/Gas.md"}, "includeLinks": True},
            structured(full_note),
        ),
        Case(
            "obsidian_get_note",
            "a heading section",
            {"format": "section", "target": boiler, "section": {"type": "heading", "target": "Boiler::Settings"}},
            structured(section_text(["## Settings", "Cold system pressure: 1.3 bar"], ["## Faults"])),
        ),
        Case(
            "obsidian_get_note",
            "a frontmatter field",
            {"format": "section", "target": boiler, "section": {"type": "frontmatter", "target": "tags"}},
            structured(section_json(["home", "heating"])),
        ),
        Case(
            "obsidian_get_note",
            "a block",
            {
                "format": "section",
                "target": {"type": "path", "path": "Home/Utilities/Electricity.md"},
                "section": {"type": "block", "target": "k7d2q9"},
            },
            structured(section_text(["Smart meter in the cupboard", "^k7d2q9"], ["## Meter readings"])),
        ),
        Case(
            "obsidian_list_tags",
            "every tag",
            {},
            structured(tags_include({"renewal": 2, "energy": 2, "heating": 1, "budget": 1})),
        ),
        Case(
            "obsidian_list_tags", "tags by name", {"nameRegex": "^ren"}, structured(tags_include({"renewal": 2}, True))
        ),
        Case(
            "obsidian_search_notes",
            "text: every note that mentions the boiler",
            {"mode": "text", "query": "boiler"},
            structured(hits("boiler")),
        ),
        Case(
            "obsidian_search_notes",
            "text: a year that nearly every note mentions",
            {"mode": "text", "query": "2026"},
            structured(hits("2026")),
        ),
        Case(
            "obsidian_search_notes",
            "text under a folder",
            {"mode": "text", "query": "Wexcombe", "pathPrefix": "Personal/", "contextLength": 30},
            structured(hits("Wexcombe", "Personal/")),
        ),
        Case(
            "obsidian_search_notes",
            "JsonLogic on tags",
            {"mode": "jsonlogic", "logic": {"in": ["renewal", {"var": "tags"}]}},
            structured(hits(want=renewal)),
        ),
        Case(
            "obsidian_write_note",
            "create a note",
            {"target": {"type": "path", "path": "Inbox/Groceries.md"}, "content": "# Groceries\n\n- oat milk\n"},
            edits(lambda b: {"Inbox/Groceries.md": b"# Groceries\n\n- oat milk\n"}, created(True)),
        ),
        Case(
            "obsidian_write_note",
            "refuse to overwrite without overwrite: true",
            {"target": {"type": "path", "path": "Inbox/Groceries.md"}, "content": "# Groceries\n"},
            refused_exists,
        ),
        Case(
            "obsidian_write_note",
            "overwrite a note",
            {
                "target": {"type": "path", "path": "Inbox/Groceries.md"},
                "overwrite": True,
                "content": "# Groceries\n\n- oat milk\n- E14 candle bulbs\n",
            },
            edits(lambda b: {"Inbox/Groceries.md": b"# Groceries\n\n- oat milk\n- E14 candle bulbs\n"}, created(False)),
        ),
        Case(
            "obsidian_write_note",
            "write a dated daily note",
            {"target": {"type": "path", "path": "2026-01-31.md"}, "content": "# 2026-01-31\n\n- Gas meter 04401\n"},
            edits(lambda b: {"2026-01-31.md": b"# 2026-01-31\n\n- Gas meter 04401\n"}, created(True)),
        ),
        Case(
            "obsidian_get_note",
            "a dated daily note",
            {"format": "content", "target": {"type": "periodic", "period": "daily", "date": "2026-01-31"}},
            structured(content_is("2026-01-31.md")),
        ),
        Case(
            "obsidian_write_note",
            "replace a heading's section",
            {
                "target": water,
                "section": {"type": "heading", "target": "Water::Leak check"},
                "content": "Read the meter at 22:00 and again at 07:00 with nothing running.",
            },
            edits(
                lambda b: {
                    "Home/Utilities/Water.md": (
                        text(b["Home/Utilities/Water.md"]).split("## Leak check\n")[0]
                        + "## Leak check\n\nRead the meter at 22:00 and again at 07:00 with nothing running.\n"
                    ).encode()
                },
                sizes,
            ),
        ),
        Case(
            "obsidian_write_note",
            "replace a frontmatter field with a JSON value",
            {
                "target": water,
                "section": {"type": "frontmatter", "target": "expires_reason"},
                "content": json.dumps("No contract term; the bill rolls over each April."),
                "contentType": "json",
            },
            edits(
                lambda b: {
                    "Home/Utilities/Water.md": replace_once(
                        b["Home/Utilities/Water.md"],
                        "expires_reason: Water has no contract term; the bill simply rolls over each April.\n",
                        "expires_reason: No contract term; the bill rolls over each April.\n",
                    )
                },
                sizes,
            ),
        ),
        Case(
            "obsidian_append_to_note",
            "append to a note",
            {
                "target": {"type": "path", "path": "Inbox/Scratch.md"},
                "content": "\n- Renew the allotment key deposit\n",
            },
            edits(
                lambda b: {
                    "Inbox/Scratch.md": appended(b["Inbox/Scratch.md"], "\n- Renew the allotment key deposit\n")
                },
                created(False),
            ),
        ),
        Case(
            "obsidian_append_to_note",
            "append to a note that does not exist yet creates it",
            {"target": {"type": "path", "path": "Inbox/Reading list.md"}, "content": "- The Overstory\n"},
            edits(lambda b: {"Inbox/Reading list.md": b"- The Overstory\n"}, created(True)),
        ),
        Case(
            "obsidian_append_to_note",
            "append under a heading",
            {
                "target": {"type": "path", "path": "Finance/Subscriptions.md"},
                "section": {"type": "heading", "target": "Subscriptions::Monthly"},
                "content": "- Audiobook club, £7.99",
            },
            edits(
                lambda b: {
                    "Finance/Subscriptions.md": insert_after(
                        b["Finance/Subscriptions.md"], "- Allotment society, £3\n", "- Audiobook club, £7.99\n"
                    )
                },
                sizes,
            ),
        ),
        Case(
            "obsidian_append_to_note",
            "append under a heading it creates",
            {
                "target": {"type": "path", "path": "Home/Appliances.md"},
                "section": {"type": "heading", "target": "Appliances::Warranty claims"},
                "content": "- 2026-03-04: drain pump DP-4418-K",
                "createTargetIfMissing": True,
            },
            edits(
                lambda b: {
                    "Home/Appliances.md": (
                        text(b["Home/Appliances.md"]) + "\n## Warranty claims\n\n- 2026-03-04: drain pump DP-4418-K\n"
                    ).encode()
                },
                sizes,
            ),
        ),
        Case(
            "obsidian_patch_note",
            "prepend under a heading whose name a sub-heading repeats",
            {
                "target": {"type": "path", "path": "Tech/Home Assistant.md"},
                "operation": "prepend",
                "section": {"type": "heading", "target": "Notes"},
                "content": "- Check the backup job after each update.",
            },
            edits(
                lambda b: {
                    "Tech/Home Assistant.md": insert_after(
                        b["Tech/Home Assistant.md"], "\n## Notes\n\n", "- Check the backup job after each update.\n\n"
                    )
                },
                sizes,
            ),
        ),
        Case(
            "obsidian_patch_note",
            "replace a block",
            {
                "target": {"type": "path", "path": "Home/Utilities/Electricity.md"},
                "operation": "replace",
                "section": {"type": "block", "target": "k7d2q9"},
                "content": "Smart meter under the stairs, second generation; MPAN 1730028845196.",
            },
            edits(
                lambda b: {
                    "Home/Utilities/Electricity.md": replace_once(
                        b["Home/Utilities/Electricity.md"],
                        text(b["Home/Utilities/Electricity.md"]).split("## Meter\n\n")[1].split(" ^k7d2q9\n")[0],
                        "Smart meter under the stairs, second generation; MPAN 1730028845196.",
                    )
                },
                sizes,
            ),
        ),
        Case(
            "obsidian_patch_note",
            "replace a frontmatter field with text",
            {
                "target": {"type": "path", "path": "Home/Utilities/Electricity.md"},
                "operation": "replace",
                "section": {"type": "frontmatter", "target": "description"},
                "content": "Halloway Energy electricity.",
            },
            edits(
                lambda b: {
                    "Home/Utilities/Electricity.md": replace_once(
                        b["Home/Utilities/Electricity.md"],
                        "description: Halloway Energy electricity supply — account, tariff, smart meter and monthly readings.\n",
                        "description: Halloway Energy electricity.\n",
                    )
                },
                sizes,
            ),
        ),
        Case(
            "obsidian_replace_in_note",
            "a literal replacement",
            {
                "target": {"type": "path", "path": "Home/Utilities/Gas.md"},
                "replacements": [
                    {"search": "Corrin Flex, variable", "replace": "Corrin Fix 12, fixed until March 2027"}
                ],
            },
            edits(
                lambda b: {
                    "Home/Utilities/Gas.md": replace_once(
                        b["Home/Utilities/Gas.md"], "Corrin Flex, variable", "Corrin Fix 12, fixed until March 2027"
                    )
                },
                replaced,
            ),
        ),
        Case(
            "obsidian_manage_frontmatter",
            "get a field",
            {"operation": "get", "target": boiler, "key": "title"},
            structured(lambda r, o: [] if r.get("value") == "Boiler" and r.get("exists") else [f"got {r!r}"]),
        ),
        Case(
            "obsidian_manage_frontmatter",
            "set a new field",
            {"operation": "set", "target": boiler, "key": "status", "value": "serviced"},
            edits(
                lambda b: {
                    "Home/Boiler.md": insert_after(
                        b["Home/Boiler.md"], "timestamp: 2026-02-14T10:30:00Z\n", status_line
                    )
                }
            ),
        ),
        Case(
            "obsidian_manage_frontmatter",
            "set a field to a list",
            {"operation": "set", "target": boiler, "key": "tags", "value": ["home", "heating", "gas"]},
            edits(
                lambda b: {
                    "Home/Boiler.md": replace_once(
                        b["Home/Boiler.md"], "tags: [home, heating]\n", "tags: [home, heating, gas]\n"
                    )
                }
            ),
        ),
        Case(
            "obsidian_manage_frontmatter",
            "delete a field",
            {"operation": "delete", "target": boiler, "key": "status"},
            edits(lambda b: {"Home/Boiler.md": had_key("status", frontmatter_becomes({"status": None}))}),
        ),
        Case(
            "obsidian_manage_tags",
            "list a note's tags",
            {
                "operation": "list",
                "target": {"type": "path", "path": "Home/Mortgage/Mortgage — Tallowmere Building Society.md"},
            },
            structured(
                lambda r, o: [] if r.get("tags", {}).get("inline") == ["renewal"] else [f"tags {r.get('tags')!r}"]
            ),
        ),
        Case(
            "obsidian_manage_tags",
            "add a tag",
            {"operation": "add", "target": water, "tags": ["metered"]},
            edits(
                lambda b: {"Home/Utilities/Water.md": frontmatter_becomes({"tags": ["home", "utilities", "metered"]})}
            ),
        ),
        Case(
            "obsidian_manage_tags",
            "remove a tag",
            {"operation": "remove", "target": water, "tags": ["metered"]},
            edits(lambda b: {"Home/Utilities/Water.md": frontmatter_becomes({"tags": ["home", "utilities"]})}),
        ),
        Case(
            "obsidian_delete_note",
            "delete a note, confirmed when asked",
            {"target": {"type": "path", "path": "Inbox/Groceries.md"}},
            edits(lambda b: {"Inbox/Groceries.md": None}, elicited),
        ),
        Case(
            "obsidian_get_note",
            "the active file",
            {"format": "content", "target": {"type": "active"}},
            refused_clearly("/active/", 501),
            out_of_scope=True,
        ),
        Case(
            "obsidian_open_in_ui",
            "open a note",
            {"path": "Home/Boiler.md"},
            refused_clearly("/open/", 501),
            out_of_scope=True,
        ),
        Case(
            "obsidian_list_commands", "the command palette", {}, refused_clearly("/commands/", 501), out_of_scope=True
        ),
        Case(
            "obsidian_execute_command",
            "a command",
            {"commandId": "editor:save-file"},
            refused_clearly("/commands/", 501),
            out_of_scope=True,
        ),
    ]


# --------------------------------------------------------------------------------------------
# Running a client
# --------------------------------------------------------------------------------------------


@dataclass
class Report:
    client: str
    version: str
    out_of_scope: list
    passed: int = 0
    failed: int = 0
    broken: str = None


async def run_client(report, params, cases, recorder, vault, verbose, log):
    """Start the client over stdio (its stderr into `log`), check its tool list against the
    cases and the out-of-scope table, then run every case in order."""
    elicitations = []

    async def elicit(context, request):
        # The user says yes: obsidian_delete_note asks before it deletes.
        elicitations.append(getattr(request, "message", ""))
        return ElicitResult(action="accept", content={"confirm": True})

    def record(passed, line, details=()):
        report.passed += passed
        report.failed += not passed
        print(("PASS  " if passed else "FAIL  ") + f"{report.client}  {line}")
        for detail in details:
            print(detail)
        sys.stdout.flush()

    try:
        with open(log, "w") as errlog:
            transport = stdio_client(params, errlog=errlog)
            async with Client(transport, elicitation_callback=elicit, read_timeout_seconds=CALL_TIMEOUT) as client:
                tools = await asyncio.wait_for(client.list_tools(), CALL_TIMEOUT)
                listed = {tool.name for tool in tools.tools}
                print(f"{report.client} {report.version}: {len(listed)} tools: {', '.join(sorted(listed))}")
                called = {case.tool for case in cases}
                whole_tools_out = {tool for tool, part, _ in report.out_of_scope if not part}
                for tool in sorted(listed - called - whole_tools_out):
                    record(False, f"{tool}: listed, but neither called nor out of scope")
                for tool in sorted((called | whole_tools_out) - listed):
                    record(False, f"{tool}: not in the client's tool list")
                for case in cases:
                    if case.tool in listed:
                        await run_case(client, report, case, recorder, vault, verbose, record)
                if "obsidian_delete_note" in called and not elicitations:
                    print(f"note: {report.client} deleted without asking for a confirmation")
    except Exception as err:  # the client did not start, or the session broke
        report.broken = f"{type(err).__name__}: {err}"
        traceback.print_exc()
        with open(log, errors="replace") as errlog:
            print(f"{report.client}: the last lines of its log ({log}):\n" + "".join(errlog.readlines()[-30:]))


async def run_case(client, report, case, recorder, vault, verbose, record):
    before = snapshot(vault)
    mark = recorder.mark()
    result, error = None, None
    try:
        result = await asyncio.wait_for(client.call_tool(case.tool, case.args), CALL_TIMEOUT)
    except Exception as err:  # the SDK raises for protocol errors and time-outs
        error = f"{type(err).__name__}: {err}"
    answer = "\n".join(getattr(block, "text", "") for block in (result.content if result else []))
    outcome = Outcome(
        result,
        error,
        answer,
        getattr(result, "structured_content", None),
        before,
        snapshot(vault),
        recorder.since(mark),
    )
    try:
        problems = case.check(outcome) + stored_as_sent(outcome)
    except Exception:
        problems = ["the check itself failed on this answer:\n" + traceback.format_exc(limit=3)]
    details = []
    if problems or verbose:
        details.append(f"    arguments: {json.dumps(case.args, ensure_ascii=False)}")
        details += ["    " + problem.replace("\n", "\n    ") for problem in problems]
        if answer and not any("the tool reported" in problem for problem in problems):
            details.append(f"    answer: {clip(answer, 600)}")
        details += [show_exchange(exchange) for exchange in outcome.exchanges]
    scope = " (out of scope: must be refused clearly)" if case.out_of_scope else ""
    record(not problems, f"{case.tool}: {case.title}{scope}", details)


def print_out_of_scope(reports):
    print()
    print("Out of scope:")
    for report in reports:
        for tool, part, reason in report.out_of_scope:
            what = f"{tool} ({part})" if part else tool
            print(f"  {report.client} {report.version}  {what}: {reason}")


async def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", required=True, help="mdvault's base URL, http://127.0.0.1:PORT")
    parser.add_argument("--key", required=True)
    parser.add_argument("--vault", required=True, help="the folder mdvault serves")
    parser.add_argument("--work", required=True, help="a scratch folder: the clients' working folders and logs")
    parser.add_argument("--mcp-obsidian", required=True, help="the mcp-obsidian program")
    parser.add_argument("--node", required=True, help="node 24 or later")
    parser.add_argument("--obsidian-mcp-server", required=True, help="obsidian-mcp-server's dist/index.js")
    parser.add_argument("--only", choices=["mcp-obsidian", "obsidian-mcp-server"], default=None)
    parser.add_argument("--verbose", action="store_true", help="show the requests of passing calls too")
    args = parser.parse_args(argv)

    recorder = Recorder(args.base)
    proxy = urllib.parse.urlsplit(recorder.url)
    today = time.strftime("%Y-%m-%d")  # the server's local date: it runs on this machine
    reports = []

    if args.only in (None, "mcp-obsidian"):
        cwd = os.path.join(args.work, "mcp-obsidian")
        os.makedirs(cwd, exist_ok=True)  # empty: the client loads a .env from its working folder
        report = Report("mcp-obsidian", "0.2.3", MCP_OBSIDIAN_OUT_OF_SCOPE)
        # obsidian.py reads these at import; it defaults to https on 27124 and never verifies.
        params = StdioServerParameters(
            command=args.mcp_obsidian,
            cwd=cwd,
            env={
                "OBSIDIAN_API_KEY": args.key,
                "OBSIDIAN_PROTOCOL": "http",
                "OBSIDIAN_HOST": proxy.hostname,
                "OBSIDIAN_PORT": str(proxy.port),
            },
        )
        await run_client(
            report,
            params,
            mcp_obsidian_cases(args.vault, today),
            recorder,
            args.vault,
            args.verbose,
            os.path.join(cwd, "stderr.log"),
        )
        reports.append(report)

    if args.only in (None, "obsidian-mcp-server"):
        cwd = os.path.join(args.work, "obsidian-mcp-server")
        os.makedirs(cwd, exist_ok=True)
        report = Report("obsidian-mcp-server", "3.2.9", OBSIDIAN_MCP_SERVER_OUT_OF_SCOPE)
        # dist/config/server-config.js reads the OBSIDIAN_* variables; the framework the MCP_* ones.
        params = StdioServerParameters(
            command=args.node,
            args=[args.obsidian_mcp_server],
            cwd=cwd,
            env={
                "OBSIDIAN_API_KEY": args.key,
                "OBSIDIAN_BASE_URL": recorder.url,
                "OBSIDIAN_VERIFY_SSL": "false",
                "MCP_TRANSPORT_TYPE": "stdio",
                "MCP_LOG_LEVEL": "warning",
                "LOGS_DIR": os.path.join(cwd, "logs"),
                # The command-palette pair is off by default; turned on, it is listed and called.
                "OBSIDIAN_ENABLE_COMMANDS": "true",
                # No Omnisearch: its start-up probe goes to a path mdvault does not serve.
                "OBSIDIAN_OMNISEARCH_URL": recorder.url + "/no-omnisearch",
            },
        )
        await run_client(
            report,
            params,
            obsidian_mcp_server_cases(args.vault),
            recorder,
            args.vault,
            args.verbose,
            os.path.join(cwd, "stderr.log"),
        )
        reports.append(report)

    print_out_of_scope(reports)
    for report in reports:
        if report.broken:
            print(f"{report.client}: could not run: {report.broken}")
    print(f"lra-clients: {sum(r.passed for r in reports)} passed, {sum(r.failed for r in reports)} failed")
    if any(report.broken for report in reports):
        return 2
    return 1 if any(report.failed for report in reports) else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
