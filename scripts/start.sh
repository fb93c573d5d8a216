#!/usr/bin/env bash
# Sets everything up and runs the main job: builds the release binary, installs the default
# embedding model (offline afterwards), and indexes a vault: $VAULT, or the bundled fixture vault.
# Re-running it is fast: nothing is downloaded again and unchanged notes are not re-indexed.
set -euo pipefail
cd "$(dirname "$0")/.."

vault="${VAULT:-tests/fixtures/vault}"
data_dir="${MDVAULT_DATA_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/mdvault}"

./scripts/fetch-model.sh "$data_dir"
cargo build --release --locked
bin="$PWD/target/release/mdvault"
export MDVAULT_DATA_DIR="$data_dir"
"$bin" index --vault "$vault"
cat <<MSG

Indexed $vault. Try:
  $bin search "boiler pressure" --vault "$vault"
  $bin search NB-7726041 --vault "$vault" --explain
  $bin map "Home/Boiler.md" --vault "$vault"
MSG
