"""Rewrites of a Dynamo FX graph before the ONNX export, each where the TorchScript exporter or
the trnsim compiler lacks the original form:

- ``rewrite_attention``: ``scaled_dot_product_attention(enable_gqa=True)`` (the exporter lacks
  it) as a Gather of the key/value heads, and ``is_causal=True`` (exported through Trilu) as an
  explicit position mask;
- ``functionalize``: in-place updates of graph inputs (a static KV cache's ``index_copy_``, its
  length's ``add_``) as functional ops whose new values become extra outputs; ``aliased_in_place``
  says when a graph's in-place updates share memory with a view, which that rewrite cannot follow.
"""
from __future__ import annotations

import operator

import torch

__all__ = ["rewrite_attention", "functionalize", "aliased_in_place"]

# Methods and functions whose result may share memory with their first argument.
_VIEW_METHODS = {"view", "view_as", "reshape", "reshape_as", "t", "transpose", "permute", "expand", "expand_as",
                 "narrow", "select", "unsqueeze", "squeeze", "flatten", "unflatten", "as_strided", "diagonal",
                 "split", "chunk", "unbind", "movedim", "moveaxis", "swapaxes", "swapdims", "unfold", "detach",
                 "contiguous", "__getitem__", "real", "imag", "view_as_real", "view_as_complex"}
_VIEW_FUNCTIONS = {torch.transpose, torch.permute, torch.reshape, torch.narrow, torch.select, torch.squeeze,
                   torch.unsqueeze, torch.flatten, torch.t, torch.split, torch.chunk, torch.unbind, torch.movedim,
                   torch.diagonal, torch.swapaxes, torch.swapdims, torch.as_strided, torch.detach, getattr}


def _gqa_heads(q_heads: int, rep: int) -> torch.Tensor:
    return torch.arange(q_heads) // rep


def rewrite_attention(gm: torch.fx.GraphModule) -> None:
    """scaled_dot_product_attention(enable_gqa=True): the exporter lacks it; the key and value
    heads are repeated to the query heads first (what enable_gqa means), then plain SDPA."""
    import torch.nn.functional as F
    sdpa = {F.scaled_dot_product_attention, torch.ops.aten.scaled_dot_product_attention.default}
    changed = False
    for node in list(gm.graph.nodes):
        if node.op == "call_function" and node.target in sdpa and node.kwargs.get("is_causal"):
            changed |= _causal_as_mask(gm, node)
        if node.op != "call_function" or node.target not in sdpa or not node.kwargs.get("enable_gqa"):
            continue
        q, k, v = node.args[:3]
        qv, kv = q.meta.get("example_value"), k.meta.get("example_value")
        if qv is None or kv is None:
            continue
        rep = int(qv.shape[-3]) // int(kv.shape[-3])
        with gm.graph.inserting_before(node):  # query head h reads key/value head h // rep (a Gather)
            heads = gm.graph.call_function(_gqa_heads, (int(qv.shape[-3]), rep))
            k2 = gm.graph.call_function(torch.index_select, (k, -3, heads))
            v2 = gm.graph.call_function(torch.index_select, (v, -3, heads))
        node.args = (q, k2, v2) + tuple(node.args[3:])
        node.kwargs = {k_: v_ for k_, v_ in node.kwargs.items() if k_ != "enable_gqa"}
        changed = True
    if changed:
        gm.recompile()


def _index_copy(x: torch.Tensor, dim: int, index: torch.Tensor, src: torch.Tensor) -> torch.Tensor:
    """Functional ``x.index_copy(dim, index, src)`` from ops the compiler has: one position
    (a decode step) is a Where on the position mask; several (a prefill) a one-hot matrix of the
    written positions (Equal) and a matmul that places ``src`` there (exact: one product with
    1.0 per element) plus the kept part of ``x``."""
    n = x.shape[dim]
    dim = dim % x.dim()
    if src.shape[dim] == 1:  # one new position (a decode step): a select
        mask = (torch.arange(n) == index.reshape(1)).reshape([n] + [1] * (x.dim() - dim - 1))
        return torch.where(mask, src, x)
    onehot = (torch.arange(n).unsqueeze(-1) == index.reshape(1, -1)).to(x.dtype)  # [n, m]
    xt, st = x.movedim(dim, -1), src.movedim(dim, -1)
    return (xt * (1 - onehot.sum(-1)) + st @ onehot.transpose(0, 1)).movedim(-1, dim)


def _in_place(method: str) -> bool:
    return method.endswith("_") and not method.endswith("__")


