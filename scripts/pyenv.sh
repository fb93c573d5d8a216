#!/usr/bin/env bash
# Makes (or reuses) the Python environment of the API tooling: the `mcp` client library, for
# driving /mcp from Python, `schemathesis`, which fuzzes the REST API against openapi.yaml
# (scripts/fuzz-api.sh), and `selenium`, which drives the web page in headless Chromium
# (scripts/browser-test.sh). All are pinned; bump a pin here and re-run to upgrade.
#
#   scripts/pyenv.sh            # prints the venv folder; "$(scripts/pyenv.sh)/bin/st" is the CLI
#   MDVAULT_PYENV=/tmp/env scripts/pyenv.sh
#
# Needs only python3 with its venv module (Debian: apt-get install python3-venv). Re-running it
# is fast: nothing is installed again when the pinned versions are already there.
set -euo pipefail
cd "$(dirname "$0")/.."

MCP_VERSION="2.3.0"
SCHEMATHESIS_VERSION="4.32.5"
# Drives Debian's chromium through /usr/bin/chromedriver in scripts/browser-test.sh (it never
# downloads a browser or driver when both paths are given).
SELENIUM_VERSION="4.50.0"

venv="${MDVAULT_PYENV:-target/pyenv}"
python="${PYTHON:-python3}"

if ! command -v "$python" >/dev/null 2>&1; then
    echo "pyenv.sh: $python was not found; install Python 3.11 or newer (Debian: apt-get install python3 python3-venv)" >&2
    exit 1
fi

# schemathesis needs Python 3.11 or newer (Debian 12 ships 3.11).
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    echo "pyenv.sh: $("$python" --version 2>&1) is too old; schemathesis $SCHEMATHESIS_VERSION needs Python 3.11 or newer" >&2
    exit 1
fi

# A venv made without pip (Debian's python3 without python3-venv leaves one behind) is
# unusable; start again in that case. Only a folder that is a venv is ever removed.
if [[ -f "$venv/pyvenv.cfg" && ! -x "$venv/bin/pip" ]]; then
    rm -rf "$venv"
fi
if [[ ! -x "$venv/bin/python" ]]; then
    mkdir -p "$(dirname "$venv")"
    if ! "$python" -m venv "$venv" >/dev/null 2>"$venv.err"; then
        cat "$venv.err" >&2 || true
        rm -f "$venv.err"
        [[ -f "$venv/pyvenv.cfg" ]] && rm -rf "$venv"
        echo "pyenv.sh: '$python -m venv' failed; the venv module (with ensurepip) is missing." >&2
        echo "pyenv.sh: on Debian or Ubuntu install it with: apt-get install python3-venv" >&2
        exit 1
    fi
    rm -f "$venv.err"
fi

want="mcp==$MCP_VERSION schemathesis==$SCHEMATHESIS_VERSION selenium==$SELENIUM_VERSION"
stamp="$venv/.mdvault-pins"
if [[ ! -f "$stamp" ]] || [[ "$(cat "$stamp")" != "$want" ]]; then
    # shellcheck disable=SC2086
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check $want >&2
    echo "$want" >"$stamp"
fi

(cd "$venv" && pwd)
