"""`compare` and `tco` results: cost and energy bars side by side, each system or cost item on
the same axes, and the ratios to the first system that `compare` reports."""
from __future__ import annotations

import plotly.graph_objects as go

from trnsim.reports.fields import flat_numbers, matching
from trnsim.reports.section import Result, Section, Table, get, short

COST = ("usd",)
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#d62728")
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


def _unit_label(r: Result) -> str:
    system = get(r.data, "system")
    return f"{r.label} ({system})" if system and str(system) not in r.label else r.label


def render_tco(results: list[Result]) -> list[Section]:
    s = Section("Cost of ownership")
    ents = [(_unit_label(r), flat_numbers(r.data)) for r in results]
    keys = list(dict.fromkeys(k for _, n in ents for k in n))
    s.tables.append(Table(["field"] + [l for l, _ in ents], [[k] + [short(n.get(k)) for _, n in ents] for k in keys]))
    for r in results:
        for where in ("note", "cloud.note", "owned.note"):
            if isinstance(get(r.data, where), str):
                s.notes.append(f"{r.label}: {get(r.data, where)}")
    # an instance-hour: the owned fleet's items stacked, beside the cloud price
    hour = go.Figure()
    colour: dict[str, str] = {}  # one colour per cost item across results
    for label, n in ents:
        items = {k.split(".")[-1][:-len("_usd_per_hour")]: v for k, v in n.items()
                 if k.endswith("_usd_per_hour") and not k.endswith("usd_per_instance_hour")}
        cloud = n.get("cloud.usd_per_instance_hour")
        for item, v in list(items.items()) + ([("cloud price", cloud)] if cloud else []):
            first = item not in colour
            colour.setdefault(item, PALETTE[len(colour) % len(PALETTE)])
            x = f"{label} cloud" if item == "cloud price" else f"{label} owned"
            hour.add_bar(name=item, x=[x], y=[v], legendgroup=item, showlegend=first, marker_color=colour[item])
    if hour.data:
        s.figures.append(hour.update_layout(title="Cost of an instance-hour: owned (by item) and cloud", barmode="stack",
                                            yaxis={"title": "USD per instance-hour"}))
    per_m = go.Figure()
    for src in ("cloud", "owned"):
        vals = [(l, n.get(f"{src}.usd_per_million_tokens", n.get(f"{src}.usd_per_million_inferences"))) for l, n in ents]
        if any(v for _, v in vals):
            per_m.add_bar(name=src, x=[l for l, _ in vals], y=[v or 0 for _, v in vals])
    if per_m.data:
        s.figures.append(per_m.update_layout(title="USD per million tokens", barmode="group", yaxis={"title": "USD"}))
    old = [(l, {k: v for k, v in n.items() if k.endswith("_usd") and "." not in k and "total" not in k
                and "_per_" not in k}) for l, n in ents]
    if any(p for _, p in old):  # cost items given as totals (*_usd)
        fig = go.Figure()
        for item in dict.fromkeys(k for _, p in old for k in p):
            fig.add_bar(name=item, x=[l for l, _ in old], y=[p.get(item, 0) for _, p in old])
        s.figures.append(fig.update_layout(title="Cost items", barmode="stack", yaxis={"title": "USD"}))
    for title, pred, unit in (
            ("Energy per token", lambda k: k.endswith(("j_per_token", "j_per_inference", "energy_per_output_token_j")), "J"),
            ("Tokens per second per MW", lambda k: "per_mw" in k, "tokens/s per MW"),
            ("Power", lambda k: k.endswith("power_w") and not k.startswith("assumptions."), "W")):
        names = list(dict.fromkeys(k for _, n in ents for k in n if pred(k)))
        if names:
            fig = go.Figure()
            for label, n in ents:
                fig.add_bar(name=label, x=[k.split(".")[-1] for k in names], y=[n.get(k) for k in names])
            s.figures.append(fig.update_layout(title=title, barmode="group", yaxis={"title": unit}))
    if not s.figures:
        s.skip("Cost and energy", "owned/cloud/energy")
    return [s]
