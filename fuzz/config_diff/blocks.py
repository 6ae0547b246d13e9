"""Larger blocks than fuzz/pattern_pairs/generate.py's, past the 128-row tile where tiling and
core splits start: pre-LN transformer blocks (attention + GELU FFN), Llama-style blocks (RMSNorm
spelled out, SwiGLU), MLPs, plain and shared-A MatMuls and small ResNet blocks, with rows
129..300 and hidden 64..512, some with a symbolic batch axis. Deterministic; opset 17 fp32.

    .venv/bin/python fuzz/config_diff/blocks.py OUT_DIR
    .venv/bin/python fuzz/config_diff/blocks.py --random N SEED OUT_DIR   # N random-sized variants
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "pattern_pairs"))
from generate import B, _attention  # noqa: E402

F = TensorProto.FLOAT


def sym_inp(b, name, shape):
    """An input whose first axis is symbolic ("batch") when shape[0] is None."""
    dims = ["batch" if d is None else d for d in shape]
    b.inputs.append(helper.make_tensor_value_info(name, F, dims))
    return name


def transformer(b, S, E, H, sym, ffn=4, causal=True, tanh=False):
    D = E // H
    x = sym_inp(b, "x", [None if sym else 1, S, E])
    t = b.ln(x, E)
    ys = [b.op("Add", [b.op("MatMul", [t, b.w(E, E)]), b.w(E, scale=0.1)]) for _ in range(3)]
    q = b.op("Transpose", [b.op("Reshape", [ys[0], b.ints([0, 0, H, D])])], perm=[0, 2, 1, 3])
    k = b.op("Transpose", [b.op("Reshape", [ys[1], b.ints([0, 0, H, D])])], perm=[0, 2, 3, 1])
    vv = b.op("Transpose", [b.op("Reshape", [ys[2], b.ints([0, 0, H, D])])], perm=[0, 2, 1, 3])
    mask = None
    if causal:
        mk = np.zeros([S, S], np.float32)
        mk[np.triu_indices(S, 1)] = -1e9
        mask = lambda s: [s, b.const(mk)]  # noqa: E731
    o = _attention(b, q, k, vv, scale=("div", math.sqrt(D)), mask=mask, out_perm=[0, 2, 1, 3])
    o = b.op("Reshape", [o, b.ints([0, 0, E])])
    h = b.op("Add", [b.op("Add", [b.op("MatMul", [o, b.w(E, E)]), b.w(E, scale=0.1)]), x])
    t2 = b.ln(h, E)
    f = b.op("Add", [b.op("MatMul", [t2, b.w(E, ffn * E)]), b.w(ffn * E, scale=0.1)])
    f = b.gelu_tanh(f) if tanh else b.gelu_erf(f)
    f = b.op("Add", [b.op("MatMul", [f, b.w(ffn * E, E)]), b.w(E, scale=0.1)])
    b.out(b.op("Add", [f, h]))


def rmsnorm(b, x, E):
    ms = b.op("ReduceMean", [b.op("Pow", [x, b.const(np.float32(2.0))])], axes=[-1], keepdims=1)
    r = b.op("Sqrt", [b.op("Add", [ms, b.const(np.float32(1e-6))])])
    return b.op("Mul", [b.op("Div", [x, r]), b.pos(E)])


def llama(b, S, E, H, sym, ffn=3):
    D = E // H
    x = sym_inp(b, "x", [None if sym else 1, S, E])
    t = rmsnorm(b, x, E)
    ys = [b.op("MatMul", [t, b.w(E, E)]) for _ in range(3)]
    q = b.op("Transpose", [b.op("Reshape", [ys[0], b.ints([0, 0, H, D])])], perm=[0, 2, 1, 3])
    k = b.op("Transpose", [b.op("Reshape", [ys[1], b.ints([0, 0, H, D])])], perm=[0, 2, 3, 1])
    vv = b.op("Transpose", [b.op("Reshape", [ys[2], b.ints([0, 0, H, D])])], perm=[0, 2, 1, 3])
    mk = np.zeros([S, S], np.float32)
    mk[np.triu_indices(S, 1)] = -1e9
    o = _attention(b, q, k, vv, scale=("mul", 1 / math.sqrt(D)), mask=lambda s: [s, b.const(mk)], out_perm=[0, 2, 1, 3])
    o = b.op("Reshape", [o, b.ints([0, 0, E])])
    h = b.op("Add", [b.op("MatMul", [o, b.w(E, E)]), x])
    t2 = rmsnorm(b, h, E)
    g = b.op("MatMul", [t2, b.w(E, ffn * E)])
    u = b.op("MatMul", [t2, b.w(E, ffn * E)])
    a = b.op("Mul", [b.op("Mul", [g, b.op("Sigmoid", [g])]), u])
    b.out(b.op("Add", [b.op("MatMul", [a, b.w(ffn * E, E)]), h]))


def mlp(b, S, E, F_, sym, act):
    x = sym_inp(b, "x", [None if sym else S, E] if not sym else [None, S, E])
    h = b.op("Add", [b.op("MatMul", [x, b.w(E, F_)]), b.w(F_, scale=0.1)])
    h = {"relu": lambda t: b.op("Relu", [t]), "gelu": b.gelu_erf, "tanh": lambda t: b.op("Tanh", [t])}[act](h)
    y = b.op("Add", [b.op("Add", [b.op("MatMul", [h, b.w(F_, E)]), b.w(E, scale=0.1)]), x])
    b.out(b.ln(y, E))


def shared_a(b, M, K, N1, N2):
    """One projection read by a wide and a narrow MatMul (sbuf-residency's span), M > 128."""
    x = b.inp("x", [M, K])
    y = b.op("MatMul", [x, b.w(K, K)])
    z = b.op("MatMul", [y, b.w(K, N1)])
    u = b.op("Add", [b.op("MatMul", [y, b.w(K, N2)]), y]) if N2 == K else b.op("MatMul", [y, b.w(K, N2)])
    b.out(z, u)


def plain_mm(b, M, K, N, batch):
    x = b.inp("x", ([batch] if batch else []) + [M, K])
    b.out(b.op("MatMul", [x, b.w(K, N)]))


def resnet(b, C, HW, sym):
    x = sym_inp(b, "x", [None if sym else 1, C, HW, HW])
    t = b.op("Relu", [b.bn(b.conv(x, C, C), C)])
    t = b.bn(b.conv(t, C, C), C)
    t = b.op("Relu", [b.op("Add", [t, x])])
    d = b.op("Relu", [b.bn(b.conv(t, C, 2 * C, strides=[2, 2]), 2 * C)])
    p = b.op("Flatten", [b.op("GlobalAveragePool", [d])])
    b.out(b.op("Gemm", [p, b.w(2 * C, 10), b.w(10, scale=0.1)]))


def wide_norm(b, M, E, kind):
    """Row ops over a wide last axis (past one tile of free elements) and many rows."""
    x = b.inp("x", [M, E])
    if kind == 0:
        b.out(b.ln(x, E))
    elif kind == 1:
        b.out(b.op("Softmax", [x], axis=-1))
    elif kind == 2:
        b.out(b.op("ReduceSum", [x, b.ints([-1])], keepdims=1), b.op("ReduceMax", [x], axes=[0], keepdims=0))
    else:
        b.out(rmsnorm(b, x, E))


def gemm_t(b, M, K, N, ta, tb):
    a = b.inp("a", [K, M] if ta else [M, K])
    w = b.w(*([N, K] if tb else [K, N]))
    b.out(b.op("Gemm", [a, w, b.w(N, scale=0.1)], transA=ta, transB=tb, alpha=0.7, beta=1.3))


def bmm(b, Bt, M, K, N, bcast):
    a = b.inp("a", [Bt, M, K])
    w = b.inp("w", [1 if bcast else Bt, K, N])
    b.out(b.op("MatMul", [a, w]))


def conv_wide(b, Cin, Cout, HW, k, group, stride):
    x = b.inp("x", [1, Cin, HW, HW])
    t = b.op("Relu", [b.bn(b.conv(x, Cin, Cout, k=k, group=group, strides=[stride, stride]), Cout)])
    b.out(t)


def misc_chain(b, rng, R, C, steps):
    """A chain of random ops on a [R, C] (or [1, Ch, H, W]) tensor, each result a graph output
    with some probability: the split rules of element-wise, row, reduction, gather, pooling
    and data-movement ops past one 128-row tile."""
    x = b.inp("x", [R, C])
    shape = [R, C]
    t = x
    for _ in range(steps):
        k = int(rng.integers(0, 16))
        r, c = shape[-2], shape[-1]
        if len(shape) != 2:
            k = 0
        if k == 0:  # element-wise binary with a broadcast operand
            bs = [[1, c], [r, 1], [], [r, c]][int(rng.integers(0, 4))] if len(shape) == 2 else [1]
            op = str(rng.choice(["Add", "Mul", "Sub", "Max", "Min", "Div"]))
            o = b.pos(*bs) if op == "Div" else b.w(*bs, scale=1.0) if bs else b.const(np.float32(rng.standard_normal()))
            t = b.op(op, [o, t] if rng.integers(0, 2) else [t, o])
        elif k == 1:
            t = b.op(str(rng.choice(["Exp", "Tanh", "Sigmoid", "Erf", "Softplus", "HardSwish", "Abs", "Neg", "Relu", "Softsign"])),
                     [b.op("Mul", [t, b.const(np.float32(0.3))])])
        elif k == 2:
            t = b.op(str(rng.choice(["Softmax", "LogSoftmax"])), [t], axis=int(rng.choice([0, 1, -1])))
        elif k == 3:
            ax = int(rng.integers(0, 2)); kd = int(rng.integers(0, 2))
            op = str(rng.choice(["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceL2", "ReduceSumSquare"]))
            t = b.op(op, [t, b.ints([ax])], keepdims=1) if op in ("ReduceSum",) else b.op(op, [t], axes=[ax], keepdims=1)
            shape = [1, c] if ax == 0 else [r, 1]
            t = b.op("Expand", [t, b.ints([r, c])]); shape = [r, c]
        elif k == 4:
            t = b.op("Transpose", [t], perm=[1, 0]); shape = [c, r]
        elif k == 5:
            ax = int(rng.integers(0, 2))
            t = b.op("Concat", [t, b.op("Mul", [t, b.const(np.float32(-0.5))])], axis=ax)
            shape = [2 * r, c] if ax == 0 else [r, 2 * c]
        elif k == 6:
            ax = int(rng.integers(0, 2)); n = shape[ax]
            st = int(rng.integers(0, max(1, n // 3))); step = int(rng.choice([1, 1, 2, 3]))
            t = b.op("Slice", [t, b.ints([st]), b.ints([n]), b.ints([ax]), b.ints([step])])
            shape[ax] = len(range(st, n, step))
        elif k == 7:
            m = int(rng.integers(1, 400))
            idx = b.const(rng.integers(0, r, m).astype(np.int64), "idx")
            t = b.op("Gather", [t, idx], axis=0); shape = [m, c]
        elif k == 8:
            t = b.op("CumSum", [t, b.const(np.int64(int(rng.integers(0, 2))), "ax")])
        elif k == 9:
            t = b.op("Where", [b.op("Greater", [t, b.const(np.float32(0.1))]), t, b.op("Mul", [t, b.const(np.float32(0.01))])])
        elif k == 10:
            ax = int(rng.integers(0, 2))
            b.out(b.op("Cast", [b.op("ArgMax", [t], axis=ax, keepdims=1)], to=TensorProto.FLOAT))
        elif k == 11 and r * c <= 300 * 700:
            h = int(rng.choice([d for d in (1, 2, 3, 4) if r % d == 0]))
            t4 = b.op("Reshape", [b.op("Transpose", [t], perm=[1, 0]), b.ints([1, c, r // h, h])])
            kh = min(3, r // h); kw = min(2, h)
            p = b.op(str(rng.choice(["MaxPool", "AveragePool"])), [t4], kernel_shape=[kh, kw], strides=[1, 1])
            b.out(p)
        elif k == 12:
            t = b.op("Pad", [t, b.ints([int(rng.integers(0, 3)), int(rng.integers(0, 3)), int(rng.integers(0, 3)), int(rng.integers(0, 3))])])
            shape = None
        elif k == 13:
            t = b.op("Trilu", [t], upper=int(rng.integers(0, 2)))
        elif k == 14:
            kk = int(rng.integers(1, min(c, 8) + 1))
            v, _ = b.op("TopK", [t, b.ints([kk])], n_out=2, axis=-1)
            b.out(v)
        else:
            t = b.ln(t, c)
        if shape is None:  # past a Pad: stop here
            b.out(t)
            return
        if rng.integers(0, 3) == 0:
            b.out(t)
    b.out(t)


def random_cases(n, seed):
    rng = np.random.default_rng(seed)
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    rows = lambda: int(rng.choice([ri(1, 16), ri(120, 140), ri(129, 300), ri(250, 260), 256, 384, ri(500, 530)]))  # noqa: E731
    hid = lambda: int(rng.choice([8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512]))  # noqa: E731
    cases = []
    for i in range(n):
        k = ri(0, 10)
        if k == 0:
            E = hid(); H = int(rng.choice([h for h in (1, 2, 4, 8) if E % h == 0 and E // h >= 4] or [1]))
            S = min(rows(), 300)
            args = dict(S=S, E=E, H=H, sym=bool(ri(0, 1)), ffn=ri(1, 4), causal=bool(ri(0, 1)), tanh=bool(ri(0, 1)))
            cases.append((f"r{seed}_{i:03d}_transformer", lambda b, a=args: transformer(b, **a)))
        elif k == 1:
            E = hid(); H = int(rng.choice([h for h in (1, 2, 4, 8) if E % h == 0 and E // h >= 4] or [1]))
            args = dict(S=min(rows(), 300), E=E, H=H, sym=bool(ri(0, 1)), ffn=ri(1, 3))
            cases.append((f"r{seed}_{i:03d}_llama", lambda b, a=args: llama(b, **a)))
        elif k == 2:
            args = dict(S=rows(), E=hid(), F_=hid() * ri(1, 4), sym=bool(ri(0, 1)), act=str(rng.choice(["relu", "gelu", "tanh"])))
            cases.append((f"r{seed}_{i:03d}_mlp", lambda b, a=args: mlp(b, **a)))
        elif k == 3:
            K = hid()
            args = dict(M=rows(), K=K, N1=ri(1, 600), N2=int(rng.choice([K, ri(1, 200)])))
            cases.append((f"r{seed}_{i:03d}_shared_a", lambda b, a=args: shared_a(b, **a)))
        elif k == 4:
            args = dict(M=rows(), K=ri(1, 600), N=ri(1, 600), batch=int(rng.choice([0, 0, 2, 3])))
            cases.append((f"r{seed}_{i:03d}_plain_mm", lambda b, a=args: plain_mm(b, **a)))
        elif k == 5:
            args = dict(M=rows(), E=int(rng.choice([hid(), ri(500, 2100), 4097])), kind=ri(0, 3))
            cases.append((f"r{seed}_{i:03d}_wide_norm", lambda b, a=args: wide_norm(b, **a)))
        elif k == 6:
            args = dict(M=rows(), K=ri(1, 400), N=ri(1, 400), ta=ri(0, 1), tb=ri(0, 1))
            cases.append((f"r{seed}_{i:03d}_gemm_t", lambda b, a=args: gemm_t(b, **a)))
        elif k == 7:
            args = dict(Bt=ri(1, 6), M=rows(), K=ri(1, 300), N=ri(1, 300), bcast=bool(ri(0, 1)))
            cases.append((f"r{seed}_{i:03d}_bmm", lambda b, a=args: bmm(b, **a)))
        elif k >= 9:
            args = dict(R=rows(), C=int(rng.choice([ri(1, 8), ri(100, 700), 128, 512, 513])), steps=ri(1, 4))
            sub = np.random.default_rng(int(rng.integers(0, 2**31)))
            cases.append((f"r{seed}_{i:03d}_misc", lambda b, a=args, sub=sub: misc_chain(b, sub, **a)))
        else:
            g = int(rng.choice([1, 1, 2, 0]))
            Cin = int(rng.choice([3, 16, 64, 130, 192, 256]))
            Cout = Cin if g == 0 else int(rng.choice([8, 64, 129, 256]))
            grp = Cin if g == 0 else (2 if (Cin % 2 == 0 and Cout % 2 == 0 and g == 2) else 1)
            args = dict(Cin=Cin, Cout=Cout, HW=ri(3, 20), k=int(rng.choice([1, 3])), group=grp, stride=ri(1, 2))
            cases.append((f"r{seed}_{i:03d}_conv", lambda b, a=args: conv_wide(b, **a)))
    return cases


def write(out: Path, cases, first_seed: int) -> None:
    """Each (name, builder) as OUT/name.onnx, the k-th built with seed first_seed + k."""
    for k, (name, fn) in enumerate(cases):
        b = B(first_seed + k)
        fn(b)
        m = b.model()
        onnx.checker.check_model(m)
        (out / f"{name}.onnx").write_bytes(m.SerializeToString())


def main() -> int:
    if sys.argv[1] == "--random":
        n, seed, out = int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4])
        out.mkdir(parents=True, exist_ok=True)
        write(out, random_cases(n, seed), seed * 10000)
        print(f"{n} random models in {out}")
        return 0
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    cases = []
    for i, (S, E, H) in enumerate([(129, 64, 2), (160, 128, 4), (200, 64, 4), (256, 128, 8), (300, 256, 4),
                                   (130, 512, 8), (144, 96, 2), (257, 64, 1)]):
        cases.append((f"transformer_{i:02d}", lambda b, S=S, E=E, H=H, i=i: transformer(b, S, E, H, sym=i % 2 == 1, tanh=i % 3 == 2,
                                                                                         causal=i != 4)))
    for i, (S, E, H) in enumerate([(129, 64, 2), (200, 128, 4), (256, 256, 8), (300, 64, 4)]):
        cases.append((f"llama_{i:02d}", lambda b, S=S, E=E, H=H, i=i: llama(b, S, E, H, sym=i % 2 == 0)))
    for i, (S, E, F_, act) in enumerate([(129, 64, 256, "gelu"), (200, 128, 512, "relu"), (300, 512, 512, "tanh"),
                                         (256, 96, 384, "gelu"), (150, 256, 1024, "relu")]):
        cases.append((f"mlp_{i:02d}", lambda b, S=S, E=E, F_=F_, act=act, i=i: mlp(b, S, E, F_, i % 2 == 1, act)))
    for i, (M, K, N1, N2) in enumerate([(129, 64, 256, 64), (200, 128, 512, 32), (300, 96, 300, 96), (256, 256, 1024, 8),
                                        (130, 8, 256, 8)]):
        cases.append((f"shared_a_{i:02d}", lambda b, M=M, K=K, N1=N1, N2=N2: shared_a(b, M, K, N1, N2)))
    for i, (M, K, N, bt) in enumerate([(129, 129, 129, 0), (300, 64, 512, 0), (257, 513, 130, 0), (200, 128, 200, 3),
                                       (128, 1, 300, 0), (1, 300, 257, 0), (131, 300, 1, 0), (256, 256, 256, 2)]):
        cases.append((f"plain_mm_{i:02d}", lambda b, M=M, K=K, N=N, bt=bt: plain_mm(b, M, K, N, bt)))
    for i, (C, HW) in enumerate([(16, 16), (32, 12), (64, 9), (24, 20)]):
        cases.append((f"resnet_{i:02d}", lambda b, C=C, HW=HW, i=i: resnet(b, C, HW, sym=i % 2 == 1)))
    write(out, cases, 1000)
    print(f"{len(cases)} models in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
