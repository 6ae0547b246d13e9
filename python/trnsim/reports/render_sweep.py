"""Sweeps (a `trnsim sweep` Parquet file, or a `sweep` JSON with its rows): Pareto fronts of
cost vs p99 latency and energy vs latency, each axis against the headline time, failed points."""
from __future__ import annotations

import plotly.graph_objects as go

from trnsim.reports.section import Result, Section, Table, number

META = {"point_id", "status", "error", "wall_s", "command", "seed"}


def pareto(points: list[tuple[float, float, int]], maximise_y: bool = False) -> list[tuple[float, float, int]]:
    """The points no other point beats on both x (lower) and y (lower, or higher with maximise_y)."""
    sign = -1 if maximise_y else 1
    best = float("inf")
    front = []
    for x, y, i in sorted(points, key=lambda p: (p[0], sign * p[1])):
        if sign * y < best:
            best = sign * y
            front.append((x, y, i))
    return front


def rows_of(d: dict) -> list[dict]:
    rows = d.get("rows") or d.get("points") or d.get("results") or []
    return [r for r in rows if isinstance(r, dict)]


def _numeric_cols(rows: list[dict]) -> list[str]:
    cols = dict.fromkeys(k for r in rows[:50] for k in r)
    return [c for c in cols if c not in META and any(number(r.get(c)) is not None and not isinstance(r.get(c), bool)
                                                    for r in rows)]


def _pick(cols: list[str], *needles: str, suffix: str = "") -> str | None:
    for n in needles:
        for c in cols:
            if n in c and c.endswith(suffix):
                return c
    return None


def _front_figure(title, rows, xcol, ycol, axes, maximise_y=False) -> go.Figure | None:
    pts = [(number(r.get(xcol)), number(r.get(ycol)), i) for i, r in enumerate(rows)]
    pts = [p for p in pts if p[0] is not None and p[1] is not None]
    if len(pts) < 2:
        return None
    text = ["<br>".join(f"{a}={rows[i].get(a)}" for a in axes) for _, _, i in pts]
    fig = go.Figure()
    fig.add_scatter(x=[p[0] for p in pts], y=[p[1] for p in pts], mode="markers", name="points", text=text,
                    marker={"color": "#9bb"}, hovertemplate="%{text}<br>%{x:.4g}, %{y:.4g}<extra></extra>")
    front = pareto(pts, maximise_y)
    fig.add_scatter(x=[p[0] for p in front], y=[p[1] for p in front], mode="lines+markers", name="Pareto front",
                    text=["<br>".join(f"{a}={rows[i].get(a)}" for a in axes) for *_, i in front],
                    marker={"size": 10, "color": "#d62728"}, hovertemplate="%{text}<extra>front</extra>")
    return fig.update_layout(title=title, xaxis={"title": xcol}, yaxis={"title": ycol})


def render_sweep(results: list[Result]) -> list[Section]:
    out = []
    for r in results:
        s = Section(f"Sweep: {r.label}")
        rows = rows_of(r.data)
        ok = [x for x in rows if x.get("status", "ok") == "ok"]
        failed = [x for x in rows if x.get("status", "ok") != "ok"]
        axes = list(r.data.get("axes") or []) or [c for c in (r.data.get("columns") or [])
                                                    if c.startswith("axis_")] or _guess_axes(ok)
        s.notes.append(f"{len(rows)} points, {len(ok)} succeeded, {len(failed)} failed; axes: {', '.join(axes) or '?'}.")
        cols = _numeric_cols(ok)
        lat = _pick(cols, "p99", suffix="_s") or _pick(cols, "e2e_s", "tpot_s", "ttft_s", "step_time_s") or \
            ("time_s" if "time_s" in cols else None)
        cost = _pick(cols, "usd_per_million", "usd")
        energy = _pick(cols, "energy_per_output_token_j", "j_per_token", "j_per", "energy_j")
        thr = _pick(cols, "output_tokens_per_s", "tokens_per_s", "per_s", "busbw_gbps", "tflops")
        drawn = False
        for title, x, y, maxy in (("Pareto front: cost vs p99 latency", lat, cost, False),
                                  ("Pareto front: energy vs latency", lat, energy, False),
                                  ("Pareto front: throughput vs latency", lat, thr, True)):
            if x and y:
                fig = _front_figure(title, ok, x, y, axes, maxy)
                if fig is not None:
                    s.figures.append(fig)
                    drawn = True
        if not drawn:
            s.notes.append("Pareto fronts: the points have no latency/cost/energy/throughput columns in common.")
        if lat:
            for a in axes:
                vals = [number(x.get(a)) for x in ok]
                if sum(v is not None for v in vals) >= 2 and len(set(vals)) >= 2:
                    fig = go.Figure(go.Scatter(x=vals, y=[number(x.get(lat)) for x in ok], mode="markers",
                                               text=["<br>".join(f"{b}={x.get(b)}" for b in axes) for x in ok]))
                    s.figures.append(fig.update_layout(title=f"{lat} vs {a}", xaxis={"title": a}, yaxis={"title": lat}))
        if failed:
            s.tables.append(Table(["point"] + axes + ["error"],
                                  [[str(x.get("point_id", ""))] + [str(x.get(a)) for a in axes] + [str(x.get("error", ""))[:200]]
                                   for x in failed[:50]]))
        out.append(s)
    return out


def _guess_axes(rows: list[dict]) -> list[str]:
    """Columns (inputs) that vary across points, when the file does not name its axes."""
    if not rows:
        return []
    return [c for c in rows[0] if c not in META and not c.endswith(("_s", "_bytes", "_gbps", "_usd", "_j", "_w"))
            and len({str(r.get(c)) for r in rows}) > 1][:6]
