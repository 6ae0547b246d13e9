"""Sweep results on disk: rows stream into part files beside the output while points finish
(`results.parquet.parts/part-NNNNN.parquet`, each written whole then renamed, so an interrupted
sweep loses at most the points in flight), and are merged into one Parquet file at the end.
A re-run reads both and skips the points whose status is "ok"."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any, Iterable

import pyarrow as pa
import pyarrow.parquet as pq


class SweepStore:
    def __init__(self, output: os.PathLike | str, metadata: dict[str, Any]):
        self.output = Path(output)
        self.parts = self.output.with_name(self.output.name + ".parts")
        self.metadata = {f"trnsim.{k}".encode(): json.dumps(v).encode() if not isinstance(v, str) else v.encode()
                         for k, v in metadata.items()}
        self._n = len(list(self.parts.glob("part-*.parquet"))) if self.parts.exists() else 0

    def _tables(self) -> list[pa.Table]:
        files = [self.output] if self.output.exists() else []
        if self.parts.exists():
            files += sorted(self.parts.glob("part-*.parquet"))
        return [pq.read_table(f) for f in files]

    def done(self) -> set[str]:
        """Point ids already finished with status ok (from a previous run, merged or not)."""
        ids: set[str] = set()
        for t in self._tables():
            if "point_id" in t.column_names and "status" in t.column_names:
                for pid, st in zip(t.column("point_id").to_pylist(), t.column("status").to_pylist()):
                    if st == "ok":
                        ids.add(pid)
        return ids

    def append(self, rows: Iterable[dict[str, Any]]) -> None:
        rows = list(rows)
        if not rows:
            return
        self.parts.mkdir(parents=True, exist_ok=True)
        self._n += 1
        final = self.parts / f"part-{self._n:05d}.parquet"
        tmp = final.with_suffix(".tmp")
        keys = list(dict.fromkeys(k for r in rows for k in r))  # from_pylist would keep the first row's only
        pq.write_table(pa.Table.from_pylist([{k: r.get(k) for k in keys} for r in rows]), tmp)
        os.replace(tmp, final)

    def merge(self) -> pa.Table:
        """One file: every row of the output and the parts, the newest row set per point id."""
        tables = self._tables()
        if not tables:
            table = pa.table({"point_id": pa.array([], pa.string()), "status": pa.array([], pa.string())})
        else:
            table = pa.concat_tables(tables, promote_options="permissive")
            table = _latest_per_point(table)
        table = table.replace_schema_metadata({**(table.schema.metadata or {}), **self.metadata})
        tmp = self.output.with_name(self.output.name + ".tmp")
        self.output.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(table, tmp)
        os.replace(tmp, self.output)
        if self.parts.exists():
            shutil.rmtree(self.parts)
        return table


def _latest_per_point(t: pa.Table) -> pa.Table:
    """Rows of each point's last run only (a retried point's error row gives way to its results);
    the rows of one run share its `finished_ns`."""
    if "finished_ns" not in t.column_names:
        return t
    pids, fin = t.column("point_id").to_pylist(), t.column("finished_ns").to_pylist()
    last: dict[str, int] = {}
    for p, f in zip(pids, fin):
        last[p] = max(last.get(p, f), f)
    keep = [i for i, (p, f) in enumerate(zip(pids, fin)) if f == last[p]]
    return t.take(pa.array(keep, pa.int64()))
