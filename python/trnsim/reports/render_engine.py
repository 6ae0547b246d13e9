"""`kernel` and `run` results: engine utilisation, per-op breakdown, roofline, HBM/TensorE use."""
from __future__ import annotations

from collections import defaultdict
from functools import lru_cache

import numpy as np
import plotly.graph_objects as go

from trnsim.reports.section import Result, Section, Table, get, number

TOP_OPS = 20


@lru_cache(maxsize=None)
def chip_peaks(chip: str, dtype: str) -> tuple[float, float] | None:
    """(dense TFLOP/s of the chip at dtype, HBM GB/s) from its preset, or None if unknown."""
    try:
        from trnsim.hw import load_chip
        c = load_chip(chip)
    except Exception:
        return None
    tf = (c.get("dense_tflops") or {}).get(dtype) or (c.get("dense_tflops") or {}).get("bf16")
    bw = c.get("hbm_bandwidth_gbps")
    return (float(tf), float(bw)) if tf and bw else None


def roofline_trace(name: str, peak_tflops: float, bw_gbps: float, lo: float, hi: float) -> go.Scatter:
    ai = np.logspace(np.log10(lo), np.log10(hi), 60)
    return go.Scatter(x=ai, y=np.minimum(peak_tflops, ai * bw_gbps / 1e3), mode="lines", name=name,
                      line={"dash": "dash"}, hoverinfo="name")


def _roofline_layout(fig: go.Figure, title: str) -> go.Figure:
    return fig.update_layout(title=title, xaxis={"type": "log", "title": "arithmetic intensity (FLOP/byte of HBM)"},
                             yaxis={"type": "log", "title": "TFLOP/s"})


def render_kernel(results: list[Result]) -> list[Section]:
    s = Section("Kernels")
    s.tables.append(Table(["result", "program", "chip", "time (us)", "TFLOP/s", "of peak", "HBM GB/s", "of HBM", "bound"],
                          [[r.label, get(r.data, "program", "kernel", default=""), get(r.data, "chip", default=""),
                            (number(r.data.get("time_s")) or 0) * 1e6, r.data.get("tflops"), r.data.get("peak_fraction"),
                            r.data.get("bandwidth_gbps"), r.data.get("bandwidth_fraction"), get(r.data, "bound", default="")]
                           for r in results]))
    util = go.Figure()
    for r in results:
        units = r.data.get("units") or []
        if units:
            util.add_bar(name=r.label, x=[f"{u.get('engine')} c{u.get('core')} q{u.get('queue')}" for u in units],
                         y=[100 * (number(u.get("utilisation")) or 0) for u in units])
    if util.data:
        s.figures.append(util.update_layout(title="Engine utilisation (busy time / kernel time)", barmode="group",
                                            yaxis={"title": "%", "range": [0, 100]}))
    else:
        s.skip("Engine utilisation", "units")

    roof = go.Figure()
    ais = [number(r.data.get("arithmetic_intensity_flop_per_byte")) for r in results]
    ok = [r for r, a in zip(results, ais) if a and number(r.data.get("tflops")) and number(r.data.get("peak_tflops"))
          and number(r.data.get("hbm_bandwidth_gbps"))]
    if ok:
        lo = min(a for a in ais if a) / 10
        hi = max(max(a for a in ais if a) * 10, max(r.data.get("roofline_knee_flop_per_byte") or 1 for r in ok) * 10)
        for peaks in sorted({(r.data["peak_tflops"], r.data["hbm_bandwidth_gbps"]) for r in ok}):
            roof.add_trace(roofline_trace(f"roof {peaks[0]:.4g} TFLOP/s, {peaks[1]:.4g} GB/s", *peaks, lo, hi))
        for r in ok:
            roof.add_scatter(x=[r.data["arithmetic_intensity_flop_per_byte"]], y=[r.data["tflops"]], mode="markers",
                             marker={"size": 12}, name=r.label)
        s.figures.append(_roofline_layout(roof, "Roofline (cores used)"))
    else:
        s.skip("Roofline", "arithmetic_intensity_flop_per_byte/tflops/peak_tflops/hbm_bandwidth_gbps")

    frac = go.Figure()
    for key, name in (("peak_fraction", "TensorE (of peak FLOP/s)"), ("bandwidth_fraction", "HBM (of peak bandwidth)")):
        vals = [(r.label, number(r.data.get(key))) for r in results if number(r.data.get(key)) is not None]
        if vals:
            frac.add_bar(name=name, x=[v[0] for v in vals], y=[100 * v[1] for v in vals])
    if frac.data:
        s.figures.append(frac.update_layout(title="TensorE and HBM utilisation", barmode="group", yaxis={"title": "%"}))
    return [s]


def _op_time_by_type(ops: list[dict]) -> dict[str, float]:
    t: dict[str, float] = defaultdict(float)
    for o in ops:
        t[str(o.get("op", "?"))] += number(o.get("time_s")) or 0.0
    return dict(sorted(t.items(), key=lambda kv: -kv[1]))


