"""The minimised findings of the pattern-pair run (FINDINGS.md), written as
fuzz/pattern_pairs/findings/<name>.onnx.

    .venv/bin/python fuzz/pattern_pairs/make_findings.py [OUT_DIR]
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate import B  # noqa: E402


def resident_read_by_split_matmul(b):
    """y [4,8] = MatMul; z = y @ w[8,256] (split across cores by core-split on trn2); u = y @ w[8,8]
    (one core, resident reader): z's node, inside y's SBUF span, reads y from SBUF on every core."""
    x = b.inp("x", [4, 8])
    y = b.op("MatMul", [x, b.w(8, 8)], out="y")
    b.out(b.op("MatMul", [y, b.w(8, 256)], out="z"), b.op("MatMul", [y, b.w(8, 8)], out="u"))


def resident_ffn_block(b):
    """A pre-LN transformer FFN sub-block, E = 64, S = 4: h = o @ Wo + bo + x; f = GELU(LN(h) @ W1 + b1)
    (4E wide: split over 2 cores, LN as its prologue); y = f @ W2 + b2 + h. Finding 1 in a real shape."""
    S, E = 4, 64
    x = b.inp("x", [1, S, E])
    o = b.inp("o", [1, S, E])
    h = b.op("Add", [b.op("Add", [b.op("MatMul", [o, b.w(E, E)]), b.w(E)]), x], out="h")
    f = b.gelu_erf(b.op("Add", [b.op("MatMul", [b.ln(h, E), b.w(E, 4 * E)]), b.w(4 * E)]))
    b.out(b.op("Add", [b.op("Add", [b.op("MatMul", [f, b.w(4 * E, E)]), b.w(E)]), h], out="y"))


def resident_broadcast_operand(b):
    """y [1,4,8] = MatMul; z = MatMul([2,4,8]) + y (batch-broadcast epilogue operand); y also the
    A of a later MatMul (so it is kept resident in SBUF across z's node)."""
    x = b.inp("x", [1, 4, 8])
    x2 = b.inp("x2", [2, 4, 8])
    y = b.op("MatMul", [x, b.w(8, 8)], out="y")
    b.out(b.op("Add", [b.op("MatMul", [x2, b.w(8, 8)]), y], out="z"), b.op("MatMul", [y, b.w(8, 8)], out="u"))


def resident_broadcast_operand_130(b):
    """The same with 130 rows: an internal 'slice ... outside a view' refusal on one core."""
    x = b.inp("x", [1, 130, 8])
    x2 = b.inp("x2", [2, 130, 8])
    y = b.op("MatMul", [x, b.w(8, 8)], out="y")
    b.out(b.op("Add", [b.op("MatMul", [x2, b.w(8, 8)]), y], out="z"), b.op("MatMul", [y, b.w(8, 8)], out="u"))


def resident_k1_a(b):
    """y = x @ w[8,1] ([4,1]) read as A by y @ w[1,3] (K = 1): resident A 'not row-major'."""
    x = b.inp("x", [4, 8])
    y = b.op("MatMul", [x, b.w(8, 1)], out="y")
    b.out(b.op("MatMul", [y, b.w(1, 3)], out="u"))


def resident_a_batch_broadcast(b):
    """y [4,8] = MatMul; z = y @ w[2,8,8] (A broadcast over B's batch); y also the A of a later
    MatMul u (resident): z's node lies in y's span and reads y from SBUF."""
    x = b.inp("x", [4, 8])
    y = b.op("MatMul", [x, b.w(8, 8)], out="y")
    b.out(b.op("MatMul", [y, b.w(2, 8, 8)], out="z"), b.op("MatMul", [y, b.w(8, 8)], out="u"))


def gelu_sampled_lookalike(b):
    """gelu(x) + 5e-13 x^8, equal to GELU within 1e-6 on fuse_gelu's grid |x| <= 6, rewritten
    to Gelu; the inputs are scaled by 60 so that the difference shows."""
    x = b.inp("x", [2, 4])
    xs = b.op("Mul", [x, b.const(np.full([4], 60.0, np.float32))])
    ge = b.gelu_erf(xs)
    d = b.op("Mul", [b.op("Pow", [xs, b.const(np.float32(8.0))]), b.const(np.float32(5e-13))])
    b.out(b.op("Add", [ge, d], out="y"))


def clip_min_inf(b):
    """Clip(x, min=+inf): ONNX gives >= +inf (onnxruntime: FLT_MAX, max defaulting to FLT_MAX); trnsim returns x."""
    x = b.inp("x", [2, 4])
    b.out(b.op("Clip", [x, b.const(np.float32(np.inf))], out="y"))


def clip_max_neg_inf(b):
    """Clip(x, min=-1, max=-inf): every value -inf; trnsim returns max(x, -1)."""
    x = b.inp("x", [2, 4])
    b.out(b.op("Clip", [x, b.const(np.float32(-1.0)), b.const(np.float32(-np.inf))], out="y"))


def layernorm_scale1_2d(b):
    """2-D LayerNormalization with scale [1] and bias [1] (broadcast): refused at run time."""
    x = b.inp("x", [4, 8])
    b.out(b.op("LayerNormalization", [x, b.const(np.full([1], 1.5, np.float32)), b.const(np.full([1], 0.25, np.float32))],
               out="y", axis=-1))


def conv_layernorm_epilogue(b):
    """Conv -> LayerNormalization over the last axis (W): fused as a ConvGemm epilogue, which
    lower_conv cannot run ('no kernel for it at run time')."""
    x = b.inp("x", [1, 1, 2, 4])
    y = b.op("Conv", [x, b.w(2, 1, 1, 1, scale=1.0)], kernel_shape=[1, 1])
    b.out(b.op("LayerNormalization", [y, b.pos(4), b.w(4)], out="y", axis=-1))


def matmul_1d_epilogue(b):
    """[8] @ [8,5] + bias: the Add is fused into a 1-D MatMul whose lowering refuses epilogues."""
    x = b.inp("x", [8])
    b.out(b.op("Add", [b.op("MatMul", [x, b.w(8, 5)]), b.w(5)], out="y"))


FINDINGS = [resident_read_by_split_matmul, resident_ffn_block, resident_broadcast_operand, resident_broadcast_operand_130, resident_k1_a, resident_a_batch_broadcast, gelu_sampled_lookalike,
            clip_min_inf, clip_max_neg_inf, layernorm_scale1_2d, conv_layernorm_epilogue, matmul_1d_epilogue]


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent / "findings"
    out.mkdir(parents=True, exist_ok=True)
    for i, fn in enumerate(FINDINGS):
        b = B(seed=4242 + i)
        fn(b)
        name = fn.__name__.replace("_", "-")
        (out / f"{name}.onnx").write_bytes(b.model().SerializeToString())
    print(f"{len(FINDINGS)} findings in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
