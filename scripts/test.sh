#!/usr/bin/env bash
# The whole test suite: unit tests, integration tests (the real binary and the real local model
# against fixture vaults and copies of the evaluation vaults) and doc tests. This is the
# README's test command and the one .ci/run calls. It installs the default model first (a no-op
# when it is already there).
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/fetch-model.sh
cargo test --all-targets --locked
