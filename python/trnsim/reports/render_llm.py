"""`llm` results: decode-step breakdown, TTFT/TPOT against batch and length, memory per core."""
from __future__ import annotations

from collections import defaultdict

import plotly.graph_objects as go

from trnsim.reports.fields import flat_numbers
from trnsim.reports.section import Result, Section, Table, get, number

BREAKDOWN_FIELDS = ("decode_step_breakdown", "decode_breakdown", "breakdown.decode", "breakdown", "decode_step")


def param(d: dict, name: str):
    """An input of the run, top level or under layout/args/config/workload (`input` is also `input_tokens`)."""
    return get(d, name, f"{name}_tokens" if name in ("input", "output") else name, f"layout.{name}", f"args.{name}",
               f"config.{name}", f"workload.{name}", f"inputs.{name}")


def breakdown(d: dict, fields=BREAKDOWN_FIELDS) -> dict[str, float]:
    """{part: seconds} of a breakdown given as {"matmul_s": ..} or {"matmul": {"time_s": ..}} or a list of parts."""
    for f in fields:
        v = get(d, f)
        if isinstance(v, list):
            v = {str(get(p, "name", "part", "kind", default=i)): get(p, "time_s", default=0) for i, p in enumerate(v)
                 if isinstance(p, dict)}
        if isinstance(v, dict):
            out = {}
            for k, x in v.items():
                t = number(get(x, "time_s")) if isinstance(x, dict) else number(x) if not isinstance(x, bool) else None
                if t is not None and (k.endswith("_s") or isinstance(x, dict) or f == "decode_breakdown"):
                    out[k[:-2] if k.endswith("_s") else k] = t
            out.pop("total", None)
            out.pop("time", None)
            if out:
                return out
    return {}


def memory_parts(d: dict) -> dict[str, float]:
    """Bytes per core by part ({"weights": .., "kv_cache": ..}), or {"total": ..} when only the total is given."""
    v = get(d, "memory_per_core", "memory_bytes_per_core", "memory_per_core_bytes", "memory.per_core_bytes", "memory")
    if isinstance(v, dict):
        parts = {k[:-len("_bytes")]: x for k, x in flat_numbers(v).items() if k.endswith("_bytes")}
        parts.pop("total", None)
        parts.pop("capacity", None)
        return parts
    # parts as top-level fields: weight_bytes_per_core, kv_cache_bytes_per_core, activation_bytes_per_core
    parts = {k[:-len("_bytes_per_core")]: float(x) for k, x in d.items()
             if k.endswith("_bytes_per_core") and k not in ("memory_bytes_per_core", "hbm_bytes_per_core")
             and number(x) is not None}
    if parts:
        return parts
    x = number(v)
    return {"total": x} if x is not None else {}


def stacked(title: str, labels: list[str], parts: list[dict[str, float]], scale: float, unit: str) -> go.Figure:
    fig = go.Figure()
    names = list(dict.fromkeys(k for p in parts for k in p))
    for n in names:
        fig.add_bar(name=n, x=labels, y=[p.get(n, 0) * scale for p in parts])
    return fig.update_layout(title=title, barmode="stack", yaxis={"title": unit})


def _curve(results: list[Result], x_name: str, y_field: str, group_by: tuple[str, ...]) -> go.Figure | None:
    """y against x, one line per combination of the other inputs, when x takes >= 2 values."""
    lines: dict[tuple, list[tuple[float, float]]] = defaultdict(list)
    for r in results:
        x, y = number(param(r.data, x_name)), number(r.data.get(y_field))
        if x is not None and y is not None:
            lines[tuple(str(param(r.data, g)) for g in group_by)].append((x, y * 1e3))
    lines = {k: sorted(v) for k, v in lines.items() if len({p[0] for p in v}) >= 2}
    if not lines:
        return None
    fig = go.Figure()
    for k, pts in lines.items():
        name = ", ".join(f"{g} {v}" for g, v in zip(group_by, k) if v != "None") or y_field
        fig.add_scatter(x=[p[0] for p in pts], y=[p[1] for p in pts], mode="lines+markers", name=name)
    return fig


def render_llm(results: list[Result]) -> list[Section]:
    s = Section("LLM inference")
    s.tables.append(Table(
        ["result", "model", "system", "tp", "batch", "input", "output", "TTFT (ms)", "TPOT (ms)", "tokens/s", "e2e (s)"],
        [[r.label, str(param(r.data, "model") or ""), str(param(r.data, "system") or ""), param(r.data, "tp"),
          param(r.data, "batch"), param(r.data, "input"), param(r.data, "output"),
          (number(r.data.get("ttft_s")) or 0) * 1e3, (number(r.data.get("tpot_s")) or 0) * 1e3,
          r.data.get("output_tokens_per_s"), get(r.data, "e2e_s", "time_s")] for r in results]))
    labels = [r.label for r in results]
    parts = [breakdown(r.data) for r in results]
    if any(parts):
        s.figures.append(stacked("Decode step breakdown (what bounds a step)", labels, parts, 1e3, "ms per decode step"))
    else:
        s.skip("Decode step breakdown", "decode_step_breakdown")
    prefill = [breakdown(r.data, ("prefill_breakdown", "breakdown.prefill")) for r in results]
    if any(prefill):
        s.figures.append(stacked("Prefill breakdown (TTFT of the batch)", labels, prefill, 1e3, "ms"))
    for r in results[:4]:
        nodes = [n for n in r.data.get("decode_step_nodes") or [] if isinstance(n, dict) and number(n.get("time_s"))]
        if nodes:
            t = [(number(n["time_s"]) or 0) * (number(n.get("repeat")) or 1) * 1e3 for n in nodes]
            names = [f"{n.get('node')}" + (f" x{n.get('repeat')}" if n.get("repeat", 1) != 1 else "") for n in nodes]
            fig = go.Figure(go.Bar(y=names[::-1], x=t[::-1], orientation="h", name=r.label,
                                   text=[str(n.get("category", "")) for n in nodes][::-1]))
            s.figures.append(fig.update_layout(title=f"Decode step by node (all layers): {r.label}",
                                               xaxis={"title": "ms per decode step"}, margin={"l": 280}))

    for f, name in (("ttft_s", "TTFT (prefill of the batch)"), ("tpot_s", "TPOT (mean decode step)")):
        vals = [number(r.data.get(f)) for r in results]
        if any(v is not None for v in vals):
            s.figures.append(go.Figure(go.Bar(x=labels, y=[(v or 0) * 1e3 for v in vals], name=name))
                             .update_layout(title=name, yaxis={"title": "ms"}))
        else:
            s.skip(name, f)

    for x, xt in (("batch", "batch (sequences)"), ("input", "input length (tokens)")):
        others = tuple(g for g in ("model", "system", "tp", "batch", "input") if g != x)
        for f, name in (("ttft_s", "TTFT"), ("tpot_s", "TPOT")):
            fig = _curve(results, x, f, others)
            if fig is not None:
                s.figures.append(fig.update_layout(title=f"{name} vs {x}", xaxis={"title": xt, "type": "log"},
                                                   yaxis={"title": f"{name} (ms)"}))
    if len(results) > 1 and not any(f.layout.title.text.endswith(("batch", "input")) for f in s.figures):
        s.notes.append("TTFT/TPOT curves need results that differ in batch or input length (e.g. a sweep).")

    mem = [memory_parts(r.data) for r in results]
    if any(mem):
        s.figures.append(stacked("Memory per NeuronCore", labels, mem, 1 / 2**30, "GiB"))
    else:
        s.skip("Memory per core", "memory_bytes_per_core")
    return [s]
