"""`collective` results: bus bandwidth and time against message size, one line per algorithm
(as nccom-test / nccl-tests plots show them)."""
from __future__ import annotations

from collections import defaultdict

import plotly.graph_objects as go

from trnsim.reports.section import Result, Section, Table, number


def _series(results: list[Result]) -> dict[tuple, list[dict]]:
    lines: dict[tuple, list[dict]] = defaultdict(list)
    for r in results:
        d = r.data
        key = (r.label, d.get("op", "?"), d.get("algorithm", "?"), d.get("system", "?"), d.get("systems", 1),
               d.get("ranks", "?"))
        lines[key].append(d)
    return {k: sorted(v, key=lambda d: number(d.get("size_bytes")) or 0) for k, v in lines.items()}


def _name(key: tuple, many_labels: bool) -> str:
    label, op, alg, system, systems, ranks = key
    sysname = f"{systems}x {system}" if systems and systems != 1 else system
    return (f"{label}: " if many_labels else "") + f"{op} {alg} ({sysname}, {ranks} ranks)"


def render_collective(results: list[Result]) -> list[Section]:
    s = Section("Collectives")
    lines = _series(results)
    many = len({k[0] for k in lines}) > 1
    busbw, time = go.Figure(), go.Figure()
    rows = []
    for key, pts in lines.items():
        pts = [p for p in pts if number(p.get("size_bytes"))]
        if not pts:
            continue
        x = [p["size_bytes"] for p in pts]
        name = _name(key, many)
        if all(number(p.get("busbw_gbps")) is not None for p in pts):
            busbw.add_scatter(x=x, y=[p["busbw_gbps"] for p in pts], mode="lines+markers", name=name)
        time.add_scatter(x=x, y=[(number(p.get("time_s")) or 0) * 1e6 for p in pts], mode="lines+markers", name=name)
        big = pts[-1]
        rows.append([name, big["size_bytes"], (number(big.get("time_s")) or 0) * 1e6, big.get("algbw_gbps"),
                     big.get("busbw_gbps")])
    if busbw.data:
        s.figures.append(busbw.update_layout(title="Bus bandwidth vs message size",
                                             xaxis={"type": "log", "title": "size (bytes)"},
                                             yaxis={"title": "busbw (GB/s)"}))
    else:
        s.skip("Bus bandwidth", "busbw_gbps")
    if time.data:
        s.figures.append(time.update_layout(title="Time vs message size", xaxis={"type": "log", "title": "size (bytes)"},
                                            yaxis={"type": "log", "title": "time (us)"}))
    s.tables.append(Table(["collective", "largest size (bytes)", "time (us)", "algbw (GB/s)", "busbw (GB/s)"], rows))
    return [s]
