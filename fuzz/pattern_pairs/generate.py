"""Pattern-pair models for trnsim's rewrite passes (fold_batchnorm, fuse_attention, fuse_gelu,
fusion (epilogues), fuse_qkv, fuse_elementwise, fuse_norm_prologue): each model composes the
patterns those passes target doubled, chained, shared, or at the edge of their conditions.
Small opset-17 fp32 models, deterministic (fixed seeds); one .onnx per case.

    .venv/bin/python fuzz/pattern_pairs/generate.py OUT_DIR
    PYTHONPATH=python .venv/bin/python fuzz/differential.py OUT_DIR --timeout 60
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT


class B:
    """A tiny graph builder."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.inputs, self.outputs = [], [], [], []
        self.k = 0

    def fresh(self, base="t"):
        self.k += 1
        return f"{base}{self.k}"

    def inp(self, name, shape):
        self.inputs.append(helper.make_tensor_value_info(name, F, list(shape)))
        return name

    def const(self, arr, base="c"):
        name = self.fresh(base)
        arr = np.asarray(arr)
        if arr.dtype == np.float64:
            arr = arr.astype(np.float32)
        self.inits.append(numpy_helper.from_array(arr, name))
        return name

    def w(self, *shape, scale=None, base="w"):
        s = scale if scale is not None else 1.0 / math.sqrt(shape[0] if shape else 1)
        return self.const((self.rng.standard_normal(shape) * s).astype(np.float32), base)

    def pos(self, *shape, lo=0.5, hi=1.5, base="p"):
        return self.const(self.rng.uniform(lo, hi, shape).astype(np.float32), base)

    def ints(self, v):
        return self.const(np.asarray(v, dtype=np.int64), "i")

    def op(self, op, ins, out=None, n_out=1, **attrs):
        outs = [out or self.fresh(op.lower())] if n_out == 1 else [self.fresh(op.lower()) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op, list(ins), outs, name=self.fresh("n_" + op), **attrs))
        return outs[0] if n_out == 1 else outs

    def out(self, *names):
        for n in names:
            if n not in [o.name for o in self.outputs]:
                self.outputs.append(helper.make_tensor_value_info(n, F, None))

    def model(self):
        g = helper.make_graph(self.nodes, "g", self.inputs, self.outputs, self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="pattern_pairs")
        m.ir_version = 9
        # Output types with their inferred shapes (the checker wants a shape field).
        inferred = onnx.shape_inference.infer_shapes(m)
        vi = {x.name: x for x in list(inferred.graph.value_info) + list(inferred.graph.output)}
        for o in m.graph.output:
            if o.name in vi and vi[o.name].type.tensor_type.HasField("shape"):
                o.type.CopyFrom(vi[o.name].type)
            else:
                o.type.tensor_type.shape.SetInParent()
        return m

    # ---- composite spellings ----
    def bn(self, x, c, eps=1e-5, var_zero=False):
        sc = self.pos(c, lo=0.5, hi=2.0)
        bb = self.w(c, scale=1.0)
        mean = self.w(c, scale=0.5)
        var = self.const(np.zeros(c, np.float32)) if var_zero else self.pos(c, lo=0.2, hi=2.0)
        return self.op("BatchNormalization", [x, sc, bb, mean, var], epsilon=eps)

    def conv(self, x, cin, cout, k=3, bias=True, group=1, pads=None, w=None, **kw):
        w = w or self.w(cout, cin // group, k, k, scale=1.0 / math.sqrt(cin * k * k / group))
        ins = [x, w] + ([self.w(cout, scale=0.5)] if bias else [])
        pads = pads if pads is not None else [k // 2] * 4
        return self.op("Conv", ins, kernel_shape=[k, k], pads=pads, group=group, **kw)

    def ln(self, x, d, axis=-1, eps=1e-5, scale_shape=None, bias=True, scale=None, shift=None):
        ss = scale_shape if scale_shape is not None else (d,)
        s = scale or self.pos(*ss, lo=0.5, hi=1.5)
        ins = [x, s]
        if bias:
            ins.append(shift or self.w(*ss, scale=0.5))
        return self.op("LayerNormalization", ins, axis=axis, epsilon=eps)

    def gelu_erf(self, x, order=0):
        c = self.const(np.float32(math.sqrt(2.0)))
        if order == 0:  # 0.5 * x * (1 + erf(x / sqrt2))
            e = self.op("Erf", [self.op("Div", [x, c])])
            a = self.op("Add", [e, self.const(np.float32(1.0))])
            return self.op("Mul", [self.op("Mul", [x, self.const(np.float32(0.5))]), a])
        if order == 1:  # x * (0.5 + 0.5 erf(x * 1/sqrt2))
            e = self.op("Erf", [self.op("Mul", [x, self.const(np.float32(1 / math.sqrt(2.0)))])])
            a = self.op("Add", [self.op("Mul", [e, self.const(np.float32(0.5))]), self.const(np.float32(0.5))])
            return self.op("Mul", [a, x])
        # (x * (1 + erf(x/sqrt2))) * 0.5
        e = self.op("Erf", [self.op("Div", [x, c])])
        a = self.op("Add", [self.const(np.float32(1.0)), e])
        return self.op("Mul", [self.op("Mul", [x, a]), self.const(np.float32(0.5))])

    def gelu_tanh(self, x, pow_form=False):
        x3 = self.op("Pow", [x, self.const(np.float32(3.0))]) if pow_form else self.op("Mul", [self.op("Mul", [x, x]), x])
        inner = self.op("Add", [x, self.op("Mul", [x3, self.const(np.float32(0.044715))])])
        t = self.op("Tanh", [self.op("Mul", [inner, self.const(np.float32(math.sqrt(2 / math.pi)))])])
        a = self.op("Add", [t, self.const(np.float32(1.0))])
        return self.op("Mul", [self.op("Mul", [x, self.const(np.float32(0.5))]), a])


CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


# ------------------------------------------------------------------ Conv + BatchNormalization
@case
def conv_bn(b, v):
    """Conv -> BN variants: doubled, chained through Relu, two readers, output exposure."""
    C, H = 4, 6
    x = b.inp("x", [1, 3, H, H])
    bias = v % 2 == 0
    k = [1, 3][v % 2]
    kind = v // 2
    y = b.conv(x, 3, C, k=k, bias=bias)
    if kind == 0:  # BN -> BN
        b.out(b.bn(b.bn(y, C), C))
    elif kind == 1:  # BN -> Relu -> BN
        b.out(b.bn(b.op("Relu", [b.bn(y, C)]), C))
    elif kind == 2:  # two BN readers of the conv
        b.out(b.bn(y, C), b.bn(y, C))
    elif kind == 3:  # conv output also a graph output
        b.out(b.bn(y, C), y)
    elif kind == 4:  # BN output a graph output and read further
        z = b.bn(y, C)
        b.out(z, b.op("Relu", [z]))
    elif kind == 5:  # BN -> BN -> BN -> Relu with zero variance and a large epsilon
        z = b.bn(b.bn(y, C, var_zero=True, eps=1e-2), C, eps=0.5)
        b.out(b.op("Relu", [b.bn(z, C)]))
    elif kind == 6:  # two convs sharing one weight, each with its BN
        w = b.w(C, 3, k, k, scale=0.3)
        y2 = b.conv(x, 3, C, k=k, bias=bias, w=w)
        y3 = b.conv(x, 3, C, k=k, bias=bias, w=w)
        b.out(b.bn(y2, C), b.op("Add", [b.bn(y3, C), y2]))
    elif kind == 7:  # conv -> BN -> Add(residual of conv's input) -> Relu -> conv -> BN
        z = b.bn(y, C)
        y2 = b.conv(b.op("Relu", [z]), C, C, k=k, bias=bias)
        b.out(b.bn(b.bn(y2, C), C))
    elif kind == 8:  # grouped conv -> BN -> BN
        y2 = b.conv(b.conv(x, 3, C, k=1), C, C, k=k, group=2, bias=bias)
        b.out(b.bn(b.bn(y2, C), C))
    elif kind == 9:  # depthwise conv -> BN -> BN
        y2 = b.conv(b.conv(x, 3, C, k=1), C, C, k=k, group=C, bias=bias)
        b.out(b.bn(b.bn(y2, C), C))
    elif kind == 10:  # strided conv -> BN -> Relu -> BN, BN output shared by Add twice
        y2 = b.conv(x, 3, C, k=3, bias=bias, strides=[2, 2])
        z = b.bn(y2, C)
        b.out(b.op("Add", [b.bn(b.op("Relu", [z]), C), z]))
    elif kind == 11:  # 1-D conv -> BN -> BN
        x1 = b.inp("x1", [1, 3, 9])
        w = b.w(C, 3, k, scale=0.4)
        ins = [x1, w] + ([b.w(C)] if bias else [])
        y1 = b.op("Conv", ins, kernel_shape=[k], pads=[k // 2, k // 2])
        b.out(b.bn(b.bn(y1, C), C), b.op("Relu", [x]))
    elif kind == 12:  # conv -> BN whose bias is shared by the conv (same initializer)
        cb = b.w(C, scale=0.5)
        y2 = b.op("Conv", [x, b.w(C, 3, k, k, scale=0.3), cb], kernel_shape=[k, k], pads=[k // 2] * 4)
        sc, mean, var = b.pos(C), b.w(C), b.pos(C)
        z = b.op("BatchNormalization", [y2, sc, cb, mean, var])
        b.out(b.op("BatchNormalization", [z, sc, cb, mean, var]))
    elif kind == 13:  # conv reads the same tensor twice? (x as input, conv -> BN -> Mul by itself)
        z = b.bn(y, C)
        b.out(b.op("Mul", [z, z]))
    return True


conv_bn.variants = 28


# ------------------------------------------------------------------ MatMul / Gemm epilogues
@case
def mm_epilogue(b, v):
    """MatMul -> element-wise chains whose operands broadcast in every direction."""
    M, K, N = 6, 8, 5
    batched = v % 3 == 2
    lead = [2] if batched else []
    x = b.inp("x", lead + [M, K])
    W = b.w(K, N)
    y = b.op("MatMul", [x, W])
    shapes = [[N], [M, 1], [1], [1, N], [M, N], [1, 1], [M, N]]
    bshapes = [[2, 1, N], [2, M, 1], [2, 1, 1], [1, M, N], [2, M, N]]
    kind = v // 3
    def opnd(i):
        if batched and i % 2:
            return b.w(*bshapes[i % len(bshapes)], scale=1.0)
        return b.w(*shapes[i % len(shapes)], scale=1.0)
    if kind == 0:  # Add bias -> Add bias -> Relu
        z = b.op("Add", [b.op("Add", [y, opnd(0)]), opnd(1)])
        b.out(b.op("Relu", [z]))
    elif kind == 1:  # operand first: c - y, c / y, then Max with operand
        z = b.op("Sub", [opnd(1), y])
        z = b.op("Div", [opnd(2), b.op("Add", [z, b.const(np.full([1], 4.0, np.float32))])])
        b.out(b.op("Max", [z, opnd(3)]))
    elif kind == 2:  # epilogue reads the MatMul's own input (square: N == K)
        W2 = b.w(K, K)
        y2 = b.op("MatMul", [x, W2])
        b.out(b.op("Relu", [b.op("Add", [y2, x])]))
    elif kind == 3:  # epilogue reads the MatMul's weight (K == M)
        x2 = b.inp("x2", lead + [K, K])
        W2 = b.w(K, K)
        y2 = b.op("MatMul", [x2, W2])
        b.out(b.op("Sub", [W2, b.op("Mul", [y2, W2])]))
    elif kind == 4:  # result is also a graph output
        z = b.op("Add", [y, opnd(4)])
        b.out(z, b.op("Tanh", [z]))
    elif kind == 5:  # Add(y, y), Mul(y, y)
        z = b.op("Add", [y, y])
        b.out(b.op("Mul", [b.op("Sigmoid", [z]), b.op("Exp", [b.op("Neg", [z])])]))
    elif kind == 6:  # operand produced after the MatMul (topological order)
        u = b.op("Relu", [b.op("MatMul", [x, b.w(K, N)])])
        b.out(b.op("Add", [b.op("Abs", [y]), u]))
    elif kind == 7:  # Sqrt / Erf / Min chain with [M,1] operand
        z = b.op("Sqrt", [b.op("Abs", [y])])
        z = b.op("Min", [b.op("Erf", [z]), opnd(1)])
        b.out(b.op("Div", [z, b.pos(*([M, 1] if not batched else [2, M, 1]))]))
    elif kind == 8:  # two epilogue chains of one weight shared by two MatMuls
        y2 = b.op("MatMul", [b.op("Relu", [x]), W])
        b.out(b.op("Add", [y, opnd(0)]), b.op("Add", [y2, opnd(0)]))
    elif kind == 9:  # operand is another MatMul's result with the same shape
        y2 = b.op("MatMul", [x, b.w(K, N)])
        b.out(b.op("Mul", [b.op("Add", [y, y2]), opnd(5)]))
    elif kind == 10:  # output-sized operand bigger than the result (broadcast of y)
        big = b.w(3, *([M, N] if not batched else [2, M, N])[-2:])
        if batched:
            big = b.w(2, M, N)
        b.out(b.op("Add", [y, big]))
    elif kind == 11:  # 1-D matmuls with epilogues
        xv = b.inp("xv", [K])
        b.out(b.op("Relu", [b.op("Add", [b.op("MatMul", [xv, W]), b.w(N)])]), b.op("Relu", [y]))
    return True


mm_epilogue.variants = 36


@case
def mm_operand_broadcast_out(b, v):
    """The epilogue operand's broadcast makes the result bigger than the MatMul's."""
    M, K, N = 4, 6, 5
    x = b.inp("x", [M, K])
    y = b.op("MatMul", [x, b.w(K, N)])
    opshape = [[3, M, N], [2, 1, N], [3, 1, 1], [M, 1]][v % 4]
    z = b.op(["Add", "Mul", "Sub", "Max"][v % 4], [y, b.w(*opshape)] if v % 2 == 0 else [b.w(*opshape), y])
    b.out(b.op("Relu", [z]))
    return True


mm_operand_broadcast_out.variants = 8


@case
def gemm_epilogue(b, v):
    """Gemm with alpha/beta/trans and C of every broadcast shape, then chained element-wise ops."""
    M, K, N = 5, 7, 6
    ta, tb = v % 2, (v // 2) % 2
    x = b.inp("x", [K, M] if ta else [M, K])
    W = b.w(*([N, K] if tb else [K, N]))
    cs = [[N], [M, 1], [1], [M, N], [1, N]][(v // 4) % 5]
    alpha, beta = [(1.0, 1.0), (0.5, 2.0), (-1.0, 0.0), (2.0, -0.5)][v % 4]
    y = b.op("Gemm", [x, W, b.w(*cs, scale=1.0)], alpha=alpha, beta=beta, transA=ta, transB=tb)
    y = b.op("Add", [y, b.w(N)])
    if v % 3 == 0:
        y = b.op("Relu", [y])
    b.out(y)
    return True


gemm_epilogue.variants = 20


# ------------------------------------------------------------------ GELU spellings
@case
def gelu_chain(b, v):
    """MatMul -> Add -> GELU spelled (erf / tanh forms) -> GELU, and GELUs on non-MatMul heads."""
    M, K, N = 6, 8, 8
    x = b.inp("x", [M, K])
    y = b.op("Add", [b.op("MatMul", [x, b.w(K, N)]), b.w(N)])
    forms = [("erf", "erf"), ("erf", "tanh"), ("tanh", "erf"), ("tanh", "tanh")]
    f1, f2 = forms[v % 4]
    g = lambda t, f, i: b.gelu_erf(t, order=i % 3) if f == "erf" else b.gelu_tanh(t, pow_form=i % 2 == 1)
    kind = v // 4
    if kind == 0:  # MatMul -> Add -> GELU -> GELU
        b.out(g(g(y, f1, v), f2, v + 1))
    elif kind == 1:  # GELU -> Add -> GELU on an element-wise head (no MatMul)
        h = b.op("Add", [x, b.w(K)])
        b.out(g(b.op("Add", [g(h, f1, v), b.w(K)]), f2, v + 2))
    elif kind == 2:  # GELU whose input is also read elsewhere; second GELU output also graph output
        g1 = g(y, f1, v)
        g2 = g(g1, f2, v + 1)
        b.out(g2, b.op("Add", [g1, y]))
    elif kind == 3:  # GELU of a GELU's intermediate being a graph output (not closed)
        t = b.op("Mul", [y, b.const(np.float32(0.5))])
        e = b.op("Erf", [b.op("Div", [y, b.const(np.float32(math.sqrt(2.0)))])])
        z = b.op("Mul", [t, b.op("Add", [e, b.const(np.float32(1.0))])])
        b.out(g(z, f2, v), e)
    elif kind == 4:  # two GELUs reading the same tensor, different forms, summed
        b.out(b.op("Add", [g(y, f1, v), g(y, f2, v + 1)]))
    elif kind == 5:  # GELU -> MatMul -> GELU -> MatMul (chain of blocks), 3-D
        x3 = b.inp("x3", [2, 3, K])
        z = g(b.op("MatMul", [x3, b.w(K, N)]), f1, v)
        b.out(g(b.op("Add", [b.op("MatMul", [z, b.w(N, N)]), b.w(N)]), f2, v + 1))
    return True


gelu_chain.variants = 24


@case
def gelu_lookalike(b, v):
    """Functions that agree with GELU on fuse_gelu's sample grid (x = k/8, |x| <= 6) but not
    elsewhere, or constants slightly off, or NaN-relevant constants."""
    M, N = 4, 8
    x = b.inp("x", [M, N])
    if v == 0:  # gelu + 5e-13 x^8 on inputs scaled to |x| ~ 100 (equal within 1e-6 on the grid)
        xs = b.op("Mul", [x, b.const(np.full([N], 60.0, np.float32))])
        ge = b.gelu_erf(xs)
        d = b.op("Mul", [b.op("Pow", [xs, b.const(np.float32(8.0))]), b.const(np.float32(5e-13))])
        b.out(b.op("Add", [ge, d]))
    elif v == 1:  # 1/sqrt2 rounded to 4 digits (not GELU within 1e-6)
        e = b.op("Erf", [b.op("Mul", [x, b.const(np.float32(0.7071))])])
        b.out(b.op("Mul", [b.op("Mul", [x, b.const(np.float32(0.5))]), b.op("Add", [e, b.const(np.float32(1.0))])]))
    elif v == 2:  # tanh form with x*x*x through Pow 3, inputs scaled large (fp32 overflow of x^3)
        xs = b.op("Mul", [x, b.const(np.full([N], 3e13, np.float32))])
        b.out(b.gelu_tanh(xs, pow_form=True))
    elif v == 3:  # tanh form, large inputs, x*x*x
        xs = b.op("Mul", [x, b.const(np.full([N], 3e13, np.float32))])
        b.out(b.gelu_tanh(xs, pow_form=False))
    elif v == 4:  # erf form on very large inputs (0.5 * x * (1 + erf)) with x ~ 1e38
        xs = b.op("Mul", [x, b.const(np.full([N], 1e38, np.float32))])
        b.out(b.gelu_erf(xs, order=v % 3))
    elif v == 5:  # sign-switching term, 0 on the grid: gelu(x) + 1000 * (|x| - x * tanh(1000 x)) (>10 nodes?)
        ge = b.gelu_erf(x)
        ab = b.op("Sqrt", [b.op("Mul", [x, x])])
        sg = b.op("Tanh", [b.op("Mul", [x, b.const(np.float32(1000.0))])])
        d = b.op("Sub", [ab, b.op("Mul", [x, sg])])
        b.out(b.op("Add", [ge, b.op("Mul", [d, b.const(np.float32(100.0))])]))
    elif v == 6:  # gelu with a [1]-shaped constant and a [1,1] constant (rank changes)
        e = b.op("Erf", [b.op("Div", [x, b.const(np.full([1], math.sqrt(2), np.float32))])])
        a = b.op("Add", [e, b.const(np.ones([1, 1], np.float32))])
        b.out(b.op("Mul", [b.op("Mul", [x, b.const(np.full([1], 0.5, np.float32))]), a]))
    elif v == 7:  # x/sqrt2 via Sqrt of a constant node, Neg spelled: x - (-...)
        s = b.op("Sqrt", [b.const(np.float32(2.0))])
        e = b.op("Erf", [b.op("Div", [x, s])])
        a = b.op("Sub", [e, b.const(np.float32(-1.0))])
        b.out(b.op("Mul", [b.op("Div", [x, b.const(np.float32(2.0))]), a]))
    elif v == 8:  # gelu of x where the region could also grow through x*x (same tensor twice)
        sq = b.op("Mul", [x, x])
        b.out(b.gelu_erf(x), sq)
    elif v == 9:  # a GELU in a graph whose input has NaN/inf entries (added constant)
        c = np.zeros([M, N], np.float32)
        c[0, 0], c[1, 1], c[2, 2] = np.nan, np.inf, -np.inf
        xn = b.op("Add", [x, b.const(c)])
        b.out(b.gelu_tanh(xn), b.gelu_erf(xn))
    elif v == 10:  # Relu / Clip with NaN and inf constants
        lo, hi = b.const(np.float32(np.nan)), b.const(np.float32(1.0))
        b.out(b.op("Clip", [x, lo, hi]))
    elif v == 11:
        b.out(b.op("Clip", [x, b.const(np.float32(np.inf)), b.const(np.float32(np.inf))]))
    elif v == 12:
        b.out(b.op("Clip", [x, b.const(np.float32(-np.inf)), b.const(np.float32(-np.inf))]))
    elif v == 13:  # Clip min > max
        b.out(b.op("Clip", [x, b.const(np.float32(1.0)), b.const(np.float32(-1.0))]))
    elif v == 14:  # Clip with max NaN after a MatMul
        y = b.op("MatMul", [x, b.w(N, N)])
        b.out(b.op("Clip", [y, b.const(np.float32(-0.5)), b.const(np.float32(np.nan))]))
    elif v == 15:  # MatMul -> Max with a NaN operand row, -> Relu
        y = b.op("MatMul", [x, b.w(N, N)])
        c = np.zeros([N], np.float32)
        c[3] = np.nan
        b.out(b.op("Relu", [b.op("Max", [y, b.const(c)])]))
    elif v == 16:  # Relu of NaN-carrying elementwise chain
        c = np.zeros([N], np.float32)
        c[2] = np.nan
        z = b.op("Add", [x, b.const(c)])
        b.out(b.op("Relu", [b.op("Min", [b.op("Exp", [z]), b.const(np.float32(2.0))])]))
    elif v == 17:  # gelu_tanh where 0.044715 term uses Pow(x, 3) and x is sqrt(2/pi) pre-multiplied
        c0 = math.sqrt(2 / math.pi)
        x3 = b.op("Pow", [x, b.const(np.float32(3.0))])
        inner = b.op("Add", [b.op("Mul", [x, b.const(np.float32(c0))]), b.op("Mul", [x3, b.const(np.float32(c0 * 0.044715))])])
        t = b.op("Add", [b.op("Tanh", [inner]), b.const(np.float32(1.0))])
        b.out(b.op("Mul", [b.op("Mul", [t, x]), b.const(np.float32(0.5))]))
    elif v == 18:  # Gelu lookalike with Pow(x, 0.5) term that is NaN for x<0 only off the grid? (sqrt(x*x))
        ge = b.gelu_erf(x)
        r = b.op("Sub", [b.op("Pow", [b.op("Mul", [x, x]), b.const(np.float32(0.5))]), b.op("Sqrt", [b.op("Mul", [x, x])])])
        b.out(b.op("Add", [ge, r]))
    elif v == 19:  # x * Phi(x) where Phi via erfc spelled as 1 - erf(-x/sqrt2)
        e = b.op("Erf", [b.op("Neg", [b.op("Div", [x, b.const(np.float32(math.sqrt(2)))])])])
        a = b.op("Sub", [b.const(np.float32(1.0)), e])
        b.out(b.op("Mul", [b.op("Mul", [x, a]), b.const(np.float32(0.5))]))
    return True


gelu_lookalike.variants = 20


# ------------------------------------------------------------------ element-wise chains
@case
def ew_chain(b, v):
    """Element-wise heads (no MatMul) with chains: operand_first, broadcast, NaN, shared reads."""
    M, N = 4, 6
    x = b.inp("x", [M, N])
    kind = v
    if kind == 0:
        z = b.op("Add", [x, b.w(N)])
        z = b.op("Sub", [b.w(M, 1), z])
        z = b.op("Div", [b.pos(1), z])
        b.out(b.op("Pow", [b.pos(M, N), b.op("Tanh", [z])]))
    elif kind == 1:  # head broadcasts: Add([M,1],[1,N]) -> Mul -> Relu
        a = b.inp("a", [M, 1])
        z = b.op("Add", [a, b.w(1, N)])
        b.out(b.op("Relu", [b.op("Mul", [z, x])]))
    elif kind == 2:  # chain through an op reading the chain's tensor twice
        z = b.op("Exp", [b.op("Neg", [x])])
        b.out(b.op("Sigmoid", [b.op("Mul", [z, z])]))
    elif kind == 3:  # chain whose operand is produced later
        z = b.op("Abs", [x])
        late = b.op("Sin", [b.op("Cos", [x])])
        b.out(b.op("Add", [b.op("Sqrt", [z]), late]))
    elif kind == 4:  # Cast in the middle (not fusable), integer chain
        z = b.op("Mul", [x, b.const(np.float32(3.7))])
        zi = b.op("Cast", [z], to=TensorProto.INT32)
        zi = b.op("Div", [zi, b.const(np.int32(2))])
        b.out(b.op("Add", [b.op("Cast", [zi], to=F), x]))
    elif kind == 5:  # Max/Min with NaN, Sign, Softplus, Reciprocal, Log chain
        c = np.zeros([N], np.float32)
        c[1] = np.nan
        z = b.op("Max", [x, b.const(c)])
        z = b.op("Log", [b.op("Softplus", [z])])
        z = b.op("Mul", [b.op("Reciprocal", [b.op("Add", [z, b.const(np.float32(2.0))])]), b.op("Sign", [x])])
        b.out(b.op("Min", [z, b.const(c[::-1].copy())]))
    elif kind == 6:  # LeakyRelu / HardSigmoid heads (attributes) followed by chain ops
        z = b.op("LeakyRelu", [x], alpha=0.3)
        z = b.op("Mul", [b.op("Add", [z, b.w(N)]), b.const(np.float32(2.0))])
        h = b.op("HardSigmoid", [z], alpha=0.3, beta=0.4)
        b.out(b.op("Tanh", [b.op("Sub", [h, x])]))
    elif kind == 7:  # Mod fmod=0 head then chain
        z = b.op("Mod", [x, b.const(np.float32(0.7))], fmod=1)
        b.out(b.op("Abs", [b.op("Add", [z, b.w(N)])]))
    elif kind == 8:  # chain intermediate is a graph output and read twice
        z = b.op("Add", [x, b.w(N)])
        z2 = b.op("Relu", [z])
        b.out(z, b.op("Mul", [z2, b.w(M, 1)]))
    elif kind == 9:  # Gelu (expanded) on an element-wise head with attribute forms mixed with Tanh
        h = b.op("Tanh", [x])
        g1 = b.gelu_tanh(h)
        b.out(b.op("Add", [b.gelu_erf(g1), g1]))
    elif kind == 10:  # Where-based selection between two chains (Where not a chain op)
        c = b.op("Greater", [x, b.const(np.float32(0.0))])
        b.out(b.op("Where", [c, b.op("Exp", [x]), b.op("Neg", [x])]))
    elif kind == 11:  # Sum/Mean variadic decomposed and chained
        z = b.op("Sum", [x, b.w(N), b.w(M, 1)])
        b.out(b.op("Relu", [b.op("Mean", [z, x, b.w(1)])]))
    elif kind == 12:  # Pow with operand first, negative base
        z = b.op("Pow", [b.const(np.float32(-2.0)), b.op("Floor", [x])])
        b.out(b.op("Add", [z, b.w(N)]))
    elif kind == 13:  # Div by zero, Sqrt of negative in chain
        z = b.op("Div", [b.op("Sub", [x, x]), b.op("Abs", [x])])
        b.out(b.op("Sqrt", [b.op("Neg", [b.op("Abs", [x])])]), z)
    return True


ew_chain.variants = 14


# ------------------------------------------------------------------ LayerNorm prologues
@case
def ln_prologue(b, v):
    """LayerNorm read by MatMuls: chained, through Reshapes, as B, axis != -1, scale [1], ..."""
    M, D, N = 6, 8, 5
    three = v % 2 == 1
    lead = [2] if three else []
    x = b.inp("x", lead + [M, D])
    kind = v // 2
    mm = lambda t, k=D, n=N, w=None: b.op("MatMul", [t, w or b.w(k, n)])
    if kind == 0:  # LN -> MatMul
        b.out(mm(b.ln(x, D)))
    elif kind == 1:  # LN -> LN -> MatMul
        b.out(mm(b.ln(b.ln(x, D), D)))
    elif kind == 2:  # LN -> Reshape -> LN -> MatMul
        r = b.op("Reshape", [b.ln(x, D), b.ints([-1, D])])
        b.out(mm(b.ln(r, D)))
    elif kind == 3:  # LN read by MatMul as B (square D x D)
        xa = b.inp("xa", lead + [D, D])
        b.out(b.op("MatMul", [b.w(M, D), b.ln(xa, D)]))
    elif kind == 4:  # LN axis 0 / first axis
        b.out(mm(b.ln(x, None, axis=0, scale_shape=lead + [M, D])))
    elif kind == 5:  # LN scale of shape [1], bias [1]
        b.out(mm(b.ln(x, D, scale_shape=(1,))))
    elif kind == 6:  # LN read by two MatMuls with different weights and an Add
        t = b.ln(x, D)
        b.out(mm(t), mm(t, n=3))
    elif kind == 7:  # LN read by MatMul and by the MatMul's epilogue (residual)
        t = b.ln(x, D)
        b.out(b.op("Add", [mm(t, n=D), t]))
    elif kind == 8:  # LN read twice by one MatMul (t @ t, square)
        xs = b.inp("xs", lead + [D, D])
        t = b.ln(xs, D)
        b.out(b.op("MatMul", [t, t]))
    elif kind == 9:  # LN without bias -> MatMul -> Add bias -> Relu
        t = b.ln(x, D, bias=False)
        b.out(b.op("Relu", [b.op("Add", [mm(t), b.w(N)])]))
    elif kind == 10:  # LN -> MatMul whose weight is shared by another MatMul
        W = b.w(D, N)
        t = b.ln(x, D)
        b.out(mm(t, w=W), mm(x, w=W))
    elif kind == 11:  # LN -> MatMul with bias shared with another MatMul's epilogue
        bias = b.w(N)
        t = b.ln(x, D)
        b.out(b.op("Add", [mm(t), bias]), b.op("Add", [mm(x), bias]))
    elif kind == 12:  # LN -> MatMul -> LN (epilogue) -> MatMul (prologue) : post-norm stack
        t = b.ln(x, D)
        y = b.op("Add", [mm(t, n=D), b.w(D)])
        y2 = b.ln(y, D)
        b.out(b.op("Add", [mm(y2, n=D), y2]))
    elif kind == 13:  # LN over axis 1 of 3-D / last two axes, read by MatMul after Reshape to rows
        if three:
            t = b.ln(x, None, axis=1, scale_shape=[M, D])
            r = b.op("Reshape", [t, b.ints([2, M * D])])
            b.out(mm(r, k=M * D))
        else:
            t = b.ln(x, D, axis=1)
            b.out(mm(t))
    elif kind == 14:  # LN output reshaped to a different last axis (rows regrouped) then MatMul
        t = b.ln(x, D)
        r = b.op("Reshape", [t, b.ints([-1, 2 * D])]) if M % 2 == 0 else t
        b.out(mm(r, k=2 * D))
    elif kind == 15:  # Reshape -> LN where the input Reshape is read elsewhere too
        x2 = b.inp("x2", lead + [M * D])
        r = b.op("Reshape", [x2, b.ints(lead + [M, D])])
        b.out(mm(b.ln(r, D)), b.op("Relu", [r]))
    elif kind == 16:  # LN output also a graph output
        t = b.ln(x, D)
        b.out(mm(t), t)
    elif kind == 17:  # LN -> LN(scale [1]) -> Reshape -> MatMul, LN with large epsilon
        t = b.ln(b.ln(x, D, eps=0.5), D, scale_shape=(1,))
        b.out(mm(b.op("Reshape", [t, b.ints([-1, D])])))
    elif kind == 18:  # two LNs of the same input, each into a MatMul, summed
        b.out(b.op("Add", [mm(b.ln(x, D)), mm(b.ln(x, D, eps=1e-3))]))
    elif kind == 19:  # LN -> MatMul with a 3-D weight (batched B) and with a 1-row A
        if three:
            b.out(b.op("MatMul", [b.ln(x, D), b.w(2, D, N)]))
        else:
            x1 = b.inp("x1", [1, D])
            b.out(mm(b.ln(x1, D)), mm(b.ln(x, D)))
    elif kind == 20:  # LN -> MatMul -> Sub (operand first) -> LN -> MatMul
        t = mm(b.ln(x, D), n=D)
        t = b.op("Sub", [b.w(D), t])
        b.out(mm(b.ln(t, D)))
    elif kind == 21:  # LN scale/bias shape [1, D] and [D] mixed; scale from a graph input (non-const)
        s = b.inp("s", [D])
        t = b.op("LayerNormalization", [x, s, b.w(1, D)], axis=-1)
        b.out(mm(t), mm(b.ln(x, D, scale_shape=(1, D))))
    elif kind == 22:  # LN with Mean/InvStdDev outputs used, then MatMul
        outs = b.op("LayerNormalization", [x, b.pos(D), b.w(D)], n_out=3, axis=-1)
        b.out(mm(outs[0]), outs[1])
    elif kind == 23:  # LN -> MatMul -> LN -> MatMul, with the middle MatMul's result used twice
        y = mm(b.ln(x, D), n=D)
        b.out(mm(b.ln(y, D)), b.op("Relu", [y]))
    return True


ln_prologue.variants = 48


# ------------------------------------------------------------------ attention
def _attention(b, q, k_t, v, scale=("mul", 0.35), mask=None, axis=-1, out_perm=None, cast=False):
    s = b.op("MatMul", [q, k_t])
    kind, c = scale
    if kind == "mul":
        s = b.op("Mul", [s, b.const(np.float32(c))])
    elif kind == "mul_first":
        s = b.op("Mul", [b.const(np.float32(c)), s])
    elif kind == "div":
        s = b.op("Div", [s, b.const(np.float32(c))])
    elif kind == "div_first":
        s = b.op("Div", [b.const(np.float32(c)), s])
    elif kind == "mul_vec1":
        s = b.op("Mul", [s, b.const(np.full([1], c, np.float32))])
    if mask is not None:
        s = b.op("Add", mask(s))
    p = b.op("Softmax", [s], axis=axis)
    if cast:
        p = b.op("Cast", [p], to=F)
    o = b.op("MatMul", [p, v])
    if out_perm is not None:
        o = b.op("Transpose", [o], perm=out_perm)
    return o


@case
def attention(b, v):
    """MatMul(Q, K^T) -> scale -> mask -> Softmax -> MatMul(V) at the edges of fuse_attention."""
    Bt, H, S, D = 2, 2, 5, 4
    q = b.inp("q", [Bt, H, S, D])
    k = b.inp("k", [Bt, H, S, D])
    vv = b.inp("v", [Bt, H, S, D])
    kt = lambda t: b.op("Transpose", [t], perm=[0, 1, 3, 2])
    scales = [("mul", 0.5), ("div", 2.0), ("mul_first", 0.5), ("div_first", 2.0), ("mul", -0.5), ("div", -2.0),
              ("mul_vec1", 0.5), ("none", 1.0), ("mul", 0.0), ("div", 0.0)]
    kind = v
    if kind < len(scales):
        b.out(_attention(b, q, kt(k), vv, scale=scales[kind]))
        return True
    kind -= len(scales)
    masks = [[S], [1, 1, 1, S], [Bt, 1, S, S], [S, 1], [H, S, S], [1, S], [Bt, H, S, S], [1], [Bt, 1, 1, 1]]
    if kind < len(masks):
        ms = masks[kind]
        mk = b.const((b.rng.standard_normal(ms) * 2).astype(np.float32))
        b.out(_attention(b, q, kt(k), vv, mask=lambda s: [s, mk] if kind % 2 else [mk, s]))
        return True
    kind -= len(masks)
    if kind == 0:  # softmax on a non-last axis
        b.out(_attention(b, q, kt(k), vv, axis=2))
    elif kind == 1:  # softmax axis given as 3 (last, positive)
        b.out(_attention(b, q, kt(k), vv, axis=3))
    elif kind == 2:  # K given as [B, S, H, D], transposed with perm [0, 2, 3, 1]
        k2 = b.inp("k2", [Bt, S, H, D])
        b.out(_attention(b, q, b.op("Transpose", [k2], perm=[0, 2, 3, 1]), vv))
    elif kind == 3:  # K^T already as input (no transpose)
        kt2 = b.inp("kt2", [Bt, H, D, S])
        b.out(_attention(b, q, kt2, vv))
    elif kind == 4:  # K transposed with the default (reversed) perm on a 3-D tensor
        q3 = b.inp("q3", [D, S, D])
        kr = b.inp("kr", [S, D, D])  # reversed -> [D, D, S]
        v3 = b.inp("v3", [D, S, D])
        b.out(_attention(b, q3, b.op("Transpose", [kr]), v3))
    elif kind == 5:  # two attentions sharing Q (and Q's transpose)
        qs = b.inp("qs", [Bt, S, H, D])
        qt = b.op("Transpose", [qs], perm=[0, 2, 1, 3])
        k2 = b.inp("k2", [Bt, H, S, D])
        b.out(_attention(b, qt, kt(k), vv), _attention(b, qt, kt(k2), vv, scale=("div", 3.0)))
    elif kind == 6:  # self attention: Q = K = V (same tensor read three times)
        b.out(_attention(b, q, kt(q), q))
    elif kind == 7:  # Q from a transpose, output transposed back, V transposed
        qs = b.inp("qs", [Bt, S, H, D])
        vs = b.inp("vs", [Bt, S, H, D])
        qt = b.op("Transpose", [qs], perm=[0, 2, 1, 3])
        vt = b.op("Transpose", [vs], perm=[0, 2, 1, 3])
        ks = b.inp("ks", [Bt, S, H, D])
        b.out(_attention(b, qt, b.op("Transpose", [ks], perm=[0, 2, 3, 1]), vt, out_perm=[0, 2, 1, 3]))
    elif kind == 8:  # output transposed with a different perm
        b.out(_attention(b, q, kt(k), vv, out_perm=[1, 0, 3, 2]))
    elif kind == 9:  # scores are also a graph output
        s = b.op("Mul", [b.op("MatMul", [q, kt(k)]), b.const(np.float32(0.5))])
        b.out(b.op("MatMul", [b.op("Softmax", [s], axis=-1), vv]), s)
    elif kind == 10:  # softmax output also a graph output
        s = b.op("MatMul", [q, kt(k)])
        p = b.op("Softmax", [s], axis=-1)
        b.out(b.op("MatMul", [p, vv]), p)
    elif kind == 11:  # Cast of the probabilities to the same type
        b.out(_attention(b, q, kt(k), vv, cast=True))
    elif kind == 12:  # mask produced by a MatMul (score-ish on both sides), full shape
        mm = b.op("MatMul", [k, kt(vv)])
        b.out(_attention(b, q, kt(k), vv, scale=("div", 2.0), mask=lambda s: [mm, s]))
    elif kind == 13:  # mask is a scaled tensor (Mul) of full shape placed first
        mi = b.inp("mi", [Bt, H, S, S])
        mm = b.op("Mul", [mi, b.const(np.float32(-3.0))])
        b.out(_attention(b, q, kt(k), vv, scale=("mul", 0.25), mask=lambda s: [mm, s]))
    elif kind == 14:  # batch broadcast: K with batch 1
        k1 = b.inp("k1", [1, H, S, D])
        b.out(_attention(b, q, kt(k1), vv))
    elif kind == 15:  # Sq != Sk, D != Dv
        q2 = b.inp("q2", [Bt, H, 3, D])
        v2 = b.inp("v2", [Bt, H, S, 6])
        b.out(_attention(b, q2, kt(k), v2))
    elif kind == 16:  # P @ V where V = P-shaped (P @ P)
        s = b.op("MatMul", [q, kt(k)])
        p = b.op("Softmax", [s], axis=-1)
        b.out(b.op("MatMul", [p, p]))
    elif kind == 17:  # rank-2 attention (no batch)
        q2 = b.inp("q2", [S, D])
        k2 = b.inp("k2", [S, D])
        v2 = b.inp("v2", [S, D])
        b.out(_attention(b, q2, b.op("Transpose", [k2]), v2, scale=("div", 2.0)))
    elif kind == 18:  # two chained attentions: output of one is Q of the next
        o = _attention(b, q, kt(k), vv)
        b.out(_attention(b, o, kt(k), vv, scale=("div", 1.5)))
    elif kind == 19:  # Mul scale by a [1,1,1,1] const, then mask add of a graph input
        mi = b.inp("mi", [Bt, 1, 1, S])
        s = b.op("Mul", [b.op("MatMul", [q, kt(k)]), b.const(np.full([1, 1, 1, 1], 0.5, np.float32))])
        b.out(b.op("MatMul", [b.op("Softmax", [b.op("Add", [s, mi])], axis=-1), vv]))
    elif kind == 20:  # scale applied after the mask (Mul of the sum)
        mk = b.const(b.rng.standard_normal([S]).astype(np.float32))
        s = b.op("Add", [b.op("MatMul", [q, kt(k)]), mk])
        s = b.op("Mul", [s, b.const(np.float32(0.5))])
        b.out(b.op("MatMul", [b.op("Softmax", [s], axis=-1), vv]))
    elif kind == 21:  # mask added twice
        m1 = b.const(b.rng.standard_normal([S]).astype(np.float32))
        m2 = b.const(b.rng.standard_normal([S, 1]).astype(np.float32))
        s = b.op("Add", [b.op("Add", [b.op("Div", [b.op("MatMul", [q, kt(k)]), b.const(np.float32(2.0))]), m1]), m2])
        b.out(b.op("MatMul", [b.op("Softmax", [s], axis=-1), vv]))
    elif kind == 22:  # scale twice (Mul then Div)
        s = b.op("Div", [b.op("Mul", [b.op("MatMul", [q, kt(k)]), b.const(np.float32(0.5))]), b.const(np.float32(3.0))])
        b.out(b.op("MatMul", [b.op("Softmax", [s], axis=-1), vv]))
    elif kind == 23:  # D > 128 boundary and mask with -inf entries
        q2 = b.inp("q2", [1, 1, 3, 130])
        k2 = b.inp("k2", [1, 1, 4, 130])
        v2 = b.inp("v2", [1, 1, 4, 130])
        b.out(_attention(b, q2, kt(k2), v2))
    elif kind == 24:  # mask with -inf / large negative entries (whole row masked)
        mk = np.zeros([S, S], np.float32)
        mk[np.triu_indices(S, 1)] = -np.inf
        mc = b.const(mk)
        b.out(_attention(b, q, kt(k), vv, mask=lambda s: [s, mc]))
    elif kind == 25:  # probabilities read as B of the PV MatMul (V @ P^T style: P as second input)
        s = b.op("MatMul", [q, kt(k)])
        p = b.op("Softmax", [s], axis=-1)
        vt = b.inp("vt", [Bt, H, D, S])
        b.out(b.op("MatMul", [vt, b.op("Transpose", [p], perm=[0, 1, 3, 2])]), b.op("MatMul", [vt, kt(p)]))
    elif kind == 26:  # QK MatMul with an epilogue-like Add of a bias before softmax produced by Mul
        bias = b.inp("bias", [1, H, 1, 1])
        s = b.op("MatMul", [q, kt(k)])
        s = b.op("Add", [b.op("Mul", [bias, b.const(np.float32(2.0))]), s])
        b.out(b.op("MatMul", [b.op("Softmax", [s], axis=-1), vv]))
    elif kind == 27:  # Softmax with an Add whose *score* side broadcasts (score smaller than ss)
        q1 = b.inp("q1", [1, H, S, D])
        k1 = b.inp("k1", [1, H, S, D])
        mi = b.inp("mi", [Bt, H, S, S])
        s = b.op("Add", [b.op("MatMul", [q1, kt(k1)]), mi])
        b.out(b.op("MatMul", [b.op("Softmax", [s], axis=-1), vv]))
    return True


attention.variants = 10 + 9 + 28


@case
def qkv(b, v):
    """Q/K/V projections sharing one input (rows > 128 so that fuse_qkv applies)."""
    S, E, H = 136, 16, 2
    D = E // H
    x = b.inp("x", [1, S, E])
    kind = v
    eps = []

    def proj(i, act=None, bias="add", bshape=None):
        y = b.op("MatMul", [x, b.w(E, E)])
        if bias == "add":
            y = b.op("Add", [y, b.w(*(bshape or [E]), scale=1.0)])
        elif bias == "add_first":
            y = b.op("Add", [b.w(*(bshape or [E]), scale=1.0), y])
        elif bias == "sub_first":
            y = b.op("Sub", [b.w(E, scale=1.0), y])
        if act:
            y = b.op(act, [y])
        return y

    def heads(y, perm):
        return b.op("Transpose", [b.op("Reshape", [y, b.ints([1, S, H, D])])], perm=perm)

    configs = {
        0: [dict(), dict(), dict()],
        1: [dict(bias="add"), dict(bias="add_first"), dict(bias="add")],
        2: [dict(bias="add"), dict(bias=None), dict(bias="add")],
        3: [dict(act="Relu"), dict(act="Relu"), dict(act="Relu")],
        4: [dict(act="Relu"), dict(act="Tanh"), dict(act="Relu")],
        5: [dict(bias="sub_first"), dict(bias="sub_first"), dict(bias="add")],
        6: [dict(bshape=[1, E]), dict(bshape=[1, E]), dict(bshape=[1, E])],
        7: [dict(bshape=[1, 1, E]), dict(), dict()],
        8: [dict(bias=None), dict(bias=None), dict(bias=None)],
    }
    if kind in configs:
        c = configs[kind]
        q = heads(proj(0, **c[0]), [0, 2, 1, 3])
        k = heads(proj(1, **c[1]), [0, 2, 3, 1])
        vv = heads(proj(2, **c[2]), [0, 2, 1, 3])
        o = _attention(b, q, k, vv, scale=("div", math.sqrt(D)), out_perm=[0, 2, 1, 3])
        b.out(b.op("Reshape", [o, b.ints([1, S, E])]))
        return True
    kind -= len(configs)
    if kind == 0:  # K = Q's projection reused (same MatMul for q and k)
        y = proj(0)
        q = heads(y, [0, 2, 1, 3])
        k = heads(y, [0, 2, 3, 1])
        vv = heads(proj(2), [0, 2, 1, 3])
        b.out(_attention(b, q, k, vv))
    elif kind == 1:  # single head, no reshape: projections read directly
        q, vv = proj(0), proj(2)
        k = b.op("Transpose", [proj(1)], perm=[0, 2, 1])
        b.out(_attention(b, q, k, vv, scale=("mul", 0.25)))
    elif kind == 2:  # rows regrouped by the Reshape (two tokens per row) - widen must refuse
        q = b.op("Reshape", [proj(0), b.ints([1, S // 2, 2 * E])])
        k = b.op("Transpose", [b.op("Reshape", [proj(1), b.ints([1, S // 2, 2 * E])])], perm=[0, 2, 1])
        vv = b.op("Reshape", [proj(2), b.ints([1, S // 2, 2 * E])])
        b.out(_attention(b, q, k, vv, scale=("mul", 0.25)))
    elif kind == 3:  # a row split into two rows (sequence doubled) - widen must refuse
        q = b.op("Reshape", [proj(0), b.ints([1, 2 * S, E // 2])])
        k = b.op("Transpose", [b.op("Reshape", [proj(1), b.ints([1, 2 * S, E // 2])])], perm=[0, 2, 1])
        vv = b.op("Reshape", [proj(2), b.ints([1, 2 * S, E // 2])])
        b.out(_attention(b, q, k, vv, scale=("mul", 0.25)))
    elif kind == 4:  # the V projection also a graph output
        yv = proj(2)
        q = heads(proj(0), [0, 2, 1, 3])
        k = heads(proj(1), [0, 2, 3, 1])
        b.out(_attention(b, q, k, heads(yv, [0, 2, 1, 3])), yv)
    elif kind == 5:  # LN -> QKV (prologue after qkv fusion) -> attention -> residual
        t = b.ln(x, E)
        ys = [b.op("Add", [b.op("MatMul", [t, b.w(E, E)]), b.w(E)]) for _ in range(3)]
        q = heads(ys[0], [0, 2, 1, 3])
        k = heads(ys[1], [0, 2, 3, 1])
        vv = heads(ys[2], [0, 2, 1, 3])
        o = b.op("Reshape", [_attention(b, q, k, vv, out_perm=[0, 2, 1, 3]), b.ints([1, S, E])])
        b.out(b.op("Add", [o, x]))
    elif kind == 6:  # two attention blocks sharing x's projections for K and V (cross)
        ks = heads(proj(1), [0, 2, 3, 1])
        vs = heads(proj(2), [0, 2, 1, 3])
        q1 = heads(proj(0), [0, 2, 1, 3])
        b.out(_attention(b, q1, ks, vs), _attention(b, heads(proj(0), [0, 2, 1, 3]), ks, vs))
    elif kind == 7:  # Q projected from x, K and V from another input of the same shape
        x2 = b.inp("x2", [1, S, E])
        q = heads(proj(0), [0, 2, 1, 3])
        k = heads(b.op("MatMul", [x2, b.w(E, E)]), [0, 2, 3, 1])
        vv = heads(b.op("MatMul", [x2, b.w(E, E)]), [0, 2, 1, 3])
        b.out(_attention(b, q, k, vv))
    elif kind == 8:  # projections of different widths (V wider)
        q = heads(proj(0), [0, 2, 1, 3])
        k = heads(proj(1), [0, 2, 3, 1])
        yv = b.op("MatMul", [x, b.w(E, 2 * E)])
        vv = b.op("Transpose", [b.op("Reshape", [yv, b.ints([1, S, H, 2 * D])])], perm=[0, 2, 1, 3])
        b.out(_attention(b, q, k, vv))
    elif kind == 9:  # GELU (spelled) epilogue on all three projections: attrs on the MatMuls
        ys = [b.gelu_erf(b.op("MatMul", [x, b.w(E, E)])) for _ in range(3)]
        ys[1] = b.gelu_tanh(b.op("MatMul", [x, b.w(E, E)]))
        b.out(_attention(b, heads(ys[0], [0, 2, 1, 3]), heads(ys[1], [0, 2, 3, 1]), heads(ys[2], [0, 2, 1, 3])))
    elif kind == 10:  # the projections in a different order than q, k, v in the graph
        yv = proj(2)
        yk = proj(1)
        yq = proj(0)
        b.out(_attention(b, heads(yq, [0, 2, 1, 3]), heads(yk, [0, 2, 3, 1]), heads(yv, [0, 2, 1, 3]), mask=lambda s: [s, b.const(np.zeros([S], np.float32) - np.arange(S, dtype=np.float32) * 0.01)]))
    return True


qkv.variants = 9 + 11


# ------------------------------------------------------------------ conv epilogues
@case
def conv_epilogue(b, v):
    """Conv (ConvGemm) -> element-wise ops with operands broadcasting along each axis."""
    C, H, W = 4, 5, 6
    x = b.inp("x", [2, 3, H, W])
    y = b.conv(x, 3, C, k=3, bias=v % 2 == 0)
    shapes = [[C, 1, 1], [1, C, 1, 1], [W], [H, W], [1], [2, 1, 1, 1], [2, C, H, W], [H, 1], [1, 1, H, W], [2, 1, H, 1],
              [C, H, 1]]
    s = shapes[v % len(shapes)]
    op = ["Add", "Mul", "Sub", "Div", "Max"][v % 5]
    opnd = b.pos(*s) if op == "Div" else b.w(*s, scale=1.0)
    z = b.op(op, [y, opnd] if v % 3 else [opnd, y])
    z = b.op("Relu", [z])
    if v >= len(shapes):  # then a BN (not foldable: after the Relu) and an Add of the conv input's channels
        z = b.bn(z, C)
    b.out(z)
    return True


conv_epilogue.variants = 22


@case
def mixed(b, v):
    """Transformer-ish blocks mixing all passes, in a few sizes."""
    S, E = [(4, 8), (8, 16), (3, 12), (130, 8)][v % 4]
    H = 2
    D = E // H
    x = b.inp("x", [1, S, E])
    t = b.ln(x, E)
    ys = [b.op("Add", [b.op("MatMul", [t, b.w(E, E)]), b.w(E)]) for _ in range(3)]
    q = b.op("Transpose", [b.op("Reshape", [ys[0], b.ints([1, S, H, D])])], perm=[0, 2, 1, 3])
    k = b.op("Transpose", [b.op("Reshape", [ys[1], b.ints([1, S, H, D])])], perm=[0, 2, 3, 1])
    vv = b.op("Transpose", [b.op("Reshape", [ys[2], b.ints([1, S, H, D])])], perm=[0, 2, 1, 3])
    mk = np.zeros([S, S], np.float32)
    mk[np.triu_indices(S, 1)] = -1e9
    o = _attention(b, q, k, vv, scale=("div", math.sqrt(D)) if v % 2 else ("mul", 1 / math.sqrt(D)),
                   mask=lambda s: [s, b.const(mk)], out_perm=[0, 2, 1, 3])
    o = b.op("Reshape", [o, b.ints([1, S, E])])
    h = b.op("Add", [b.op("Add", [b.op("MatMul", [o, b.w(E, E)]), b.w(E)]), x])
    t2 = b.ln(h, E)
    f = b.op("Add", [b.op("MatMul", [t2, b.w(E, 2 * E)]), b.w(2 * E)])
    f = b.gelu_erf(f) if v // 4 == 0 else b.gelu_tanh(f)
    f = b.op("Add", [b.op("MatMul", [f, b.w(2 * E, E)]), b.w(E)])
    b.out(b.ln(b.op("Add", [f, h]), E))
    return True


mixed.variants = 8


# ------------------------------------------------------------------ LayerNorm as an epilogue
@case
def ln_epilogue(b, v):
    """MatMul / Conv results normalised by a LayerNorm (fusion.cpp's LayerNorm epilogue)."""
    M, K, N = 6, 8, 8
    kind = v
    if kind < 6:  # Conv -> LayerNorm over the last axis (W), 4-D (decomposed) or via a Reshape to rows
        C, H, W = 4, 5, 6
        x = b.inp("x", [1, 3, H, W])
        y = b.conv(x, 3, C, k=3, bias=kind % 2 == 0)
        if kind < 2:
            b.out(b.ln(y, W))
        elif kind < 4:
            r = b.op("Reshape", [y, b.ints([C * H, W])])
            b.out(b.ln(r, W))
        else:  # Conv -> Relu -> LN(axis=1 over C, H, W)
            b.out(b.ln(b.op("Relu", [y]), None, axis=1, scale_shape=[C, H, W]))
        return True
    kind -= 6
    lead = [2] if kind % 2 else []
    x = b.inp("x", lead + [M, K])
    y = b.op("MatMul", [x, b.w(K, N)])
    k2 = kind // 2
    if k2 == 0:  # MatMul -> LN
        b.out(b.ln(y, N))
    elif k2 == 1:  # MatMul -> Add -> LN -> Relu
        b.out(b.op("Relu", [b.ln(b.op("Add", [y, b.w(N)]), N)]))
    elif k2 == 2:  # MatMul -> LN -> LN
        b.out(b.ln(b.ln(y, N), N))
    elif k2 == 3:  # MatMul -> LN(scale [1], bias [1])
        b.out(b.ln(y, N, scale_shape=(1,)))
    elif k2 == 4:  # MatMul -> LN without bias
        b.out(b.ln(y, N, bias=False))
    elif k2 == 5:  # MatMul -> LN(axis 0 / -2): over more than a row
        b.out(b.ln(y, None, axis=0 if not lead else 1, scale_shape=[M, N]))
    elif k2 == 6:  # MatMul -> Reshape (rows regrouped, same last axis) -> LN
        r = b.op("Reshape", [y, b.ints([-1, M // 2, N])])
        b.out(b.ln(r, N))
    elif k2 == 7:  # MatMul -> Reshape (last axis changes) -> LN
        r = b.op("Reshape", [y, b.ints([-1, 2 * N])])
        b.out(b.ln(r, 2 * N))
    elif k2 == 8:  # MatMul -> LN with the scale also used as the bias
        s = b.pos(N)
        b.out(b.op("LayerNormalization", [y, s, s], axis=-1))
    elif k2 == 9:  # MatMul -> LN with a non-constant bias
        bi = b.inp("bi", [N])
        b.out(b.op("LayerNormalization", [y, b.pos(N), bi], axis=-1))
    elif k2 == 10:  # MatMul -> LN -> MatMul (post-norm: LN epilogue then the next MatMul)
        t = b.ln(b.op("Add", [y, x if K == N else b.w(N)]), N)
        b.out(b.op("MatMul", [t, b.w(N, N)]))
    elif k2 == 11:  # MatMul -> Gelu(spelled) -> LN -> Add(residual) -> LN
        t = b.ln(b.gelu_erf(y), N)
        b.out(b.ln(b.op("Add", [t, y if False else b.w(N)]), N))
    elif k2 == 12:  # LN with huge epsilon and constant rows (variance 0)
        z = b.op("Mul", [y, b.const(np.zeros([N], np.float32))])
        b.out(b.op("LayerNormalization", [z, b.pos(N), b.w(N)], axis=-1, epsilon=0.0))
    return True


ln_epilogue.variants = 6 + 26


@case
def plain_edges(b, v):
    """Single-op edges found while reading the passes (kept small)."""
    x = b.inp("x", [4, 8])
    if v == 0:  # 2-D LayerNorm with scale [1] and bias [1]
        b.out(b.ln(x, 8, scale_shape=(1,)))
    elif v == 1:  # 2-D LayerNorm with scale [1] only
        b.out(b.ln(x, 8, scale_shape=(1,), bias=False))
    elif v == 2:  # 2-D LayerNorm with scale [1, 8]
        b.out(b.ln(x, 8, scale_shape=(1, 8)))
    elif v == 3:  # 1-D MatMul [K] x [K, N] -> Add
        xv = b.inp("xv", [8])
        b.out(b.op("Add", [b.op("MatMul", [xv, b.w(8, 5)]), b.w(5)]))
    elif v == 4:  # [M, K] x [K] -> Relu
        b.out(b.op("Relu", [b.op("MatMul", [x, b.w(8)])]))
    elif v == 5:  # Clip to +inf
        b.out(b.op("Clip", [x, b.const(np.float32(np.inf))]))
    elif v == 6:  # Clip max -inf
        b.out(b.op("Clip", [x, b.const(np.float32(-1.0)), b.const(np.float32(-np.inf))]))
    elif v == 7:  # 3-D LayerNorm with scale [1]
        x3 = b.inp("x3", [2, 3, 8])
        b.out(b.ln(x3, 8, scale_shape=(1,)))
    elif v == 8:  # MatMul [M,K]x[K,N] -> LN scale [1] via epilogue refused? plain path
        b.out(b.ln(b.op("MatMul", [x, b.w(8, 8)]), 8, scale_shape=(1,)))
    return True


plain_edges.variants = 9


@case
def random_stack(b, v):
    """Random compositions of the targeted patterns on a pool of [.., S, E] tensors: LayerNorm,
    MatMul (+ bias of several broadcast shapes), spelled GELUs, activations, row Reshapes,
    single-head attention, with tensors shared between patterns and some exposed as outputs."""
    rng = np.random.default_rng(77 + v)
    S, E = [(4, 8), (6, 8), (5, 16), (3, 4)][v % 4]
    lead = [[], [2], [1]][v % 3]
    x = b.inp("x", lead + [S, E])
    pool = [x]
    steps = int(rng.integers(4, 10))
    for _ in range(steps):
        t = pool[-1] if rng.random() < 0.6 else pool[int(rng.integers(len(pool)))]
        r = int(rng.integers(14))
        if r == 0:
            y = b.ln(t, E, eps=float(rng.choice([1e-5, 1e-3, 0.5])))
        elif r in (1, 2):
            y = b.op("MatMul", [t, b.w(E, E)])
        elif r == 3:
            bs = [[E], [S, 1], [1], [1, E], [S, E]][int(rng.integers(5))]
            c = b.w(*bs, scale=1.0)
            y = b.op("Add", [t, c] if rng.random() < 0.5 else [c, t])
        elif r == 4:
            o = pool[int(rng.integers(len(pool)))]
            opk = ["Add", "Sub", "Mul", "Max", "Min"][int(rng.integers(5))]
            y = b.op(opk, [t, o] if rng.random() < 0.5 else [o, t])
        elif r == 5:
            y = b.gelu_erf(t, order=int(rng.integers(3)))
        elif r == 6:
            y = b.gelu_tanh(t, pow_form=bool(rng.integers(2)))
        elif r == 7:
            y = b.op(["Relu", "Tanh", "Sigmoid", "Neg", "Abs", "Exp"][int(rng.integers(6))], [t])
            if pool and rng.random() < 0.3:
                y = b.op("Clip", [y, b.const(np.float32(-1.0)), b.const(np.float32(2.0))])
        elif r == 8:
            y = b.op("Reshape", [b.op("Reshape", [t, b.ints([-1, E])]), b.ints(lead + [S, E])])
        elif r == 9:  # single-head self attention over t (scale as Mul / Div)
            kt = b.op("Transpose", [t], perm=list(range(len(lead))) + [len(lead) + 1, len(lead)])
            sc = ("mul", 0.3) if rng.random() < 0.5 else ("div", 3.0)
            mk = (lambda s: [s, b.const(rng.standard_normal([S]).astype(np.float32))]) if rng.random() < 0.5 else None
            vv = pool[int(rng.integers(len(pool)))]
            y = _attention(b, t, kt, vv, scale=sc, mask=mk)
        elif r == 10:  # LN -> MatMul pair sharing the LN output
            n1 = b.ln(t, E)
            y = b.op("Add", [b.op("MatMul", [n1, b.w(E, E)]), b.op("MatMul", [n1, b.w(E, E)])])
        elif r == 11:  # MatMul -> LN (epilogue) -> MatMul
            y = b.op("MatMul", [b.ln(b.op("MatMul", [t, b.w(E, E)]), E), b.w(E, E)])
        elif r == 12:  # residual Add of two pool tensors after a bias
            y = b.op("Add", [b.op("Add", [t, b.w(E)]), pool[0]])
        else:  # softmax over the last axis, not attention
            y = b.op("Softmax", [t], axis=-1)
        pool.append(y)
    outs = [pool[-1]] + [p for p in pool[1:-1] if rng.random() < 0.2]
    b.out(*outs)
    return True


random_stack.variants = 120


@case
def more_edges(b, v):
    """Second round of edges: attention output exposure, LN prologue with Gemm, transposed A."""
    Bt, H, S, D = 2, 2, 5, 4
    if v == 0:  # attention output both a graph output and transposed
        q, k, vv = (b.inp(n, [Bt, H, S, D]) for n in "qkv")
        o = b.op("MatMul", [b.op("Softmax", [b.op("MatMul", [q, b.op("Transpose", [k], perm=[0, 1, 3, 2])])], axis=-1), vv])
        b.out(b.op("Transpose", [o], perm=[0, 2, 1, 3]), o)
    elif v == 1:  # LN -> Gemm(transB) -> Relu
        x = b.inp("x", [6, 8])
        b.out(b.op("Relu", [b.op("Gemm", [b.ln(x, 8), b.w(5, 8), b.w(5)], transB=1)]))
    elif v == 2:  # LN -> Transpose -> MatMul (A transposed; not a row reader)
        x = b.inp("x", [8, 8])
        b.out(b.op("MatMul", [b.op("Transpose", [b.ln(x, 8)]), b.w(8, 5)]))
    elif v == 3:  # MatMul with A = Transpose(x) -> Add [M,1]
        x = b.inp("x", [8, 6])
        b.out(b.op("Add", [b.op("MatMul", [b.op("Transpose", [x]), b.w(8, 5)]), b.w(6, 1)]))
    elif v == 4:  # Gemm(transA) -> LN -> MatMul
        x = b.inp("x", [8, 6])
        y = b.op("Gemm", [x, b.w(8, 8), b.w(8)], transA=1)
        b.out(b.op("MatMul", [b.ln(y, 8), b.w(8, 4)]))
    elif v == 5:  # LN prologue + epilogue sharing the same scale constant
        x = b.inp("x", [6, 8])
        s = b.pos(8)
        t = b.op("LayerNormalization", [x, s, b.w(8)], axis=-1)
        y = b.op("Mul", [b.op("MatMul", [t, b.w(8, 8)]), s])
        b.out(b.op("LayerNormalization", [y, s, s], axis=-1))
    elif v == 6:  # LN of the MatMul's weight as a graph input: not const B
        x = b.inp("x", [6, 8])
        wi = b.inp("wi", [8, 8])
        b.out(b.op("MatMul", [b.ln(x, 8), wi]))
    elif v == 7:  # two LNs into one MatMul's A and into its epilogue operand
        x = b.inp("x", [6, 8])
        b.out(b.op("Add", [b.op("MatMul", [b.ln(x, 8), b.w(8, 8)]), b.ln(x, 8)]))
    elif v == 8:  # Conv -> BN -> BN where the second BN's output is read twice by an Add
        x = b.inp("x", [1, 3, 5, 5])
        z = b.bn(b.bn(b.conv(x, 3, 4), 4), 4)
        b.out(b.op("Add", [z, z]))
    elif v == 9:  # Conv -> BN -> Conv -> BN in one chain with shared BN params
        x = b.inp("x", [1, 4, 5, 5])
        sc, bb, mean, var = b.pos(4), b.w(4), b.w(4), b.pos(4)
        z = b.op("BatchNormalization", [b.conv(x, 4, 4), sc, bb, mean, var])
        b.out(b.op("BatchNormalization", [b.conv(z, 4, 4), sc, bb, mean, var]))
    return True


more_edges.variants = 10


@case
def resident(b, v):
    """MatMul results read by MatMuls (sbuf_residency's span) through Reshapes that regroup the
    (batch, rows), as broadcast epilogue operands, twice by one node, with prologues/epilogues.
    Meant for one core (chip trn1, cores=1), where residency applies."""
    E = 8
    M = [4, 130][v % 2]
    kind = v // 2
    if kind == 0:  # [2, M, E] -> Reshape [2M, E] -> MatMul
        x = b.inp("x", [2, M, E])
        y = b.op("MatMul", [x, b.w(E, E)])
        b.out(b.op("MatMul", [b.op("Reshape", [y, b.ints([2 * M, E])]), b.w(E, E)]))
    elif kind == 1:  # [2M, E] -> Reshape [2, M, E] -> MatMul
        x = b.inp("x", [2 * M, E])
        y = b.op("MatMul", [x, b.w(E, E)])
        b.out(b.op("MatMul", [b.op("Reshape", [y, b.ints([2, M, E])]), b.w(E, E)]))
    elif kind == 2:  # [2, M, E] -> Reshape [M, 2, E]?? rows regrouped across the batch
        x = b.inp("x", [2, M, E])
        y = b.op("MatMul", [x, b.w(E, E)])
        b.out(b.op("MatMul", [b.op("Reshape", [y, b.ints([M, 2, E])]), b.w(E, E)]))
    elif kind == 3:  # residual: y read as A of MatMul2 and as the epilogue operand of MatMul3
        x = b.inp("x", [2, M, E])
        y = b.op("MatMul", [x, b.w(E, E)])
        z = b.op("MatMul", [y, b.w(E, E)])
        b.out(b.op("Add", [b.op("MatMul", [z, b.w(E, E)]), y]))
    elif kind == 4:  # y [1, M, E] as a batch-broadcast epilogue operand of a [2, M, E] MatMul
        x = b.inp("x", [1, M, E])
        x2 = b.inp("x2", [2, M, E])
        y = b.op("MatMul", [x, b.w(E, E)])
        b.out(b.op("Add", [b.op("MatMul", [x2, b.w(E, E)]), y]), b.op("MatMul", [y, b.w(E, E)]))
    elif kind == 5:  # y [M, E] read by a MatMul as A and the same node's epilogue operand
        x = b.inp("x", [M, E])
        y = b.op("MatMul", [x, b.w(E, E)])
        b.out(b.op("Add", [b.op("MatMul", [y, b.w(E, E)]), y]))
    elif kind == 6:  # y [M, E] read as B of a MatMul (not row-major A) and as A of another
        x = b.inp("x", [M, E])
        y = b.op("MatMul", [x, b.w(E, E)])
        xa = b.inp("xa", [3, M])
        b.out(b.op("MatMul", [xa, y]), b.op("MatMul", [y, b.w(E, E)]))
    elif kind == 7:  # y with an LN epilogue, read by a MatMul with an LN prologue of y
        x = b.inp("x", [2, M, E])
        y = b.ln(b.op("MatMul", [x, b.w(E, E)]), E)
        b.out(b.op("MatMul", [b.ln(y, E), b.w(E, E)]), b.op("MatMul", [y, b.w(E, 4)]))
    elif kind == 8:  # y [2, M, E] as an epilogue operand [2, M, 1]-shaped reader? y broadcast along columns
        x = b.inp("x", [2, M, E])
        y = b.op("MatMul", [x, b.w(E, 1)])
        z = b.op("MatMul", [x, b.w(E, E)])
        b.out(b.op("Mul", [z, y]), b.op("MatMul", [y, b.w(1, E)]))
    elif kind == 9:  # y is also a graph output and read by two MatMuls, one via a Reshape alias
        x = b.inp("x", [2, M, E])
        y = b.op("MatMul", [x, b.w(E, E)])
        r = b.op("Reshape", [y, b.ints([2, M, E])])
        b.out(y, b.op("MatMul", [r, b.w(E, E)]), b.op("MatMul", [y, b.w(E, E)]))
    elif kind == 10:  # chain of four MatMuls with Relu / bias / Gelu epilogues and a late residual
        x = b.inp("x", [1, M, E])
        y1 = b.op("Relu", [b.op("Add", [b.op("MatMul", [x, b.w(E, E)]), b.w(E)])])
        y2 = b.gelu_erf(b.op("MatMul", [y1, b.w(E, E)]))
        y3 = b.op("MatMul", [y2, b.w(E, E)])
        b.out(b.op("Add", [b.op("MatMul", [y3, b.w(E, E)]), y1]))
    elif kind == 11:  # y read as A by a MatMul with a different K split: Reshape [.., 2E] (rows merged)
        x = b.inp("x", [2, M, E])
        y = b.op("MatMul", [x, b.w(E, E)])
        b.out(b.op("MatMul", [b.op("Reshape", [y, b.ints([2, M // 2, 2 * E])]), b.w(2 * E, E)]))
    elif kind == 12:  # y transposed then read (not a row reader)
        x = b.inp("x", [M, E])
        y = b.op("MatMul", [x, b.w(E, E)])
        b.out(b.op("MatMul", [b.op("Transpose", [y]), b.w(M, E)]), b.op("MatMul", [y, b.w(E, E)]))
    elif kind == 13:  # y as the epilogue operand of a MatMul whose output broadcasts it ([M,1] y)
        x = b.inp("x", [M, E])
        y = b.op("MatMul", [x, b.w(E, 1)])
        b.out(b.op("Sub", [y, b.op("MatMul", [x, b.w(E, E)])]), b.op("MatMul", [y, b.w(1, 3)]))
    elif kind == 14:  # y read as A by a MatMul whose B has a batch (A broadcast over it), in y's span
        x = b.inp("x", [M, E])
        y = b.op("MatMul", [x, b.w(E, E)])
        b.out(b.op("MatMul", [y, b.w(2, E, E)]), b.op("MatMul", [y, b.w(E, E)]))
    elif kind == 15:  # y read by a wide MatMul that core-split spreads over cores, and by a narrow one
        x = b.inp("x", [M, E])
        y = b.op("MatMul", [x, b.w(E, E)])
        b.out(b.op("MatMul", [y, b.w(E, 256)]), b.op("MatMul", [y, b.w(E, E)]))
    elif kind == 16:  # pre-LN FFN sub-block: out-proj + residual, LN, 4E-wide GELU layer, down + residual
        S, E = [(4, 64), (16, 32)][v % 2]
        x = b.inp("x", [1, S, E])
        o = b.inp("o", [1, S, E])
        h = b.op("Add", [b.op("Add", [b.op("MatMul", [o, b.w(E, E)]), b.w(E)]), x])
        f = b.gelu_erf(b.op("Add", [b.op("MatMul", [b.ln(h, E), b.w(E, 4 * E)]), b.w(4 * E)]))
        b.out(b.op("Add", [b.op("Add", [b.op("MatMul", [f, b.w(4 * E, E)]), b.w(E)]), h]))
    return True


resident.variants = 34


@case
def tiles(b, v):
    """The patterns across tile boundaries (rows > 128, K > 128, N > 512): epilogue operands
    of every broadcast shape, LayerNorm epilogues and prologues, resident chains."""
    M, K, N = [(130, 136, 520), (256, 64, 200), (129, 129, 513), (2, 256, 1030)][v % 4]
    kind = v // 4
    x = b.inp("x", [M, K])
    y = b.op("MatMul", [x, b.w(K, N)])
    if kind == 0:
        b.out(b.op("Relu", [b.op("Add", [b.op("Mul", [y, b.w(M, 1)]), b.w(N)])]))
    elif kind == 1:
        b.out(b.op("Sub", [b.w(1), b.op("Add", [y, b.w(M, N)])]))
    elif kind == 2:
        b.out(b.ln(b.op("Add", [y, b.w(N)]), N))
    elif kind == 3:
        b.out(b.op("MatMul", [b.ln(x, K), b.w(K, N)]))
    elif kind == 4:
        t = b.ln(x, K)
        y2 = b.op("Add", [b.op("MatMul", [t, b.w(K, N)]), b.w(N)])
        b.out(b.op("Add", [b.op("MatMul", [y2, b.w(N, N)]), y2]))
    elif kind == 5:
        b.out(b.gelu_tanh(b.op("Add", [y, b.w(M, 1)])))
    return True


tiles.variants = 24


def main() -> int:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/pp/models")
    out.mkdir(parents=True, exist_ok=True)
    n = 0
    for name, fn in CASES.items():
        for v in range(fn.variants):
            b = B(seed=1000 * len(name) + v)
            if not fn(b, v):
                continue
            m = b.model()
            onnx.checker.check_model(m)
            (out / f"{name}_{v:02d}.onnx").write_bytes(m.SerializeToString())
            n += 1
    print(f"{n} models in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
