"""ONNX export of PyTorch ops that torch.onnx's exporters lack but common models emit (issue 11):

- ``aten::diff``: transformers' packed-sequence probe (Whisper's decoder without a mask),
- ``aten::histc``: the expert histogram of transformers' default MoE experts ("grouped_mm"),
- ``aten::_grouped_mm`` and ``transformers::grouped_mm_fallback``: that implementation's grouped
  matmul (Mixtral, Qwen-MoE, Qwen3-MoE; the custom op is what Dynamo sees), unknown to the
  TorchScript exporter, and the custom op opaque to the dynamo exporter;
- ``aten::floor_divide`` (``a // b``) of floats: torch's exporter truncates; this one floors (a
  fix, not an addition: it replaces torch's symbolic for every export in the process).

``install()`` registers symbolic functions with the TorchScript exporter
(``torch.onnx.export(..., dynamo=False)``, which trnsim.trace and torch.compile(backend="trnsim")
use) and a decomposition into aten ops for the dynamo exporter; it only adds what torch has not
got, and runs when the torch.compile backend registers (``import trnsim`` once torch._dynamo is
imported), so a user's own ``torch.onnx.export`` of these models works as well.

The grouped matmul's rows are assigned to experts by the cumulative row counts ``offs``: row s
belongs to expert ``#{e : offs[e] <= s}``; every row is multiplied by its expert's weight
(a Gather of the weights per row, then a batched MatMul), so the graph has static shapes.
"""
from __future__ import annotations

import importlib
import sys

import torch

_OPSET = 9
_installed_aten = _installed_moe = False


def _grouped_mm_reference(input: torch.Tensor, weight: torch.Tensor, offs: torch.Tensor) -> torch.Tensor:
    rows = torch.arange(input.shape[0], device=input.device)
    # offs[:-1]: a row past the last offset stays with the last expert (ids < number of experts)
    expert = (offs[:-1].to(torch.int64).unsqueeze(0) <= rows.unsqueeze(1)).sum(1)
    return torch.bmm(input.unsqueeze(1), weight[expert]).squeeze(1)


def _const(g, value, dtype=torch.int64):
    return g.op("Constant", value_t=torch.tensor(value, dtype=dtype))


def _grouped_mm_symbolic(g, input, weight, offs):
    from torch.onnx import symbolic_helper as sh
    sizes = sh._get_tensor_sizes(weight)
    rows = sh._get_tensor_sizes(input)
    if not sizes or sizes[0] is None or not rows or rows[0] is None:
        raise torch.onnx.errors.SymbolicValueError("grouped_mm_fallback: static shapes are needed", input)
    pos = _const(g, list(range(rows[0])))
    offs64 = sh._slice_helper(g, g.op("Cast", offs, to_i=7), axes=[0], starts=[0], ends=[-1])  # INT64
    le = g.op("LessOrEqual", sh._unsqueeze_helper(g, offs64, [0]), sh._unsqueeze_helper(g, pos, [1]))
    expert = sh._reducesum_helper(g, g.op("Cast", le, to_i=7), axes_i=[1], keepdims_i=0)
    w = g.op("Gather", weight, expert, axis_i=0)
    return sh._squeeze_helper(g, g.op("MatMul", sh._unsqueeze_helper(g, input, [1]), w), [1])


def _aten_grouped_mm_symbolic(g, self, mat2, offs, bias, out_dtype):
    from torch.onnx import symbolic_helper as sh
    if sh._is_none(offs) or not sh._is_none(bias) or len(sh._get_tensor_sizes(self) or []) != 2:
        raise torch.onnx.errors.SymbolicValueError("_grouped_mm: only a 2-D input, 3-D weights and offsets export", self)
    return _grouped_mm_symbolic(g, self, mat2, offs)


