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
# The suite runs twice, each time against a fresh copy of the vault:
# - strict (`server.strict_patch_version: true`): every test of every file run must pass;
# - default: every test must pass except the ones listed in REFUSALS below, which assert the
#   plugin 5.1's 40083/40084 refusals of Target headers sent without Markdown-Patch-Version.
#   mdvault reads those as the 1.x format by default (the predecessor's scripts and the
#   plugin's most-used clients send them), so these tests must fail there, and only these.
# A file with no tests fails too. Exit status 0 when all holds, 1 otherwise, 2 when the suite
# cannot run. LRA_MODES="strict" (or "default") runs one mode; LRA_VERBOSE=1 names each
# failing test; LRA_KEEP=1 keeps the scratch folder (server logs, vaults, jest output).
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

# The tests that assert a refusal of version-less Target headers, by their titles (vault,
# vault, patch2, patch2raw).
REFUSALS=(
    "without Markdown-Patch-Version: 1 the header is rejected (40083)"
    "PUT with a Target-Type header and no version is rejected (40083)"
    "a 1.x-style request without the opt-in header fails loudly (400)"
    "header targeting without an explicit version returns 400 (40084)"
)

# The suite, beside a link to the installed packages.
mkdir -p "$work/suite"
cp -R "$suite/." "$work/suite/"
ln -s "$cache/node_modules" "$work/suite/node_modules"
port="$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
key="lra-$(node -e 'console.log(require("crypto").randomBytes(16).toString("hex"))')"
base="http://127.0.0.1:$port"

# Starts a server over a fresh copy of the fixture vault, for one mode, and waits until its
# first index build is done (/readyz answers 200; 503 while building).
start_server() {
    local mode="$1" dir="$work/$1"
    mkdir -p "$dir/data" "$dir/home"
    cp -R tests/fixtures/vault "$dir/vault"
    local strict=false
    [[ "$mode" == strict ]] && strict=true
    printf 'vault:\n  timestamp_key: ""\nserver:\n  strict_patch_version: %s\n' "$strict" >"$dir/config.yaml"
    echo "lra-suite.sh: serving a copy of tests/fixtures/vault at $base ($mode)" >&2
    HOME="$dir/home" \
        MDVAULT_CONFIG="$dir/config.yaml" \
        MDVAULT_API_KEY="$key" \
        MDVAULT_EMBEDDING__MODEL_DIR="$model_dir" \
        MDVAULT_LOG="${MDVAULT_LOG:-warn}" \
        "$bin" serve --listen "127.0.0.1:$port" --data-dir "$dir/data" --vault "fixture=$dir/vault" \
        </dev/null >"$dir/server.log" 2>&1 &
    server_pid=$!
    ./scripts/wait-ready.sh lra-suite.sh "$base" "$key" "$server_pid" "$dir/server.log"
}

stop_server() {
    local mode="$1"
    if ! kill -0 "$server_pid" 2>/dev/null; then
        echo "lra-suite.sh: the server died during the $mode run; its log:" >&2
        tail -50 "$work/$mode/server.log" >&2
        failed=1
        server_pid=""
        return
    fi
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
}

# One file at a time, in order (they share the fixture path), each with its own counts. In the
# default mode a test named in REFUSALS must fail and is not counted against the file.
failed=0
total_pass=0
total_tests=0
run_mode() {
    local mode="$1" f out pass total
    start_server "$mode"
    for f in "${files[@]}"; do
        out="$work/$mode/$f.json"
        (cd "$work/suite" && OBSIDIAN_HOST="$base" OBSIDIAN_API_KEY="$key" \
            node_modules/.bin/jest --config jest.integration.config.js --runInBand --silent \
            --json --outputFile="$out" "src/integration/$f.test.ts" >"$work/$mode/$f.log" 2>&1) || true
        if [[ ! -f "$out" ]]; then
            echo "$mode $f: did not run (see $work/$mode/$f.log)"
            failed=1
            continue
        fi
        # Prints: passed, total, then one line per unexpected outcome.
        local verdict
        verdict="$(node -e '
            const r = require(process.argv[1]);
            const mode = process.argv[2];
            const refusals = process.argv.slice(3);
            let pass = 0, total = 0; const wrong = [];
            for (const t of r.testResults) for (const a of t.assertionResults) {
                const listed = refusals.includes(a.title);
                if (mode === "default" && listed) {
                    if (a.status === "passed") wrong.push("PASSED but should be served, not refused: " + a.fullName);
                    continue;
                }
                total++;
                if (a.status === "passed") pass++; else wrong.push("FAIL " + a.fullName);
            }
            console.log(pass + " " + total);
            for (const w of wrong) console.log(w);' "$out" "$mode" "${REFUSALS[@]}")"
        read -r pass total <<<"$(head -n 1 <<<"$verdict")"
        total_pass=$((total_pass + pass))
        total_tests=$((total_tests + total))
        echo "$mode $f: $pass/$total passed"
        local wrong
        wrong="$(tail -n +2 <<<"$verdict")"
        if [[ "$pass" != "$total" || "$total" == 0 || -n "$wrong" ]]; then
            failed=1
            if [[ "${LRA_VERBOSE:-0}" == 1 || -n "$wrong" && "$pass" == "$total" ]]; then
                sed 's/^/  /' <<<"$wrong"
            fi
        fi
    done
    stop_server "$mode"
}

for mode in ${LRA_MODES:-strict default}; do
    run_mode "$mode"
done
echo "lra-suite: $total_pass/$total_tests passed"
exit "$failed"
