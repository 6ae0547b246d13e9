"""Timing-mode export without weight bytes: weights become ONNX graph inputs (shapes and dtypes).

A model built on PyTorch's meta device (``with torch.device("meta"): AutoModelForCausalLM
.from_config(cfg)``) has no values at all, and a model over 2 GB cannot be one protobuf with its
weights. The timing mode needs neither: it simulates instruction streams, not data. So the
TorchScript exporter traces the model on the device of its parameters (meta: fake tensors that
carry shapes only) with ``export_params=False``, which makes every parameter and buffer a graph
input; constants that the trace created on the meta device (scalars, RoPE tables) are given
zeros of their shape, which only the timing mode may do (no value reaches an output it reports).

The graph is then rewritten so that the weights look to the compiler as initializers do:
a Transpose or Cast applied to a weight alone (what constant folding does to an initializer at
export) is folded into the input's shape and type, and float weights take the dtype policy's
weight format (bf16 under "bf16", fp8 e4m3 under "fp8"), so HBM traffic and matmul shapes are
those of the program with real weights.
"""
from __future__ import annotations

import contextlib
import io
import warnings
from typing import Sequence

import torch

import trnsim

__all__ = ["export_weightless", "is_meta_module", "meta_constants"]

_WEIGHT_TYPE = {"bf16": 16, "fp8": 17}  # ONNX TensorProto BFLOAT16, FLOAT8E4M3FN
_FLOAT_TYPES = (1, 10, 11, 16)           # FLOAT, FLOAT16, DOUBLE, BFLOAT16


def is_meta_module(module: torch.nn.Module) -> bool:
    """Whether any parameter or buffer of ``module`` lives on the meta device."""
    return any(t.is_meta for t in module.parameters()) or any(t.is_meta for t in module.buffers())


@contextlib.contextmanager
def meta_constants():
    """While exporting: a constant the trace recorded on the meta device (it has no data) is
    emitted as zeros of its shape and dtype. Used only for timing-mode exports."""
    from torch.onnx._internal.torchscript_exporter import symbolic_helper as sh
    original = sh._node_get

    def node_get(node, key):
        value = original(node, key)
        if isinstance(value, torch.Tensor) and value.is_meta:
            return torch.zeros(value.shape, dtype=value.dtype)
        return value

    sh._node_get = node_get
    try:
        yield
    finally:
        sh._node_get = original


def _to_device(x, device: torch.device):
    return x.to(device) if isinstance(x, torch.Tensor) and x.device != device else x


def export_weightless(module: torch.nn.Module, example_inputs: Sequence[torch.Tensor], opset: int,
                      dtype: str) -> tuple[bytes, list[str], object]:
    """Exports ``module`` for the timing mode with its weights as graph inputs (no bytes);
    returns (ONNX bytes, the names of the user inputs in order, the module's outputs as the
    trace computed them: meta tensors for a meta model, which cannot run eagerly where a model
    reads a value, e.g. transformers' check that a mask is all ones)."""
    meta = is_meta_module(module)
    if meta:
        example_inputs = [_to_device(x, torch.device("meta")) for x in example_inputs]
    names = [f"input_{i}" for i in range(len(example_inputs))]
    buf = io.BytesIO()
    guard = meta_constants() if meta else contextlib.nullcontext()
    captured = []
    hook = module.register_forward_hook(lambda _m, _i, out: captured.append(out))
    with warnings.catch_warnings(), torch.no_grad(), guard:
        warnings.simplefilter("ignore")
        try:
            torch.onnx.export(module, tuple(example_inputs), buf, dynamo=False, opset_version=opset,
                              input_names=names, export_params=False, keep_initializers_as_inputs=True,
                              do_constant_folding=not meta)
        except Exception as e:
            msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise trnsim.UnsupportedError(f"unsupported: the PyTorch graph could not be exported to ONNX "
                                          f"(opset {opset}, timing mode, weights as shapes): {msg}") from e
        finally:
            hook.remove()
    return _weights_as_initializers(buf.getvalue(), set(names), dtype), names, captured[0] if captured else None


def _weights_as_initializers(onnx_bytes: bytes, user_inputs: set[str], dtype: str) -> bytes:
    """Folds Transpose/Cast chains applied to weight inputs alone into the inputs, and gives
    float weights the policy's weight dtype (see the module docstring)."""
    import onnx
    model = onnx.load_from_string(onnx_bytes)
    g = model.graph
    weights = {i.name: i for i in g.input if i.name not in user_inputs}
    consumers: dict[str, list] = {}
    for n in g.node:
        for x in n.input:
            consumers.setdefault(x, []).append(n)
    changed = True
    while changed:
        changed = False
        for name in list(weights):
            users = consumers.get(name, [])
            if len(users) != 1 or users[0].op_type not in ("Transpose", "Cast") or len(users[0].input) != 1:
                continue
            node, vi = users[0], weights.pop(name)
            tt = vi.type.tensor_type
            dims = [d.dim_value for d in tt.shape.dim]
            attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
            elem = tt.elem_type
            if node.op_type == "Transpose":
                perm = list(attrs.get("perm", reversed(range(len(dims)))))
                dims = [dims[p] for p in perm]
            else:
                elem = int(attrs["to"])
            new = onnx.helper.make_tensor_value_info(node.output[0], elem, dims)
            g.input.remove(vi)
            g.input.append(new)
            g.node.remove(node)
            weights[node.output[0]] = new
            changed = True
    wtype = _WEIGHT_TYPE.get(dtype)
    if wtype is not None:
        for vi in weights.values():
            if vi.type.tensor_type.elem_type in _FLOAT_TYPES and _feeds_matmul(vi.name, consumers):
                vi.type.tensor_type.elem_type = wtype
    return model.SerializeToString()


def _feeds_matmul(name: str, consumers: dict) -> bool:
    """Whether a weight is a matmul operand (the dtype policy's weight format applies to those;
    norms' scales and biases stay fp32, as with initializers)."""
    return any(n.op_type in ("MatMul", "Gemm") for n in consumers.get(name, []))
