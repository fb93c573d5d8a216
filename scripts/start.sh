#!/usr/bin/env bash
# Sets everything up and runs the main job: builds the binary, installs the default embedding
# model, writes an example config and an API key on first run, then serves $VAULT (or a copy
# of the bundled example vault, examples/vault) over REST and MCP on $MDVAULT_LISTEN (default
# 127.0.0.1:8080), indexing it in the background and following its changes.
# Re-running it is fast: nothing is downloaded again and unchanged notes are not re-indexed.
#
# MDVAULT_PROFILE=debug builds and runs the debug binary instead of the release one (the
# first-run test uses it to reuse the test build); anything else means release.
set -euo pipefail
cd "$(dirname "$0")/.."

data_dir="${MDVAULT_DATA_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/mdvault}"
config_dir="${XDG_CONFIG_HOME:-$HOME/.config}/mdvault"
config_file="${MDVAULT_CONFIG:-$config_dir/config.yaml}"
if [ -n "${VAULT:-}" ]; then
  vault="$VAULT"
  # Your own vault gets no generated index.md unless your config asks for one.
  index_md_note="  index.md  not generated: nothing is written into your vault unasked; to keep one at
            its root, set  index: {index_md: true}  in $config_file"
else
  # The server writes (whatever a client edits), so it serves a copy of the bundled vault,
  # made once beside the data directory, never the repository's own.
  vault="${XDG_DATA_HOME:-$HOME/.local/share}/mdvault-example-vault"
  if [ ! -d "$vault" ]; then
    mkdir -p "$vault"
    cp -R examples/vault/. "$vault/"
    echo "copied the example vault to $vault"
  fi
  # The tour shows the generated index.md, so the example copy turns it on for itself (for this
  # server only: the config file written below leaves it off for your own vaults).
  export MDVAULT_INDEX__INDEX_MD="${MDVAULT_INDEX__INDEX_MD:-true}"
  index_md_note="  index.md  kept at the example vault's root; for your own vault it is off unless
            $config_file sets  index: {index_md: true}"
fi

./scripts/fetch-model.sh "$data_dir"
# The PDF/OCR tools are tried once: when they could not be installed, later runs stay quiet
# and offline (no apt-get, no sudo prompt); delete the marker to try again.
deps_marker="$data_dir/.system-deps-tried"
if [ ! -e "$deps_marker" ]; then
  ./scripts/system-deps.sh --optional
  mkdir -p "$data_dir" && chmod 700 "$data_dir" && touch "$deps_marker"
fi
if [ "${MDVAULT_PROFILE:-release}" = debug ]; then
  cargo build --locked
  bin="$PWD/target/debug/mdvault"
else
  cargo build --release --locked
  bin="$PWD/target/release/mdvault"
fi
export MDVAULT_DATA_DIR="$data_dir"

# An example config the user can edit; never overwrite one that is there.
if [ -z "${MDVAULT_CONFIG:-}" ] && [ ! -e "$config_dir/config.yaml" ]; then
  mkdir -p "$config_dir"
  cp config.example.yaml "$config_dir/config.yaml"
  echo "wrote the example configuration to $config_dir/config.yaml"
fi

# The API key lives in the environment only; on first run make one and keep it (0600) in the
# data directory so clients can be configured once.
key_file="$data_dir/api-key"
if [ -z "${MDVAULT_API_KEY:-}" ]; then
  if [ ! -s "$key_file" ]; then
    mkdir -p "$data_dir" && chmod 700 "$data_dir"
    (umask 077 && python3 -c 'import secrets; print(secrets.token_hex(24))' > "$key_file")
    echo "made an API key in $key_file"
  fi
  MDVAULT_API_KEY="$(cat "$key_file")"
  export MDVAULT_API_KEY
fi

listen="${MDVAULT_LISTEN:-127.0.0.1:8080}"
cat <<MSG

Serving $vault
  UI    http://$listen/ui/      (open it in a browser; sign in with the key below)
  REST  http://$listen/vault/   search: http://$listen/search?q=...
  MCP   http://$listen/mcp      (header  Authorization: Bearer <key>)
  key   $key_file   (export MDVAULT_API_KEY=\$(cat $key_file))
$index_md_note

The command line: $bin (put it on your PATH, e.g. ln -s $bin ~/.local/bin/mdvault)

Try it from another shell:
  curl -H "Authorization: Bearer \$MDVAULT_API_KEY" "http://$listen/search?q=boiler+pressure"

Connect an AI client (the server must be running):
  Claude Code:     claude mcp add --transport http mdvault http://$listen/mcp \\
                     --header "Authorization: Bearer \$(cat $key_file)"
  Claude Desktop:  Settings > Developer > Edit Config, then under "mcpServers":
                     "mdvault": {"command": "npx", "args": ["-y", "mcp-remote",
                       "http://$listen/mcp", "--header", "Authorization: Bearer <key>"]}
  Any MCP client:  streamable HTTP at http://$listen/mcp with that bearer header, or
                   stdio: $bin mcp --vault $vault   (when no server is running on this data)
Ctrl-C stops the server; run this script again to start it (nothing is downloaded or
re-embedded twice).

MSG
exec "$bin" serve --vault "$vault" --listen "$listen"
