"""Energy and power of any result that reports them (`energy_j`, `*_power_w`, `*_j_per_*`), all
results on the same axes whatever their kind."""
from __future__ import annotations

import plotly.graph_objects as go

from trnsim.reports.fields import flat_numbers
from trnsim.reports.section import Result, Section


def render_energy(results: list[Result]) -> list[Section]:
    ents = []
    for r in results:
        if r.kind in ("tco", "compare"):  # their own sections draw energy and power
            continue
        nums = {k: v for k, v in flat_numbers(r.data, depth=1).items()
                if k.endswith(("energy_j", "_power_w", "power_w", "_token_j", "_request_j")) or "_j_per_" in k}
        if nums:
            ents.append((f"{r.label} ({r.kind})", nums))
    if not ents:
        return []
    s = Section("Energy and power")
    for title, pred, unit in (("Energy", lambda k: k.endswith(("energy_j", "_token_j", "_request_j")) or "_j_per_" in k, "J"),
                              ("Power", lambda k: k.endswith("power_w"), "W")):
        keys = list(dict.fromkeys(k for _, n in ents for k in n if pred(k)))
        if keys:
            fig = go.Figure()
            for label, n in ents:
                fig.add_bar(name=label, x=keys, y=[n.get(k) for k in keys])
            s.figures.append(fig.update_layout(title=title, barmode="group", yaxis={"title": unit, "type": "log"}))
    return [s]
