#!/usr/bin/env bash
# Runs the Obsidian Local REST API plugin's own black-box integration suite (release 5.1.0,
# jest) against `mdvault serve`, and prints pass/fail counts per suite file.
#
#   scripts/lra-suite.sh [BINARY] [FILE...]
#   scripts/lra-suite.sh target/debug/mdvault vault search
#
# The suite is not ours to commit (see its SOURCE and LICENSE): it is copied from
# $MDVAULT_LRA_SUITE, else ../shared/eval/lra-suite beside the clone, into target/lra-suite/.
# When it is absent the script says so and exits 0 (SKIPPED), unless MDVAULT_REQUIRE_EVAL_DATA=1
# requires it, as for the evaluation vaults (docs/testing.md).
#
# The npm packages (pinned below) are installed once into target/lra-suite/node_modules and
# reused while the pins are unchanged. The server gets a copy of tests/fixtures/vault, a scratch
# data directory and a config with `vault.timestamp_key: ""`, so a note written is read back
# byte for byte, as the suite expects of the plugin.
#
# Files run by default: vault patch patch2 patch2raw search tags security meta (active and
# commands need the Obsidian app; mcp tests the plugin's own MCP tool names).
#
# Every test of every file run must pass (a file with no tests fails too). Exit status 0 when
# they all do, 1 otherwise, 2 when the suite cannot run. LRA_VERBOSE=1 names each failing test;
# LRA_KEEP=1 keeps the scratch folder (server log, vault, jest output).
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"

bin="target/debug/mdvault"
if [[ $# -gt 0 ]]; then
    bin="$1"
    shift
fi
files=("$@")
[[ ${#files[@]} -eq 0 ]] && files=(vault patch patch2 patch2raw search tags security meta)
if [[ ! -x "$bin" ]]; then
    echo "lra-suite.sh: no binary at $bin; build it first (cargo build)" >&2
    exit 2
fi
bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"

suite="${MDVAULT_LRA_SUITE:-$repo/../shared/eval/lra-suite}"
if [[ ! -d "$suite/src/integration" ]]; then
    if [[ "${MDVAULT_REQUIRE_EVAL_DATA:-0}" == 1 ]]; then
        echo "lra-suite.sh: the Local REST API suite is required but not at $suite" >&2
        exit 2
    fi
    echo "SKIPPED lra-suite: no Local REST API suite at $suite (set MDVAULT_LRA_SUITE)" >&2
    exit 0
fi
if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
    echo "lra-suite.sh: node and npm are needed to run the suite (node 20 or later)" >&2
    exit 2
fi

data_home="${MDVAULT_DATA_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/mdvault}"
model_dir="${MDVAULT_MODEL_DIR:-$data_home/models/all-MiniLM-L6-v2}"
if [[ ! -f "$model_dir/model.safetensors" ]]; then
    echo "lra-suite.sh: no embedding model in $model_dir; run scripts/fetch-model.sh" >&2
    exit 2
fi

# The packages the suite's SOURCE names, pinned so that a re-run tests the same thing.
cache="$repo/${CARGO_TARGET_DIR:-target}/lra-suite"
[[ "${CARGO_TARGET_DIR:-}" == /* ]] && cache="$CARGO_TARGET_DIR/lra-suite"
mkdir -p "$cache"
manifest='{"private": true, "devDependencies": {"jest": "29.7.0", "ts-jest": "29.4.15",
 "typescript": "5.9.3", "@types/jest": "29.5.14", "@types/node": "20.19.0", "tslib": "2.8.1"}}'
if [[ ! -f "$cache/package.json" || "$(cat "$cache/package.json")" != "$manifest" \
    || ! -x "$cache/node_modules/.bin/jest" ]]; then
    echo "lra-suite.sh: installing the suite's npm packages into $cache" >&2
    printf '%s' "$manifest" >"$cache/package.json"
    (cd "$cache" && npm install --no-audit --no-fund --loglevel=error >/dev/null)
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/mdvault-lra.XXXXXX")"
server_pid=""
cleanup() {
    if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    if [[ "${LRA_KEEP:-0}" == 1 ]]; then
        echo "lra-suite.sh: kept $work" >&2
    else
        rm -rf "$work"
    fi
}
trap cleanup EXIT

# The suite, beside a link to the installed packages.
mkdir -p "$work/suite"
cp -R "$suite/." "$work/suite/"
ln -s "$cache/node_modules" "$work/suite/node_modules"
cp -R tests/fixtures/vault "$work/vault"
mkdir -p "$work/data" "$work/home"
printf 'vault:\n  timestamp_key: ""\n' >"$work/config.yaml"
port="$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
key="lra-$(node -e 'console.log(require("crypto").randomBytes(16).toString("hex"))')"
base="http://127.0.0.1:$port"

echo "lra-suite.sh: serving a copy of tests/fixtures/vault at $base" >&2
HOME="$work/home" \
    MDVAULT_CONFIG="$work/config.yaml" \
    MDVAULT_API_KEY="$key" \
    MDVAULT_EMBEDDING__MODEL_DIR="$model_dir" \
    MDVAULT_LOG="${MDVAULT_LOG:-warn}" \
    "$bin" serve --listen "127.0.0.1:$port" --data-dir "$work/data" --vault "fixture=$work/vault" \
    </dev/null >"$work/server.log" 2>&1 &
server_pid=$!

# Wait for the first index build: /readyz answers 200 (503 while building).
ready=""
for _ in $(seq 1 600); do
    kill -0 "$server_pid" 2>/dev/null || break
    code="$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $key" "$base/readyz" || true)"
    if [[ "$code" == 200 ]]; then ready=1; break; fi
    sleep 0.5
done
if [[ -z "$ready" ]]; then
    echo "lra-suite.sh: the server was not ready; its log:" >&2
    tail -50 "$work/server.log" >&2
    exit 2
fi

# One file at a time, in order (they share the fixture path), each with its own counts.
failed=0
total_pass=0
total_tests=0
for f in "${files[@]}"; do
    out="$work/$f.json"
    (cd "$work/suite" && OBSIDIAN_HOST="$base" OBSIDIAN_API_KEY="$key" \
        node_modules/.bin/jest --config jest.integration.config.js --runInBand --silent \
        --json --outputFile="$out" "src/integration/$f.test.ts" >"$work/$f.log" 2>&1) || true
    if [[ ! -f "$out" ]]; then
        echo "$f: did not run (see $work/$f.log)"
        failed=1
        continue
    fi
    read -r pass total < <(node -e '
        const r = require(process.argv[1]);
        console.log(r.numPassedTests, r.numTotalTests);' "$out")
    total_pass=$((total_pass + pass))
    total_tests=$((total_tests + total))
    echo "$f: $pass/$total passed"
    if [[ "$pass" != "$total" || "$total" == 0 ]]; then
        failed=1
        if [[ "${LRA_VERBOSE:-0}" == 1 ]]; then
            node -e '
                const r = require(process.argv[1]);
                for (const t of r.testResults) for (const a of t.assertionResults)
                    if (a.status !== "passed") console.log("  FAIL " + a.fullName);' "$out"
        fi
    fi
done
echo "lra-suite: $total_pass/$total_tests passed"
if ! kill -0 "$server_pid" 2>/dev/null; then
    echo "lra-suite.sh: the server died during the run; its log:" >&2
    tail -50 "$work/server.log" >&2
    failed=1
fi
exit "$failed"
