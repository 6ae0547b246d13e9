"""Finding figures in results whose exact layout varies by kind and version: numeric fields by
unit suffix, percentile sets, per-request columns and time series, all tolerant of absence."""
from __future__ import annotations

from typing import Any, Optional

from trnsim.reports.section import get, number

PERCENTILES = ("mean", "p50", "p90", "p95", "p99", "p99.9", "max")


def flat_numbers(d: Any, prefix: str = "", depth: int = 3) -> dict[str, float]:
    """Every numeric leaf of nested dicts as {"a.b": value} (lists are skipped)."""
    out: dict[str, float] = {}
    if not isinstance(d, dict) or depth < 0:
        return out
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, bool):
            continue
        if isinstance(v, dict):
            out.update(flat_numbers(v, key + ".", depth - 1))
        else:
            x = number(v) if isinstance(v, (int, float)) else None
            if x is not None:
                out[key] = x
    return out


def percentiles(d: dict, metric: str) -> dict[str, float]:
    """{"p50": .., "p99": ..} of a latency metric ("ttft", "tpot", "itl", "e2e", "queue") in seconds.

    Accepts `ttft_s: {p50: ..}`, `latency.ttft_s.p50`, `ttft: {p50_s: ..}` and flat `ttft_p50_s`.
    """
    out: dict[str, float] = {}
    for base in (f"{metric}_s", f"latency.{metric}_s", f"latency_s.{metric}", metric, f"latency.{metric}",
                 f"metrics.{metric}_s"):
        v = get(d, base)
        if isinstance(v, dict):
            for p in PERCENTILES:
                x = number(get(v, p, f"{p}_s", p.replace(".", "_"), f"{p.replace('.', '_')}_s"))
                if x is not None:
                    out[p] = x
            if out:
                return out
    for p in PERCENTILES:
        pk = p.replace(".", "_")
        x = number(get(d, f"{metric}_{pk}_s", f"{pk}_{metric}_s", f"latency.{metric}_{pk}_s"))
        if x is not None:
            out[p] = x
    return out


def columns(obj: Any) -> Optional[dict[str, list]]:
    """A table given as a list of records or a dict of equal-length lists, as columns."""
    if isinstance(obj, list) and obj and isinstance(obj[0], dict):
        keys = [k for k in obj[0] if isinstance(obj[0][k], (int, float)) and not isinstance(obj[0][k], bool)]
        return {k: [r.get(k) for r in obj] for k in keys}
    if isinstance(obj, dict):
        cols = {k: v for k, v in obj.items() if isinstance(v, list) and v and isinstance(v[0], (int, float))}
        lens = {len(v) for v in cols.values()}
        if cols and len(lens) == 1:
            return cols
    return None


def time_column(cols: dict[str, list]) -> Optional[str]:
    for k in ("t_s", "time_s", "start_s", "second", "t", "timestamp_s"):
        if k in cols:
            return k
    return None


def matching(keys, *needles: str, exclude: tuple[str, ...] = ()) -> list[str]:
    """Keys containing any needle and none of `exclude`, in order."""
    return [k for k in keys if any(n in k for n in needles) and not any(e in k for e in exclude)]
