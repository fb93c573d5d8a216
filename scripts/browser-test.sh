#!/usr/bin/env bash
# The web page's browser test: serves a copy of the fixture vault (plus a hostile note) with
# the given binary, then drives the page at /ui/ with a real headless Chromium through
# Selenium (tests/browser_test.py): sign-in, search as you type, a hit, a wikilink, a section
# edit, a conflict from a second client, the reading view (an image, an embed, a folded
# callout, a heading link that lands), a PDF, every health page (this session marked among
# the signed-in ones), the hostile note, sign-out (and the old cookie, put back, refused).
# Screenshots of the main pages at desktop and phone widths land in target/screenshots/.
#
#   scripts/browser-test.sh target/debug/mdvault
#
# Needs Debian's chromium and chromium-driver (scripts/system-deps.sh installs them) and the
# test venv (scripts/pyenv.sh, which pins selenium). Nothing is downloaded at run time:
# Selenium is pointed at /usr/bin/chromedriver and /usr/bin/chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${1:-target/debug/mdvault}"
venv="${MDVAULT_PYENV:-$(./scripts/pyenv.sh | tail -n 1)}"
shots="${MDVAULT_SCREENSHOTS:-target/screenshots}"

tmp="$(mktemp -d)"
server=""
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

cp -r tests/fixtures/vault "$tmp/vault"
# The reading view's notes of real Obsidian syntax (an image, embeds, callouts, heading links).
mkdir -p "$tmp/vault/Obsidian"
cp tests/fixtures/obsidian/render-* "$tmp/vault/Obsidian/"
# Every way a note could try to run script: each must arrive inert.
cat > "$tmp/vault/Inbox/XSS.md" <<'MD'
# Hostile note

Harmless text before the traps.

<script>window.__xss = 1</script>

<img src="x" onerror="window.__xss = 3">

[a markdown link](javascript:window.__xss=2) and <a href="javascript:window.__xss=4">an html link</a>

<p onclick="window.__xss = 5">click me</p>

<iframe src="javascript:window.__xss=6"></iframe>

[[javascript:window.__xss=7]]
MD

key="browser-test-key-$RANDOM$RANDOM"
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
base="http://127.0.0.1:$port"
# The model scripts/fetch-model.sh installed, used in place (the data directory is fresh).
model="${MDVAULT_EMBEDDING__MODEL_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/mdvault/models/all-MiniLM-L6-v2}"
MDVAULT_API_KEY="$key" MDVAULT_LOG=warn MDVAULT_EMBEDDING__MODEL_DIR="$model" \
  "$bin" serve --listen "127.0.0.1:$port" --data-dir "$tmp/data" --vault "$tmp/vault" \
  > "$tmp/server.log" 2>&1 &
server=$!
for _ in $(seq 1 300); do
  if curl -fsS -H "Authorization: Bearer $key" "$base/readyz" >/dev/null 2>&1; then break; fi
  kill -0 "$server" 2>/dev/null || { cat "$tmp/server.log" >&2; echo "browser test: the server exited" >&2; exit 1; }
  sleep 1
done
curl -fsS -H "Authorization: Bearer $key" "$base/readyz" >/dev/null \
  || { cat "$tmp/server.log" >&2; echo "browser test: the index was not ready within 5 minutes" >&2; exit 1; }

rm -rf "$shots"
mkdir -p "$shots"
if ! "$venv/bin/python" tests/browser_test.py "$base" "$key" "$tmp/vault" "$shots"; then
  echo "--- server log" >&2
  tail -n 40 "$tmp/server.log" >&2
  exit 1
fi
rm -rf "$shots/.profile"
echo "browser test: screenshots in $shots"
