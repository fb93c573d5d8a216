"""Embeds the texts that `mdvault bench --compare-python` hands over with sentence-transformers,
on the same model folder and thread count, and prints {"chunks_per_s": N} as JSON.

Usage: python3 scripts/bench_st.py MODEL_DIR TEXTS.json THREADS
"""
import json
import sys
import time

model_dir, texts_file, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
try:
    import torch
    from sentence_transformers import SentenceTransformer
except ImportError as exc:  # reported by the caller as "skipped"
    sys.exit(f"sentence-transformers is not installed ({exc}); pip install sentence-transformers")

torch.set_num_threads(threads)
with open(texts_file, encoding="utf-8") as f:
    texts = json.load(f)
model = SentenceTransformer(model_dir, device="cpu")
model.max_seq_length = 256
model.encode(texts[:8], batch_size=8)
start = time.perf_counter()
model.encode(texts, batch_size=8, normalize_embeddings=True)
elapsed = time.perf_counter() - start
print(json.dumps({"chunks_per_s": len(texts) / elapsed}))
