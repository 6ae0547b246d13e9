"""`trnsim report`: results of any kind (JSON from `--json`, a sweep's Parquet) drawn as one
self-contained HTML file. Results of one kind are compared on the same axes.

    trnsim.report(["a.json", "b.json"], "report.html")
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Union

from trnsim.reports.load import KINDS, ReportInputError, load_results
from trnsim.reports.page import render_page
from trnsim.reports.render_collective import render_collective
from trnsim.reports.render_cost import render_compare, render_tco
from trnsim.reports.render_energy import render_energy
from trnsim.reports.render_engine import render_kernel, render_run
from trnsim.reports.render_llm import render_llm
from trnsim.reports.render_serve import render_serve
from trnsim.reports.render_sweep import render_sweep
from trnsim.reports.render_train import render_train
from trnsim.reports.section import Result, Section, Table

__all__ = ["build_report", "report_html", "ReportInputError", "RENDERERS"]

RENDERERS = {"kernel": render_kernel, "run": render_run, "collective": render_collective, "llm": render_llm,
             "serve": render_serve, "train": render_train, "tco": render_tco, "compare": render_compare,
             "sweep": render_sweep}
assert set(RENDERERS) == set(KINDS)

Source = Union[str, os.PathLike, dict, list]


def report_html(results: Iterable[Source], title: str | None = None) -> str:
    """The HTML text of a report of `results` (paths or result objects)."""
    loaded = load_results(list(results))
    by_kind: dict[str, list[Result]] = {}
    for r in loaded:
        by_kind.setdefault(r.kind, []).append(r)
    sections: list[Section] = []
    for kind in KINDS:  # a fixed order, so two reports of the same kinds read alike
        if kind in by_kind:
            sections += RENDERERS[kind](by_kind[kind])
    sections += render_energy(loaded)
    labels = list(dict.fromkeys((r.label, r.kind) for r in loaded))
    inputs = Table(["result", "kind", "count"], [[l, k, sum(1 for r in loaded if (r.label, r.kind) == (l, k))]
                                                  for l, k in labels])
    if title is None:
        title = "trnsim report: " + ", ".join(sorted(by_kind, key=KINDS.index))
    return render_page(title, sections, inputs)


def build_report(results: Iterable[Source], output: Union[str, os.PathLike] = "report.html",
                 title: str | None = None) -> Path:
    """Writes the report of `results` to `output` and returns its path."""
    out = Path(output)
    text = report_html(results, title)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    return out
