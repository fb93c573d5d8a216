#!/usr/bin/env python3
"""Writes tests/fixtures/minilm_golden.json: the vectors sentence-transformers gives for a fixed
set of texts with the default model (all-MiniLM-L6-v2), which the local embedder's unit tests
(src/embed/local.rs) must reproduce.

The model is the installed folder (scripts/fetch-model.sh, run here when the default folder is
missing; MDVAULT_MODEL_DIR picks another copy), loaded offline: no model hub is contacted. The
output records the sha256 of the model's three files and the library versions that made it.

sentence-transformers and torch are large (the default torch wheel brings its CUDA libraries,
some gigabytes, even though this runs on the CPU), so they are not in the test venv that
scripts/test.sh installs. The first run makes a venv of its own, target/golden-venv
(MDVAULT_GOLDEN_VENV to move it), with the pinned versions below, and re-runs itself there;
later runs reuse it. Nothing else needs it: the committed JSON is what the tests read.

Usage: scripts/golden-vectors.py [OUT]   (default: tests/fixtures/minilm_golden.json)
"""
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Pinned so that re-running gives the same file; bump them together and re-run to refresh it.
PINS = ["torch==2.15.0", "transformers==5.25.0", "sentence-transformers==6.3.0"]

# The model's max_seq_length, as in src/embed/local.rs; one text below is longer on purpose.
MAX_SEQ_LENGTH = 256

# Significant digits kept per component: 9 is enough to give back the exact float32.
DIGITS = 9

MODEL_FILES = ("model.safetensors", "tokenizer.json", "config.json")

LONG_TEXT = (
    "The boatyard committee met on a wet Tuesday evening to settle the winter maintenance "
    "plan, and the first hour went on the slipway. Two of the timber runners have split along "
    "the grain, the winch cable shows broken strands near the drum, and the concrete apron has "
    "cracked where the tractor turns. Nobody disputed that the cable must be replaced before "
    "the first haul-out in October; the argument was about the runners. One member wanted oak, "
    "which lasts but costs three times as much and takes a month to arrive, while another "
    "argued for recycled plastic planks that a neighbouring club has used for six seasons "
    "without complaint. In the end the committee agreed to trial the plastic on one side only "
    "and to record the wear every fortnight, photographed from the same post so that the "
    "pictures can be compared. The second hour covered the clubhouse. The roof lights leak in a "
    "south-westerly, the gas heater failed its inspection, and the changing rooms need new "
    "hooks, benches and a lock that works with wet hands. A volunteer offered to price a heat "
    "pump, though several people doubted it would cope with the draughts from the main doors. "
    "The treasurer reminded everyone that the reserve fund must not fall below the cost of one "
    "full year of insurance, which rules out doing everything at once. Membership fees will "
    "rise by four pounds for adults and stay the same for juniors, and the open day moves to "
    "the second Saturday in May so that it no longer clashes with the regatta further along "
    "the coast. Finally, the safety officer asked for two more people to take the powerboat "
    "course, because the rescue boat cannot launch unless a qualified driver is on the "
    "pontoon, and last summer three sailing sessions were cancelled for that reason alone. The "
    "meeting closed at half past nine with the kettle still on."
)

# Texts written for this fixture. The first two say the same thing in other words: the tests
# also check the cosine between them. The rest each stress one part of the pipeline.
TEXTS = [
    "Renew the car insurance before it lapses at the end of March.",
    "The motor policy runs out on 31 March; arrange new cover in time.",
    "kettle",
    "",
    LONG_TEXT,
    "Crème brûlée, naïve façades and Zoë's café: ACCENTS & Ünïcödé… ½ °C → ✓",
    "明天上午九点在图书馆三楼开会，请带上去年的预算表。",
    "東京の桜は三月の終わりに満開になり、公園は花見の人で賑わいます。",
    "한국어 문장도 단어 조각으로 나뉩니다.",
    "fn parse(s: &str) -> Result<Vec<u8>, Error> { s.split(',').map(|x| x.trim().parse())"
    ".collect() } // TODO(#42): x >= 0x1F && y != None",
    "---\ntags: [garden, compost]\n---\n> [!warning] Turn the heap weekly; see "
    "[[Compost bays#Rota]] and `make lint`.",
    "  tabs\there,\tnew\nlines   and  doubled   spaces  ",
    "Ticket QX-7731-B: 1,284.50 EUR due 2026-03-31 (ref. 0044/17), call +44 20 7946 0321",
    "Bike ride 🚲 then tea 🍵 — مرحبا بالجميع",
]