def _histc_symbolic(g, self, bins, lo, hi):
    from torch.onnx import symbolic_helper as sh
    bins, lo, hi = sh._get_const(bins, "i", "bins"), sh._get_const(lo, "f", "min"), sh._get_const(hi, "f", "max")
    if not hi > lo:
        raise torch.onnx.errors.SymbolicValueError(
            f"histc: min={lo}, max={hi}: only a fixed range (min < max) exports", self)
    x = g.op("Reshape", g.op("Cast", self, to_i=1), _const(g, [-1]))
    f = lambda v: _const(g, v, torch.float32)  # noqa: E731
    idx = g.op("Floor", g.op("Mul", g.op("Sub", x, f(lo)), f(bins / (hi - lo))))
    idx = g.op("Min", idx, f(bins - 1.0))  # x == max falls in the last bin
    valid = g.op("And", g.op("GreaterOrEqual", x, f(lo)), g.op("LessOrEqual", x, f(hi)))
    hit = g.op("And", g.op("Equal", sh._unsqueeze_helper(g, idx, [1]), f([[float(b) for b in range(bins)]])),
               sh._unsqueeze_helper(g, valid, [1]))
    counts = sh._reducesum_helper(g, g.op("Cast", hit, to_i=1), axes_i=[0], keepdims_i=0)
    return g.op("CastLike", counts, self)


def _diff_symbolic(g, self, n, dim, prepend, append):
    from torch.onnx import symbolic_helper as sh
    n, dim = sh._get_const(n, "i", "n"), sh._get_const(dim, "i", "dim")
    parts = [t for t in (prepend, self, append) if not sh._is_none(t)]
    x = g.op("Concat", *parts, axis_i=dim) if len(parts) > 1 else self
    boolean = self.type().scalarType() == "Bool"
    for _ in range(n):
        hi = sh._slice_helper(g, x, axes=[dim], starts=[1], ends=[2**62])
        lo = sh._slice_helper(g, x, axes=[dim], starts=[0], ends=[-1])
        x = g.op("Xor", hi, lo) if boolean else g.op("Sub", hi, lo)
    return x


def _floor_divide_symbolic(g, self, other):
    """``a // b`` rounds toward -inf; torch's TorchScript exporter (opset 9 on) emits a truncating
    Div for it (``_trunc_divide``): -5.0 // 3 gave -1, not -2, in onnxruntime and trnsim alike.
    Floats: Floor(a / b). Integers keep torch's symbolic: shape arithmetic (transformers' MoE
    routing) goes through it, and its Div and Cast fold to constants where a Mod would not
    (the exported shapes became dynamic); integer operands of opposite signs still truncate."""
    from torch.onnx import symbolic_helper as sh
    if sh._is_fp(self) or sh._is_fp(other):
        return g.op("Floor", g.op("Div", self, other))
    from torch.onnx._internal.torchscript_exporter import symbolic_opset9
    return symbolic_opset9.floor_divide(g, self, other)


def install() -> None:
    """Registers the symbolic functions and the decomposition (idempotent). The transformers op
    is registered when transformers is already imported (a model from it exists); this never
    imports transformers on its own."""
    global _installed_aten, _installed_moe
    if not _installed_aten:
        _installed_aten = True
        torch.onnx.register_custom_op_symbolic("aten::diff", _diff_symbolic, _OPSET)
        torch.onnx.register_custom_op_symbolic("aten::histc", _histc_symbolic, _OPSET)
        torch.onnx.register_custom_op_symbolic("aten::_grouped_mm", _aten_grouped_mm_symbolic, _OPSET)
        torch.onnx.register_custom_op_symbolic("aten::floor_divide", _floor_divide_symbolic, _OPSET)
    if _installed_moe or "transformers" not in sys.modules:
        return
    try:
        importlib.import_module("transformers.integrations.moe")  # registers transformers' custom ops
    except ImportError:  # a transformers without MoE integration: nothing to add
        return
    op = getattr(getattr(torch.ops, "transformers", None), "grouped_mm_fallback", None)
    if op is not None:
        _installed_moe = True
        torch.onnx.register_custom_op_symbolic("transformers::grouped_mm_fallback", _grouped_mm_symbolic, _OPSET)
        from torch._decomp import decomposition_table
        decomposition_table.setdefault(op.default, _grouped_mm_reference)
