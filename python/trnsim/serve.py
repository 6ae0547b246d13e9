"""LLM serving on a simulated deployment: the same numbers as ``trnsim serve``.

``serve()`` runs R replicas of a model description (a preset of ``configs/models`` or a Hugging
Face ``config.json``) on a system under a traffic pattern (``rate=`` with ``arrival=`` /
``burstiness=``, ``concurrency=``, ``offline=True`` or ``trace=``) and returns the dict of
``trnsim serve --json``: ``kind`` "serve", ``time_s`` (simulated duration), TTFT / TPOT / ITL /
e2e / queueing percentiles (``p99_ttft_s``, ...), throughput, goodput under ``slo=``, KV-cache
use, preemptions, retries, incidents. Every keyword is a ``trnsim serve`` flag with ``_`` for
``-`` (``max_seqs=``, ``fail=["replica:1@60"]``, ...). ``timeline=True`` adds the per-second
series under ``"timeline"``. Bad input raises ``trnsim.TrnsimError`` subclasses (one line).
"""
from __future__ import annotations

import json
import sys

from trnsim import _core
from trnsim.api_args import checked, json_request
from trnsim.progress import Progress

__all__ = ["serve", "serve_options"]


@checked
def serve(model: str, system: str, tp: int = 1, *, timeline: bool | str = False,
          progress: bool | None = None, **options) -> dict:
    """Simulate serving ``model`` on ``system`` with ``tp``-way tensor parallel replicas.

    ``timeline``: True to include the time series in the result, or a path (.csv/.json) to
    write it to, as ``--timeline``. ``progress``: show progress on runs longer than 2 s of wall
    time (``trnsim.Progress``: a bar on a terminal, plain lines otherwise); default: on when
    stderr is a terminal.
    """
    values = {"model": model, "system": system, "tp": tp}
    for key, value in options.items():
        if value is None or value is False:
            continue
        values[key] = value
    if isinstance(timeline, str):
        values["timeline"] = timeline
    if progress is None:
        progress = hasattr(sys.stderr, "isatty") and sys.stderr.isatty()
    shown = _ProgressCallback() if progress else None
    try:
        result, series = _core.serve.serve(json_request("trnsim.serve", values), shown)
    except BaseException:
        if shown is not None:
            shown.close(finished=False)
        raise
    if shown is not None:
        shown.close(finished=True)
    out = json.loads(result)
    if timeline is True:
        out["timeline"] = json.loads(series)
    return out


class _ProgressCallback:
    """Called from the simulator (throttled there) with (simulated s, done, total)."""

    def __init__(self):
        self.bar = None

    def __call__(self, sim_s: float, done: int, total: int) -> None:
        if self.bar is None:
            self.bar = Progress("serve", total if total >= 0 else None, unit="requests").__enter__()
        self.bar.advance(done - self.bar.done, note=f"{sim_s:.0f} s simulated")

    def close(self, finished: bool) -> None:
        """Ends the bar; a finished run shows all its requests done."""
        if self.bar is not None:
            if finished and self.bar.total is not None and self.bar.done < self.bar.total:
                self.bar.advance(self.bar.total - self.bar.done)
            self.bar.__exit__(None, None, None)


def serve_options() -> list[str]:
    """The keywords ``serve()`` takes (``trnsim serve`` flags with ``_`` for ``-``)."""
    return [n.replace("-", "_") for n in _core.serve.option_names()]
