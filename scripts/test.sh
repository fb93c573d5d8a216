#!/usr/bin/env bash
# The whole test suite: unit tests, integration tests (the real binary, its HTTP server and both
# MCP transports, the real local model, fixture vaults, and copies of the evaluation vaults when
# MDVAULT_EVAL_VAULTS or MDVAULT_REQUIRE_EVAL_DATA=1 asks for them, else skipped with a note),
# the official Python MCP SDK driving the server, the crash test (a server killed
# mid-write and mid-move, 30 times), the schemathesis fuzzer against openapi.yaml, the
# first-run test (the README's first command in a fresh HOME), the web page driven in headless
# Chromium (scripts/browser-test.sh), the Local REST API plugin's
# integration suite (scripts/lra-suite.sh) and two real clients of that API, mcp-obsidian and
# obsidian-mcp-server, driven over MCP (scripts/lra-clients.sh), the official MCP conformance
# suite against the MCP endpoint (scripts/mcp-conformance.sh) and the MCP Inspector's
# --strict schema lint (scripts/inspector-strict.sh) and the official TypeScript MCP SDK over
# both transports (scripts/mcp-ts-sdk.sh). This is
# the README's test command and the one .ci/run calls. It installs the
# default model, the PDF/OCR system tools and the Python test tools first (no-ops when they are
# already there).
#
# `scripts/test.sh --fast` is the inner loop to run while working: formatting, clippy, the
# library's unit tests, and the tidy and docs-link checks; nothing installed, no server started.
# The full run above stays the README's test command and what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ "${1:-}" == --fast ]]; then
    cargo fmt --all --check
    cargo clippy --all-targets --locked -- -D warnings
    cargo test --lib --locked
    cargo test --test integration --locked -- tidy:: docs_links::
    exit 0
fi

# Style first: a formatting slip or a lint fails in seconds, not after the whole suite.
cargo fmt --all --check
cargo clippy --all-targets --locked -- -D warnings

./scripts/fetch-model.sh
./scripts/system-deps.sh
MDVAULT_PYENV="$(./scripts/pyenv.sh | tail -n 1)"
export MDVAULT_PYENV
cargo test --all-targets --locked
./scripts/crash-test.sh target/debug/mdvault
./scripts/fuzz-api.sh target/debug/mdvault
./scripts/first-run-test.sh
# The web page at /ui/ in a real headless Chromium (screenshots in target/screenshots/).
./scripts/browser-test.sh target/debug/mdvault
# The Local REST API plugin's own suite against mdvault serve (skipped with a note when the
# suite is not beside the clone; see the script).
./scripts/lra-suite.sh target/debug/mdvault
# Two real Local REST API clients (installed pinned under target/lra-clients/), every tool that
# maps to a route mdvault serves checked by its answer and on disk; see the script.
./scripts/lra-clients.sh target/debug/mdvault
# The official MCP conformance suite (installed pinned under target/mcp-conformance/) against
# the MCP endpoint; the scenarios that need the suite's own fixtures are skipped, see the script.
./scripts/mcp-conformance.sh target/debug/mdvault
# The MCP Inspector's --strict schema lint (installed pinned under target/inspector/): every
# tool's input and output schema portable, no finding at all; see the script.
./scripts/inspector-strict.sh target/debug/mdvault
# The official TypeScript MCP SDK (installed pinned under target/mcp-ts-sdk/) over streamable
# HTTP and stdio: every tool's structuredContent, resources, completions, prompts; see the script.
./scripts/mcp-ts-sdk.sh target/debug/mdvault
