#!/usr/bin/env bash
# The web page's browser test: serves a copy of the fixture vault (plus a hostile note) with
# the given binary, then drives the page at /ui/ with a real headless Chromium through
# Selenium (tests/browser_test.py): sign-in, search as you type, a hit, a wikilink, a section
# edit, the conflict cases checked on disk (another section merged, keep both, keep mine after
# its confirmation, take theirs), keyboard-only walks (arrows through the results, Enter,
# Edit, Ctrl+S, Esc), hits landing at their passage with the words marked, the reading view
# (an image, an embed, a folded callout, a heading link that lands), a PDF, every health page
# (this session marked among the signed-in ones), the OAuth consent page (an application
# allowed one folder, read only) and the clients page (that client revoked), the hostile note,
# sign-out (and the old cookie, put back, refused).
# Screenshots of the main pages at desktop and phone widths land in target/screenshots/.
#
#   scripts/browser-test.sh target/debug/mdvault
#
# Every page state is checked by axe-core in light and dark (any violation fails), and the
# note's text must start above the fold at phone size.
#
# Needs Debian's chromium and chromium-driver (scripts/system-deps.sh installs them) and the
# test venv (scripts/pyenv.sh, which pins selenium). Selenium is pointed at
# /usr/bin/chromedriver and /usr/bin/chromium. axe-core (pinned below) is installed once with
# npm into target/axe-core/ and reused while the pin is unchanged; its axe.min.js is injected
# into the page through WebDriver, so node is not needed to run it.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${1:-target/debug/mdvault}"
venv="${MDVAULT_PYENV:-$(./scripts/pyenv.sh | tail -n 1)}"
shots="${MDVAULT_SCREENSHOTS:-target/screenshots}"

AXE_MANIFEST='{"private": true, "dependencies": {"axe-core": "4.14.1"}}'
axe_dir="${CARGO_TARGET_DIR:-target}/axe-core"
axe_js="$axe_dir/node_modules/axe-core/axe.min.js"
if [[ ! -f "$axe_dir/package.json" || "$(cat "$axe_dir/package.json")" != "$AXE_MANIFEST" || ! -f "$axe_js" ]]; then
  command -v npm >/dev/null || { echo "browser test: npm is needed to install axe-core" >&2; exit 2; }
  echo "browser test: installing axe-core into $axe_dir" >&2
  mkdir -p "$axe_dir"
  printf '%s' "$AXE_MANIFEST" >"$axe_dir/package.json"
  rm -f "$axe_dir/package-lock.json"
  if ! (cd "$axe_dir" && npm install --no-audit --no-fund --loglevel=error >/dev/null); then
    rm -f "$axe_dir/package.json"  # so that the next run tries again
    echo "browser test: could not install axe-core" >&2
    exit 2
  fi
fi

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
# A clip a note embeds, for the player's byte ranges: two seconds of a 440 Hz tone, 8 kHz mono.
python3 - "$tmp/vault/Obsidian/render-chime.wav" <<'PY'
import math, struct, sys, wave
with wave.open(sys.argv[1], "wb") as w:
    w.setnchannels(1)
    w.setsampwidth(2)
    w.setframerate(8000)
    tone = (int(8000 * math.sin(2 * math.pi * 440 * i / 8000)) for i in range(16000))
    w.writeframes(b"".join(struct.pack("<h", s) for s in tone))
PY
printf '# A clip\n\nThe chime, two seconds of it:\n\n![[render-chime.wav]]\n' \
  > "$tmp/vault/Obsidian/render-clip.md"
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
# A note of everything the reading view draws, under a long frontmatter (like Obsidian's own
# Properties.md): tasks, callouts, a wide table, math, code.
{
  echo "---"
  echo "title: Everything Rendered"
  echo "tags: [render, fixture]"
  for i in $(seq 1 40); do echo "property_$i: value number $i of a long list of properties"; done
  echo "---"
  cat <<'MD'
# Everything Rendered

The first paragraph of the text, which a phone shows before anything else.

- [ ] an open task
- [x] a finished task

> [!tip] A tip
> Callouts carry a title.

> [!warning]- A folded warning
> Hidden until opened.

| Date | Provider | Amount | Notes |
|---|---|---|---|
| 2026-01-15 | Nordlicht Energie GmbH | 120.00 | a long note in a cell that must wrap on a phone |
| 2026-02-15 | Nordlicht Energie GmbH | 118.40 | another |

Inline math $e^{i\pi} + 1 = 0$ and a block:

$$
\sum_{k=1}^{n} k = \frac{n(n+1)}{2}
$$

```sh
a-very-long-command --with --many --flags --that --would --overflow --a --phone --screen --width
```

## Section two

More text.
MD
} > "$tmp/vault/Obsidian/render-everything.md"

# A long note like Obsidian's own Properties.md: 40 headings under long frontmatter, for the
# compact outline (the text a few tab stops from the top, the outline one stop until opened).
{
  echo "---"
  for i in $(seq 1 30); do echo "key_$i: value $i"; done
  echo "---"
  echo "# Many headings"
  echo
  echo "The text, with [a link](#section-2) a keyboard reaches first."
  for i in $(seq 1 39); do printf '\n## Section %s\n\nText of section %s.\n' "$i" "$i"; done
} > "$tmp/vault/Obsidian/many-headings.md"

key="browser-test-key-$RANDOM$RANDOM"
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
base="http://127.0.0.1:$port"
# The model scripts/fetch-model.sh installed, used in place (the data directory is fresh).
model="${MDVAULT_EMBEDDING__MODEL_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/mdvault/models/all-MiniLM-L6-v2}"
MDVAULT_API_KEY="$key" MDVAULT_LOG=warn MDVAULT_EMBEDDING__MODEL_DIR="$model" \
  "$bin" serve --listen "127.0.0.1:$port" --data-dir "$tmp/data" --vault "$tmp/vault" \
  > "$tmp/server.log" 2>&1 &
server=$!
./scripts/wait-ready.sh "browser test" "$base" "$key" "$server" "$tmp/server.log"

rm -rf "$shots"
mkdir -p "$shots"
if ! MDVAULT_AXE="$axe_js" "$venv/bin/python" tests/browser_test.py "$base" "$key" "$tmp/vault" "$shots"; then
  echo "--- server log" >&2
  tail -n 40 "$tmp/server.log" >&2
  exit 1
fi
rm -rf "$shots/.profile"
echo "browser test: screenshots in $shots"