def render_run(results: list[Result]) -> list[Section]:
    s = Section("Model runs")
    s.tables.append(Table(["result", "chip", "mode", "time (us)", "inferences/s", "HBM MB", "GFLOP", "tp"],
                          [[r.label, str(get(r.data, "system", "chip", default="")), str(r.data.get("mode", "")),
                            (number(r.data.get("time_s")) or 0) * 1e6, r.data.get("throughput_per_s"),
                            (number(r.data.get("hbm_bytes")) or 0) / 1e6, (number(r.data.get("tensor_flops")) or 0) / 1e9,
                            r.data.get("tp", 1)] for r in results]))
    eng = go.Figure()
    for r in results:
        engines = r.data.get("engines") or {}
        if engines:
            eng.add_bar(name=r.label, x=list(engines), y=[100 * (number(e.get("utilisation")) or 0) for e in engines.values()])
    if eng.data:
        s.figures.append(eng.update_layout(title="Engine utilisation over the run", barmode="group",
                                           yaxis={"title": "% busy"}))
    else:
        s.skip("Engine utilisation", "engines")

    by_type = go.Figure()
    for r in results:
        ops = r.data.get("ops") or []
        if ops:
            t = _op_time_by_type(ops)
            total = sum(t.values()) or 1.0
            by_type.add_bar(name=r.label, x=list(t)[:TOP_OPS], y=[100 * v / total for v in list(t.values())[:TOP_OPS]])
    if by_type.data:
        s.figures.append(by_type.update_layout(title="Per-op breakdown: share of op time by op type", barmode="group",
                                               yaxis={"title": "% of summed op time"}))
    else:
        s.skip("Per-op breakdown", "ops")

    for r in results[:4]:  # the slowest ops of each run; more runs would crowd the page
        ops = sorted(r.data.get("ops") or [], key=lambda o: -(number(o.get("time_s")) or 0))[:TOP_OPS]
        if ops:
            f = go.Figure(go.Bar(y=[f"{o.get('name')} ({o.get('op')})" for o in ops][::-1],
                                 x=[(number(o.get("time_s")) or 0) * 1e6 for o in ops][::-1], orientation="h", name=r.label))
            s.figures.append(f.update_layout(title=f"Slowest {len(ops)} ops: {r.label}", xaxis={"title": "us"},
                                             margin={"l": 220}, showlegend=False))

    s.figures += _run_roofline(results, s)
    s.figures += _run_utilisation(results, s)
    s.figures += _tp_breakdown(results)
    return [s]


def _peaks_of(r: Result):
    chip = r.data.get("chip")
    return chip_peaks(str(chip), str(r.data.get("dtype") or "bf16")) if chip else None


def _run_roofline(results: list[Result], s: Section) -> list[go.Figure]:
    fig = go.Figure()
    ais = []
    for r in results:
        pts = [(o, number(o.get("tensor_flops")), number(o.get("hbm_bytes")), number(o.get("time_s")))
               for o in r.data.get("ops") or []]
        pts = [(o, f, b, t) for o, f, b, t in pts if f and b and t]
        if not pts:
            continue
        ai = [f / b for _, f, b, _ in pts]
        ais += ai
        total = sum(t for *_, t in pts)
        fig.add_scatter(x=ai, y=[f / t / 1e12 for _, f, _, t in pts], mode="markers", name=r.label,
                        text=[f"{o.get('name')} ({o.get('op')})" for o, *_ in pts],
                        marker={"size": [6 + 24 * (t / total) ** 0.5 for *_, t in pts]},
                        hovertemplate="%{text}<br>%{x:.3g} FLOP/B, %{y:.3g} TFLOP/s<extra></extra>")
    if not fig.data:
        s.skip("Per-op roofline", "per-op tensor_flops/hbm_bytes")
        return []
    lo, hi = min(ais) / 10, max(ais) * 10
    for chip_dtype in sorted({(str(r.data.get("chip")), str(r.data.get("dtype") or "bf16")) for r in results}):
        p = chip_peaks(*chip_dtype)
        if p:
            fig.add_trace(roofline_trace(f"{chip_dtype[0]} roof ({chip_dtype[1]})", *p, min(lo, p[0] * 1e3 / p[1] / 10),
                                         max(hi, p[0] * 1e3 / p[1] * 10)))
        else:
            s.notes.append(f"Roofline: chip {chip_dtype[0]} is not a known preset, its roof is not drawn.")
    if any(not r.data.get("dtype") for r in results):
        s.notes.append("Roofline: the run names no dtype; the roof is the chip's bf16 dense peak.")
    return [_roofline_layout(fig, "Roofline: each op by arithmetic intensity (marker area ~ time)")]


def _run_utilisation(results: list[Result], s: Section) -> list[go.Figure]:
    fig = go.Figure()
    te, hbm, labels = [], [], []
    for r in results:
        p, t = _peaks_of(r), number(r.data.get("time_s"))
        if not p or not t:
            continue
        labels.append(r.label)
        te.append(100 * (number(r.data.get("tensor_flops")) or 0) / t / 1e12 / p[0])
        hbm.append(100 * (number(r.data.get("hbm_bytes")) or 0) / t / 1e9 / p[1])
    if not labels:
        s.skip("HBM and TensorE utilisation", "chip (a known preset) with tensor_flops/hbm_bytes")
        return []
    fig.add_bar(name="TensorE (of the chip's dense peak)", x=labels, y=te)
    fig.add_bar(name="HBM (of the chip's bandwidth)", x=labels, y=hbm)
    return [fig.update_layout(title="TensorE and HBM utilisation, whole run", barmode="group", yaxis={"title": "%"})]


def _tp_breakdown(results: list[Result]) -> list[go.Figure]:
    tp = [r for r in results if number(r.data.get("compute_time_s")) is not None]
    if not tp:
        return []
    fig = go.Figure()
    for key, name in (("compute_time_s", "compute"), ("exposed_communication_time_s", "exposed communication")):
        fig.add_bar(name=name, x=[r.label for r in tp], y=[(number(r.data.get(key)) or 0) * 1e6 for r in tp])
    return [fig.update_layout(title="Tensor-parallel run: compute and exposed communication", barmode="stack",
                              yaxis={"title": "us"})]
