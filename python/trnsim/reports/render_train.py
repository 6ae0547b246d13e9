"""`train` results: the step breakdown (compute, exposed communication, bubble, optimizer),
memory per NeuronCore, MFU and throughput, and goodput under failures when given."""
from __future__ import annotations

import plotly.graph_objects as go

from trnsim.reports.render_llm import breakdown, memory_parts, param, stacked
from trnsim.reports.section import Result, Section, Table, get, number

STEP_FIELDS = ("step_breakdown", "breakdown", "breakdown_s", "step")


def render_train(results: list[Result]) -> list[Section]:
    s = Section("Training")
    s.tables.append(Table(
        ["result", "model", "system", "nodes", "tp", "pp", "dp", "step (s)", "tokens/s", "MFU", "goodput"],
        [[r.label, str(param(r.data, "model") or ""), str(param(r.data, "system") or ""), param(r.data, "nodes"),
          param(r.data, "tp"), param(r.data, "pp"), param(r.data, "dp"), get(r.data, "step_time_s", "time_s"),
          get(r.data, "tokens_per_s", "throughput.tokens_per_s"), get(r.data, "mfu", "mfu_fraction"),
          get(r.data, "goodput", "goodput_fraction", "failures.goodput")] for r in results]))
    labels = [r.label for r in results]
    parts = [breakdown(r.data, STEP_FIELDS) for r in results]
    if any(parts):
        s.figures.append(stacked("Step breakdown", labels, parts, 1.0, "seconds per step"))
    else:
        s.skip("Step breakdown", "breakdown")
    mem = [memory_parts(r.data) for r in results]
    if any(mem):
        s.figures.append(stacked("Memory per NeuronCore", labels, mem, 1 / 2**30, "GiB"))
    else:
        s.skip("Memory per core", "memory_bytes_per_core")
    mfu = [(r.label, number(get(r.data, "mfu", "mfu_fraction"))) for r in results]
    mfu = [(l, v) for l, v in mfu if v is not None]
    if mfu:
        s.figures.append(go.Figure(go.Bar(x=[l for l, _ in mfu], y=[100 * v for _, v in mfu], name="MFU")).update_layout(
            title="Model FLOPs utilisation", yaxis={"title": "% of dense peak"}))
    else:
        s.skip("MFU", "mfu")
    good = [(r.label, number(get(r.data, "goodput", "goodput_fraction", "failures.goodput"))) for r in results]
    good = [(l, v) for l, v in good if v is not None]
    if good:
        s.figures.append(go.Figure(go.Bar(x=[l for l, _ in good], y=[100 * v for _, v in good], name="goodput"))
                         .update_layout(title="Goodput under failures and checkpoints", yaxis={"title": "%"}))
    return [s]
