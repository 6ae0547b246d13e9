"""What a renderer returns: titled sections of plotly figures, tables and notes.

A renderer never raises on a missing optional field: it leaves that plot out and adds a note
saying which field was missing, so a report of a partial result still opens.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

import numpy as np


@dataclass
class Table:
    header: list[str]
    rows: list[list[Any]]


@dataclass
class Section:
    title: str
    figures: list = field(default_factory=list)  # plotly.graph_objects.Figure
    notes: list[str] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)

    def skip(self, what: str, missing: str) -> None:
        """Leave a plot out and say why: the result has no `missing` field."""
        self.notes.append(f"{what}: not drawn, the result has no {missing} field.")


@dataclass
class Result:
    """One loaded result: its kind, a label for legends, and the object itself."""
    kind: str
    label: str
    data: dict


def get(d: Any, *paths: str, default=None):
    """The first of several dotted paths present in `d` ("ttft_s.p99", "ttft_p99_s"), else default."""
    for p in paths:
        cur = d
        for part in p.split("."):
            if isinstance(cur, dict) and part in cur:
                cur = cur[part]
            else:
                cur = None
                break
        if cur is not None:
            return cur
    return default


def number(x) -> Optional[float]:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if np.isfinite(v) else None


def downsample_series(x: Iterable[float], ys: dict[str, Iterable[float]], max_points: int = 2000):
    """Bucket means of a time series down to at most `max_points` (the shape survives, the size doesn't grow)."""
    x = np.asarray(list(x), dtype=float)
    ys = {k: np.asarray(list(v), dtype=float) for k, v in ys.items()}
    if len(x) <= max_points:
        return x, ys
    edges = np.linspace(0, len(x), max_points + 1).astype(int)
    idx = np.repeat(np.arange(max_points), np.diff(edges))
    counts = np.bincount(idx, minlength=max_points)

    def mean(v):
        return np.bincount(idx, weights=v, minlength=max_points) / counts

    return mean(x), {k: mean(v) for k, v in ys.items()}


def cdf_points(values: Iterable[float], max_points: int = 600):
    """(value, fraction) of an empirical CDF at <= max_points quantiles, denser in the tail.

    Half the points are even in probability; the rest at 1 - 10^-k steps, so p99/p99.9 stay
    exact however many samples there are.
    """
    v = np.sort(np.asarray([x for x in values if x is not None], dtype=float))
    v = v[np.isfinite(v)]
    if len(v) == 0:
        return np.array([]), np.array([])
    if len(v) <= max_points:
        return v, np.arange(1, len(v) + 1) / len(v)
    even = np.linspace(0, 1, max_points // 2)
    tail = 1 - np.logspace(-1, np.log10(1.0 / len(v)), max_points - max_points // 2)
    q = np.unique(np.clip(np.concatenate([even, tail]), 0, 1))
    return np.quantile(v, q), q


def short(x: float) -> str:
    """A compact human number for tables."""
    if x is None:
        return ""
    if isinstance(x, (int, np.integer)) and abs(x) < 1e6:
        return str(int(x))
    if isinstance(x, (float, np.floating)):
        if x == 0:
            return "0"
        if 1e-3 <= abs(x) < 1e6:
            return f"{x:.4g}"
        return f"{x:.3e}"
    return str(x)
