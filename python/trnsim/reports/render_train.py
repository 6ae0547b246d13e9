"""`train` results: the step breakdown (compute, exposed communication, bubble, optimizer),
memory per NeuronCore, MFU and throughput, and goodput under failures when given."""
from __future__ import annotations

import plotly.graph_objects as go

from trnsim.reports.render_llm import breakdown, memory_parts, param, stacked
from trnsim.reports.section import Result, Section, Table, get, number

STEP_FIELDS = ("step_breakdown", "breakdown", "breakdown_s", "step")
# The parts that add up to the step (the rest of `step` are their components: forward, tp_comm, ...).
STEP_PARTS = ("compute_s", "exposed_comm_s", "exposed_communication_s", "bubble_s", "optimizer_s")
COMM_PARTS = ("tp_comm_s", "dp_comm_s", "pp_send_s", "ep_comm_s", "cp_comm_s", "zero_gather_s")


def _fraction(d: dict, frac: str, pct: str):
    """A fraction given as a fraction or as a percent field."""
    x = number(get(d, frac))
    if x is None:
        p = number(get(d, pct))
        x = p / 100 if p is not None else None
    return x


def step_parts(d: dict) -> dict[str, float]:
    step = get(d, "step")
    if isinstance(step, dict) and any(k in step for k in STEP_PARTS):
        return {k[:-2]: float(step[k]) for k in STEP_PARTS if number(step.get(k)) is not None}
    return breakdown(d, STEP_FIELDS)


def render_train(results: list[Result]) -> list[Section]:
    s = Section("Training")
    s.tables.append(Table(
        ["result", "model", "system", "nodes", "tp", "pp", "dp", "step (s)", "tokens/s", "MFU", "goodput"],
        [[r.label, str(param(r.data, "model") or ""), str(param(r.data, "system") or ""), param(r.data, "nodes"),
          param(r.data, "tp"), param(r.data, "pp"), param(r.data, "dp"), get(r.data, "step_time_s", "time_s"),
          get(r.data, "tokens_per_s", "throughput.tokens_per_s"), _mfu(r.data), _goodput(r.data)] for r in results]))
    labels = [r.label for r in results]
    parts = [step_parts(r.data) for r in results]
    if any(parts):
        s.figures.append(stacked("Step breakdown", labels, parts, 1.0, "seconds per step"))
        for r, p in zip(results, parts):
            t = number(r.data.get("time_s"))
            if p and t and abs(sum(p.values()) - t) > 0.01 * t:
                s.notes.append(f"{r.label}: the breakdown adds up to {sum(p.values()):.4g} s, the step is {t:.4g} s.")
    else:
        s.skip("Step breakdown", "step")
    comm = [{k[:-2]: float(get(r.data, f"step.{k}")) for k in COMM_PARTS if number(get(r.data, f"step.{k}"))}
            for r in results]
    if any(comm):
        s.figures.append(stacked("Communication per step by kind (exposed or not)", labels, comm, 1.0, "seconds"))
    mem = [memory_parts(r.data) for r in results]
    if any(mem):
        s.figures.append(stacked("Memory per NeuronCore", labels, mem, 1 / 2**30, "GiB"))
    else:
        s.skip("Memory per core", "memory_bytes_per_core")
    mfu = [(r.label, _mfu(r.data)) for r in results]
    mfu = [(l, v) for l, v in mfu if v is not None]
    if mfu:
        s.figures.append(go.Figure(go.Bar(x=[l for l, _ in mfu], y=[100 * v for _, v in mfu], name="MFU")).update_layout(
            title="Model FLOPs utilisation", yaxis={"title": "% of dense peak"}))
    else:
        s.skip("MFU", "mfu")
    good = [(r.label, _goodput(r.data)) for r in results]
    good = [(l, v) for l, v in good if v is not None]
    if good:
        s.figures.append(go.Figure(go.Bar(x=[l for l, _ in good], y=[100 * v for _, v in good], name="goodput"))
                         .update_layout(title="Goodput under failures and checkpoints", yaxis={"title": "%"}))
    return [s]


def _mfu(d: dict):
    return _fraction(d, "mfu", "mfu_percent")


def _goodput(d: dict):
    return _fraction(d, "goodput", "train.goodput_percent") or _fraction(d, "goodput_fraction", "goodput_percent")
