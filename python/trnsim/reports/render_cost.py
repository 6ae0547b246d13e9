"""`compare` and `tco` results: cost and energy bars side by side, each system or cost item on
the same axes, and the ratios to the first system that `compare` reports."""
from __future__ import annotations

import plotly.graph_objects as go

from trnsim.reports.fields import flat_numbers, matching
from trnsim.reports.section import Result, Section, Table, get, short

COST = ("usd",)
ENERGY = ("energy_j", "j_per", "_j", "joule")
POWER = ("power_w", "_w", "watt", "per_mw")
SPEED = ("per_s", "ttft", "tpot", "latency", "time_s")


def systems_of(d: dict) -> list[tuple[str, dict]]:
    """The per-system rows of a compare result (a list, or a dict keyed by system)."""
    rows = get(d, "systems", "results", "rows", "comparison")
    if isinstance(rows, dict):
        return [(str(k), v) for k, v in rows.items() if isinstance(v, dict)]
    if isinstance(rows, list):
        return [(str(get(v, "system", "name", default=f"system {i + 1}")), v) for i, v in enumerate(rows)
                if isinstance(v, dict)]
    return []


def _bars(title: str, entities: list[tuple[str, dict[str, float]]], needles, exclude=("ratio",)) -> go.Figure | None:
    keys = list(dict.fromkeys(k for _, nums in entities for k in matching(nums, *needles, exclude=exclude)))
    if not keys:
        return None
    fig = go.Figure()
    for name, nums in entities:
        fig.add_bar(name=name, x=keys, y=[nums.get(k) for k in keys])
    # Quantities of very different size share the axis: log keeps every bar visible.
    vals = [v for _, n in entities for k, v in n.items() if k in keys and v and v > 0]
    log = bool(vals) and max(vals) / min(vals) > 1e3
    return fig.update_layout(title=title, barmode="group", yaxis={"type": "log" if log else "linear"})


def render_compare(results: list[Result]) -> list[Section]:
    out = []
    for r in results:
        s = Section(f"Comparison: {r.label}")
        rows = systems_of(r.data)
        if not rows:
            s.skip("System comparison", "systems")
            out.append(s)
            continue
        ents = [(name, flat_numbers(v)) for name, v in rows]
        keys = list(dict.fromkeys(k for _, n in ents for k in n))
        s.tables.append(Table(["field"] + [n for n, _ in ents], [[k] + [short(n.get(k)) for _, n in ents] for k in keys]))
        for title, needles, exclude in (("Cost", COST, ("ratio",)), ("Energy", ENERGY, ("ratio",)),
                                        ("Power and tokens per MW", POWER, ("ratio",)),
                                        ("Latency and throughput", SPEED, ("ratio", "usd"))):
            fig = _bars(f"{title}: side by side", ents, needles, exclude)
            if fig is not None:
                s.figures.append(fig)
            else:
                s.skip(title, "|".join(needles))
        ratios = _bars("Ratio to the first system", ents, ("ratio",), ())
        if ratios is not None:
            s.figures.append(ratios)
        assumptions = get(r.data, "assumptions")
        if isinstance(assumptions, dict):
            s.tables.append(Table(["assumption", "value"], [[k, str(v)] for k, v in assumptions.items()]))
        elif isinstance(assumptions, list):
            s.notes += [str(a) for a in assumptions]
        out.append(s)
    return out


def render_tco(results: list[Result]) -> list[Section]:
    s = Section("Cost of ownership")
    ents = [(r.label, flat_numbers(r.data)) for r in results]
    keys = list(dict.fromkeys(k for _, n in ents for k in n))
    s.tables.append(Table(["field"] + [l for l, _ in ents], [[k] + [short(n.get(k)) for _, n in ents] for k in keys]))
    parts = []
    for label, nums in ents:  # cost items: *_usd fields that are not totals or per-unit rates
        items = {k: v for k, v in nums.items() if k.endswith("usd") and "total" not in k and "_per_" not in k}
        parts.append((label, items))
    if any(p for _, p in parts):
        fig = go.Figure()
        for item in dict.fromkeys(k for _, p in parts for k in p):
            fig.add_bar(name=item, x=[l for l, _ in parts], y=[p.get(item, 0) for _, p in parts])
        s.figures.append(fig.update_layout(title="Cost items", barmode="stack", yaxis={"title": "USD"}))
    for title, needles in (("Cost per unit", ("_per_",)), ("Energy and power", ENERGY + POWER)):
        fig = _bars(title, ents, needles if title == "Energy and power" else ("usd_per", "per_million"))
        if fig is not None:
            s.figures.append(fig)
        else:
            s.skip(title, "|".join(needles))
    return [s]
