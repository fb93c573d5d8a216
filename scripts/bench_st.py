"""Embeds the texts that `mdvault bench --compare-python` hands over with sentence-transformers,
on the same model folder and thread count, and prints {"chunks_per_s": N, "batch_size": B} as
one JSON line: the median of five passes at whichever batch size (8, 16 or 32) is fastest here,
so the comparison is against PyTorch at its best rather than at one arbitrary setting.

Then, for each line read from stdin, it makes one more pass at that batch size and prints
{"chunks_per_s": N}, until stdin closes: the caller times its own pass between two of these,
so each pair of figures is taken within seconds on the same machine (whose speed drifts).

Usage: python3 scripts/bench_st.py MODEL_DIR TEXTS.json THREADS
"""
import json
import statistics
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
best = (0.0, 0)
for batch_size in (8, 16, 32):
    rates = []
    for _ in range(5):
        start = time.perf_counter()
        model.encode(texts, batch_size=batch_size, normalize_embeddings=True)
        rates.append(len(texts) / (time.perf_counter() - start))
    best = max(best, (statistics.median(rates), batch_size))
print(json.dumps({"chunks_per_s": best[0], "batch_size": best[1]}), flush=True)
for _ in sys.stdin:
    start = time.perf_counter()
    model.encode(texts, batch_size=best[1], normalize_embeddings=True)
    print(json.dumps({"chunks_per_s": len(texts) / (time.perf_counter() - start)}), flush=True)
