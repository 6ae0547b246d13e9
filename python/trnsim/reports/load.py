"""Reading results: JSON files of any kind (one object or a list of them) and a sweep's Parquet.

Every result names its `kind` (kernel, run, collective, llm, serve, train, tco, compare, sweep).
An object without one is recognised by its fields with a warning (older files), never guessed
silently; anything else is a one-line error naming the file.
"""
from __future__ import annotations

import json
import os
import warnings
from pathlib import Path
from typing import Any, Iterable, Union

from trnsim.reports.section import Result

KINDS = ("kernel", "run", "collective", "llm", "serve", "train", "tco", "compare", "sweep")


class ReportInputError(ValueError):
    """A result file that cannot be drawn: the message names the file and what was expected."""


_warned: set[str] = set()


def _infer_kind(d: dict) -> str | None:
    if "busbw_gbps" in d and "algorithm" in d:
        return "collective"
    if "units" in d and "tensor_flops" in d:
        return "kernel"
    if "ops" in d and ("engines" in d or "tp" in d):
        return "run"
    if "report" in d and isinstance(d["report"], dict) and "ops" in d["report"]:
        return "run"
    return None


def _one(d: Any, where: str) -> dict:
    if not isinstance(d, dict):
        raise ReportInputError(f"{where}: expected a result object, got {type(d).__name__}")
    kind = d.get("kind")
    if kind is None:
        kind = _infer_kind(d)
        if kind is None:
            raise ReportInputError(f"{where}: no \"kind\" field and not recognisable as a trnsim result "
                                   f"(expected one of {', '.join(KINDS)})")
        if where.split("[")[0] not in _warned:
            _warned.add(where.split("[")[0])
            warnings.warn(f"{where.split('[')[0]}: no \"kind\" field; drawn as {kind} from its fields", stacklevel=2)
        d = {**d, "kind": kind}
    if kind not in KINDS:
        raise ReportInputError(f"{where}: kind \"{kind}\" is not one of {', '.join(KINDS)}")
    if kind == "sweep" and not any(k in d for k in ("rows", "points", "results")) and d.get("output"):
        out = Path(d["output"])  # `trnsim sweep --json` names its Parquet file
        if out.exists():
            d = {**parquet_result(out), **{k: v for k, v in d.items() if k not in ("time_s",)}}
    if kind == "run" and "report" in d and "ops" not in d:  # python -m trnsim run --json nests it
        d = {**d["report"], **{k: v for k, v in d.items() if k != "report"}}
    return d


def parquet_result(path: Union[str, os.PathLike]) -> dict:
    """A sweep's Parquet file as a `sweep` result: {"kind": "sweep", "rows": [...], "columns": [...]}."""
    import pyarrow.parquet as pq
    try:
        table = pq.read_table(path)
    except Exception as e:  # pyarrow raises several types for a broken file
        raise ReportInputError(f"{path}: cannot read as Parquet: {e}".splitlines()[0]) from None
    meta = table.schema.metadata or {}
    axes = json.loads(meta.get(b"trnsim.axes", b"[]"))
    command = meta.get(b"trnsim.command", b"").decode()
    return {"kind": "sweep", "source": str(path), "command": command, "axes": axes, "columns": table.column_names,
            "rows": table.to_pylist(), "time_s": None}


def _is_timeline(data: Any) -> bool:
    """`trnsim serve --timeline F.json`: a list of per-bin records with t_s and no kind."""
    return isinstance(data, list) and bool(data) and all(isinstance(d, dict) and "t_s" in d and "kind" not in d
                                                         for d in data)


def _csv_records(p: Path) -> list[dict]:
    import csv
    with p.open(newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows or "t_s" not in rows[0]:
        raise ReportInputError(f"{p}: a CSV must be a serve timeline (`trnsim serve --timeline F.csv`, first column t_s)")
    out = []
    for i, r in enumerate(rows, start=2):
        try:
            out.append({k: float(v) for k, v in r.items() if v not in ("", None)})
        except ValueError:
            raise ReportInputError(f"{p}: row {i}: expected numbers") from None
    return out


def _attach_timeline(out: list[Result], records: list[dict], where: str) -> None:
    serve = next((r for r in reversed(out) if r.kind == "serve"), None)
    if serve is None:
        raise ReportInputError(f"{where}: a serve timeline goes after its serve result (trnsim report serve.json {where})")
    serve.data = {**serve.data, "timeseries": records}


_MAX_RESULT_BYTES = 256 << 20  # a --json result; a serve timeline of 10^6 bins is about 200 MB


def load_results(items: Iterable[Union[str, os.PathLike, dict, list]]) -> list[Result]:
    """Results from file paths (.json, .parquet) or objects already in memory, labelled for legends."""
    out: list[Result] = []
    for i, item in enumerate(items):
        if isinstance(item, (str, os.PathLike)):
            p = Path(item)
            if not p.exists():
                raise ReportInputError(f"{p}: no such file")
            label = p.stem
            if p.suffix == ".parquet":
                out.append(Result("sweep", label, parquet_result(p)))
                continue
            if p.suffix == ".csv":
                _attach_timeline(out, _csv_records(p), str(p))
                continue
            # Bounded: /dev/zero as a result read 22 GB before failing.
            if not p.is_file():
                raise ReportInputError(f"{p}: not a regular file (expected a trnsim --json result or a .parquet)")
            if p.stat().st_size > _MAX_RESULT_BYTES:
                raise ReportInputError(f"{p}: {p.stat().st_size} bytes, larger than a result file "
                                       f"({_MAX_RESULT_BYTES >> 20} MiB)")
            try:
                data = json.loads(p.read_text())
            except json.JSONDecodeError as e:
                raise ReportInputError(f"{p}: not valid JSON ({e.msg} at line {e.lineno})") from None
            except UnicodeDecodeError:
                raise ReportInputError(f"{p}: not a JSON text file (expected a trnsim --json result or a .parquet)") from None
        else:
            data, label = item, f"result {i + 1}"
        if _is_timeline(data):
            _attach_timeline(out, data, label)
            continue
        objs = data if isinstance(data, list) else [data]
        if not objs:
            raise ReportInputError(f"{label}: an empty list, nothing to draw")
        for j, d in enumerate(objs):
            where = f"{label}[{j}]" if isinstance(data, list) else label
            d = _one(d, where)
            # A list of one kind from one command (collective sizes) shares the file's label.
            lab = label if isinstance(data, list) and d["kind"] == "collective" else where
            out.append(Result(d["kind"], lab, d))
    return out