def ensure_venv():
    """Re-runs this script in its own venv with the pinned libraries, making it if need be."""
    venv = Path(os.environ.get("MDVAULT_GOLDEN_VENV", ROOT / "target" / "golden-venv")).resolve()
    if Path(sys.prefix).resolve() == venv:
        return
    python = venv / "bin" / "python"
    if not python.exists():
        print(f"golden-vectors: making {venv}", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    stamp = venv / ".mdvault-pins"
    want = " ".join(PINS)
    if not stamp.exists() or stamp.read_text() != want:
        print(f"golden-vectors: installing {want} (several GB the first time)", file=sys.stderr)
        subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *PINS],
            check=True,
        )
        stamp.write_text(want)
    os.execv(str(python), [str(python), str(Path(__file__).resolve()), *sys.argv[1:]])


def model_dir():
    """MDVAULT_MODEL_DIR, else the folder scripts/fetch-model.sh installs into (fetching it)."""
    if "MDVAULT_MODEL_DIR" in os.environ:
        return Path(os.environ["MDVAULT_MODEL_DIR"])
    data = os.environ.get("MDVAULT_DATA_DIR") or os.path.join(
        os.environ.get("XDG_DATA_HOME") or os.path.expanduser("~/.local/share"), "mdvault"
    )
    subprocess.run([str(ROOT / "scripts" / "fetch-model.sh"), data], check=True)
    return Path(data) / "models" / "all-MiniLM-L6-v2"


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def rounded(x):
    return float(f"{float(x):.{DIGITS}g}")


def main():
    ensure_venv()
    # Set before the libraries are imported: they read these once.
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    import numpy as np
    import sentence_transformers
    import tokenizers
    import torch
    import transformers
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Normalize, Pooling, Transformer

    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "tests/fixtures/minilm_golden.json"
    folder = model_dir()
    for name in MODEL_FILES:
        if not (folder / name).is_file():
            sys.exit(f"golden-vectors: {folder / name} is missing; run scripts/fetch-model.sh")

    # The folder holds only the three files the Rust embedder loads, without
    # sentence-transformers' module list, so the pipeline is spelled out: the BERT encoder cut
    # at max_seq_length, mean pooling over the attention mask, then L2 normalisation, which is
    # what the published model does and what src/embed/local.rs implements.
    encoder = Transformer(str(folder), max_seq_length=MAX_SEQ_LENGTH)
    dims = encoder.get_embedding_dimension()
    model = SentenceTransformer(
        modules=[encoder, Pooling(dims, pooling_mode="mean"), Normalize()], device="cpu"
    )
    # One text at a time: the reference should not depend on how a batch is padded.
    vectors = [model.encode([t], convert_to_numpy=True)[0].astype(np.float32) for t in TEXTS]

    items = []
    for text, vector in zip(TEXTS, vectors):
        tokens = len(encoder.tokenizer(text, add_special_tokens=True)["input_ids"])
        items.append({
            "text": text,
            "tokens": min(tokens, MAX_SEQ_LENGTH),
            "tokens_before_truncation": tokens,
            "embedding": [rounded(x) for x in vector],
        })
    header = {
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "model_safetensors_sha256": sha256(folder / "model.safetensors"),
        "model_files_sha256": {name: sha256(folder / name) for name in MODEL_FILES},
        "pooling": "mean over the attention mask, then L2 normalisation",
        "max_seq_length": MAX_SEQ_LENGTH,
        "dims": dims,
        "produced_by": "scripts/golden-vectors.py, one text per call, float32 on the CPU",
        "versions": {
            "python": sys.version.split()[0],
            "sentence-transformers": sentence_transformers.__version__,
            "transformers": transformers.__version__,
            "tokenizers": tokenizers.__version__,
            "torch": torch.__version__,
            "numpy": np.__version__,
        },
        "cosine_0_1": round(float(np.dot(vectors[0], vectors[1])), 6),
    }

    # One item per line keeps the file reviewable: a changed vector is a changed line.
    lines = ["{"]
    for key, value in header.items():
        lines.append(f"  {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)},")
    lines.append('  "items": [')
    for n, item in enumerate(items):
        comma = "," if n + 1 < len(items) else ""
        lines.append(f"    {json.dumps(item, ensure_ascii=False)}{comma}")
    lines += ["  ]", "}"]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    truncated = sum(1 for it in items if it["tokens_before_truncation"] > MAX_SEQ_LENGTH)
    print(f"golden-vectors: {len(items)} texts ({truncated} truncated) written to {out}")


if __name__ == "__main__":
    main()