def _is_view(node: torch.fx.Node) -> bool:
    if node.op == "call_method":
        return node.target in _VIEW_METHODS
    if node.op != "call_function":
        return False
    if node.target is operator.getitem:  # a tensor's slice, not an item of a tuple
        src = node.args[0]
        return isinstance(src, torch.fx.Node) and isinstance(src.meta.get("example_value"), torch.Tensor)
    return node.target in _VIEW_FUNCTIONS


def aliased_in_place(gm: torch.fx.GraphModule) -> str | None:
    """Why ``functionalize`` cannot take this graph, or None: an in-place method whose target is
    a view (``y[:, :2].mul_(0)``, ``y.t().add_(1)``), or whose target has a view that another
    node reads (``v = y.view(-1); y.add_(1); v``). The rewrite redirects the later uses of the
    updated tensor only, so the update was lost there (a silent wrong answer)."""
    order = {n: i for i, n in enumerate(gm.graph.nodes)}

    def read_after(view: torch.fx.Node, at: int) -> bool:  # the view, or a view of it, read past `at`
        return any(order[u] > at or (_is_view(u) and read_after(u, at)) for u in view.users)

    for node in gm.graph.nodes:
        if node.op != "call_method" or not _in_place(node.target) or not node.args:
            continue
        target = node.args[0]
        if not isinstance(target, torch.fx.Node):
            continue
        if _is_view(target):
            return f"an in-place {node.target} on a view ({target.name}) of another tensor"
        # A view taken after the update is redirected with the other later uses; one taken
        # before it and read after it would keep the old value.
        views = [u for u in target.users if order[u] < order[node] and _is_view(u) and read_after(u, order[node])]
        if views:
            return f"an in-place {node.target} on {target.name}, which is read after it through an earlier view ({views[0].name})"
    return None


def functionalize(gm: torch.fx.GraphModule) -> list[int]:
    """A static KV cache (transformers' StaticCache, Neuron's layout: a fixed-length cache per
    bucket, written at the new positions) updates graph inputs in place: ``index_copy_`` of the
    new keys and values, ``add_`` of its length counter. Each in-place method becomes its
    functional twin (_index_copy, ``add``, ...), later uses read the new value, and the new values
    of mutated graph inputs are appended to the outputs; returns those inputs' positions (the
    caller copies the values back into PyTorch's tensors after each run)."""
    nodes = list(gm.graph.nodes)
    order = {n: i for i, n in enumerate(nodes)}
    placeholders = [n for n in nodes if n.op == "placeholder"]
    root: dict[torch.fx.Node, torch.fx.Node] = {}
    latest: dict[torch.fx.Node, torch.fx.Node] = {}
    for node in nodes:
        if node.op != "call_method" or not _in_place(node.target):
            continue
        target = node.args[0]
        with gm.graph.inserting_before(node):
            if node.target == "index_copy_":
                new = gm.graph.call_function(_index_copy, tuple(node.args), dict(node.kwargs))
            else:  # add_ -> add: the out-of-place twin
                new = gm.graph.call_method(node.target[:-1], tuple(node.args), dict(node.kwargs))
        order[new] = order[node]
        for user in list(target.users):
            if user is not new and user is not node and order.get(user, -1) > order[node]:
                user.replace_input_with(target, new)
        node.replace_all_uses_with(new)
        gm.graph.erase_node(node)
        base = root.get(target, target)
        root[new] = base
        latest[base] = new
    mutated = [(placeholders.index(b), v) for b, v in latest.items() if b in placeholders]
    if latest:
        out = next(n for n in gm.graph.nodes if n.op == "output")
        result = out.args[0]
        extra = tuple(v for _, v in mutated)
        out.args = ((tuple(result) if isinstance(result, (tuple, list)) else (result,)) + extra,)
        gm.recompile()
    return [i for i, _ in mutated]


def _causal_as_mask(gm: torch.fx.GraphModule, node: torch.fx.Node) -> bool:
    """SDPA(is_causal=True) exports through Trilu; the same mask written as a comparison of
    positions (key j visible to query i when j <= i: PyTorch's top-left alignment, the
    ``tril(diagonal=0)`` of its documentation) exports to Range and LessOrEqual."""
    import operator
    if len(node.args) > 3 or node.kwargs.get("attn_mask") is not None:
        return False
    q, k = node.args[0], node.args[1]
    g = gm.graph
    with g.inserting_before(node):
        lq = g.call_method("size", (q, -2))
        lk = g.call_method("size", (k, -2))
        rows = g.call_function(torch.arange, (lq,))
        cols = g.call_function(torch.arange, (lk,))
        mask = g.call_function(operator.le, (g.call_function(operator.getitem, (cols, (None, slice(None)))),
                                             g.call_function(operator.getitem, (rows, (slice(None), None)))))
    kwargs = dict(node.kwargs)
    kwargs.pop("is_causal")
    kwargs["attn_mask"] = mask
    node.kwargs = kwargs
    return True
