#!/usr/bin/env bash
# The whole test suite: unit tests, integration tests (the real binary against fixture vaults
# and copies of the evaluation vaults) and doc tests. This is the README's test command and
# the one .ci/run calls.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo test --all-targets --locked
