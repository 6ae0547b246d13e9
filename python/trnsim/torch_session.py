"""The record of a ``torch.compile(backend="trnsim")`` session: every graph run on the simulated
chip, every graph that did not (with the reason), and the summary of a whole generation.

A session starts at import (or at ``reset_session()``; ``torch._dynamo.reset()`` does not end
it). A decode loop is one forward per token; a forward may be several Dynamo graphs when the
model has graph breaks. A forward begins with a graph of the compiled function itself (not a
``torch_dynamo_resume_in_*`` continuation after a break), so the runs are split into steps
there: step 0 is the prefill (TTFT), the mean of the later steps is TPOT.

Torch-free: the backend calls ``record_*``; ``summary()`` builds the dict.
"""
from __future__ import annotations

import statistics
import warnings
from dataclasses import dataclass, field

__all__ = ["FallbackWarning", "record_run", "record_compile", "record_fallback", "summary", "reset"]


class FallbackWarning(UserWarning):
    """Part of a model ran on the CPU instead of the simulated chip (a Dynamo graph break, or a
    graph the trnsim compiler refused). The message names the graph or op and why."""


@dataclass
class _Run:
    graph: str
    entry: bool
    time_s: float
    report: dict


@dataclass
class _Session:
    runs: list[_Run] = field(default_factory=list)
    programs: list[dict] = field(default_factory=list)    # one per compiled program
    fallbacks: list[dict] = field(default_factory=list)   # graphs / breaks run on the CPU
    eager_runs: int = 0


_S = _Session()


def reset() -> None:
    global _S
    _S = _Session()


def record_compile(graph: str, shapes: list, compile_time_s: float) -> None:
    _S.programs.append({"graph": graph, "input_shapes": shapes, "compile_time_s": compile_time_s})


def record_run(graph: str, entry: bool, report: dict) -> None:
    _S.runs.append(_Run(graph, entry, float(report.get("time_s", 0.0)), report))


def record_fallback(what: str, why: str, warn: bool = True) -> None:
    """A graph or op runs on the CPU: recorded, and a FallbackWarning names it (once per what)."""
    first = not any(f["what"] == what and f["why"] == why for f in _S.fallbacks)
    _S.fallbacks.append({"what": what, "why": why})
    if warn and first:
        warnings.warn(f"trnsim: {what} runs on the CPU, not on the simulated chip: {why}",
                      FallbackWarning, stacklevel=3)


def record_eager_run() -> None:
    _S.eager_runs += 1


def _steps(runs: list[_Run]) -> list[float]:
    """Simulated time per forward: a new forward starts at each entry-graph run."""
    steps: list[float] = []
    for r in runs:
        if r.entry or not steps:
            steps.append(0.0)
        steps[-1] += r.time_s
    return steps


def summary() -> dict:
    """The whole session: programs compiled, runs, fallbacks and, as a generation, TTFT (the
    first forward), TPOT (the mean of the later forwards) and the forwards (tokens per sequence)."""
    steps = _steps(_S.runs)
    unique = []
    for f in _S.fallbacks:
        if f not in unique:
            unique.append(f)
    return {
        "kind": "run",
        "time_s": sum(steps),
        "graphs_compiled": len(_S.programs),
        "dynamo_graphs": len({p["graph"] for p in _S.programs}),
        "runs_on_chip": len(_S.runs),
        "runs_on_cpu": _S.eager_runs,
        "steps": len(steps),
        "tokens": len(steps),
        "ttft_s": steps[0] if steps else None,
        "tpot_s": statistics.fmean(steps[1:]) if len(steps) > 1 else None,
        "step_time_s": steps,
        "compile_time_s": sum(p["compile_time_s"] for p in _S.programs),
        "programs": list(_S.programs),
        "fallbacks": unique,
        "all_on_chip": not _S.fallbacks and _S.eager_runs == 0,
    }
