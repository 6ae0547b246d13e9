"""SQL over a sweep's Parquet with DuckDB: the file is the view `results`.

The SQL is the user's, so it runs bounded: in a child process whose address space is capped at
the project's memory limit (TRNSIM_MAX_MEMORY, default half the machine's memory) and which is
stopped after `timeout_s`. DuckDB's own `memory_limit` covers its buffer manager only: a
`repeat('x', 10^9)` took 4 GB under a 256 MB setting.
"""
from __future__ import annotations

import multiprocessing
import os
from pathlib import Path
from typing import Any, Union

DEFAULT_TIMEOUT_S = 600.0


class SweepQueryError(ValueError):
    """A query that DuckDB refused, or a results file that is not there."""


def _gib(n: int) -> str:
    return f"{n / 2**30:.1f} GiB" if n >= 2**30 else f"{n / 2**20:.0f} MiB"


def _run(path: str, sql: str, memory_bytes: int, conn) -> None:
    """The child: cap the address space, run the query, send ("ok", cols, rows) or ("error", msg)."""
    import resource
    try:
        import duckdb
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
        con = duckdb.connect(config={"memory_limit": f"{max(memory_bytes // 2, 64 << 20)}B"})
        con.execute("set enable_progress_bar = false")  # the child's stderr is the user's terminal
        literal = "'" + path.replace("'", "''") + "'"
        con.execute(f"create view results as select * from read_parquet({literal})")
        cur = con.execute(sql)
        cols = [d[0] for d in cur.description] if cur.description else []
        conn.send(("ok", cols, cur.fetchall()))
    except MemoryError:
        conn.send(("error", f"--query: needs more than the memory limit of {_gib(memory_bytes)} "
                            "(TRNSIM_MAX_MEMORY raises it)"))
    except Exception as e:  # duckdb.Error and its OutOfMemoryException, or a result that does not pickle
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        if "out of memory" in first.lower() or "failed to allocate" in first.lower():
            first += f" (the limit is {_gib(memory_bytes)}; TRNSIM_MAX_MEMORY raises it)"
        conn.send(("error", f"--query: {first}"))


def query(results: Union[str, os.PathLike], sql: str,
          timeout_s: float = DEFAULT_TIMEOUT_S) -> tuple[list[str], list[tuple[Any, ...]]]:
    """(column names, rows) of `sql` run against `results` (the Parquet file, as the view `results`)."""
    from trnsim._core import memory_limit_bytes
    path = Path(results)
    if not path.exists():
        raise SweepQueryError(f"{path}: no such results file (run the sweep first, or name it with -o)")
    try:
        sql.encode("utf-8")
    except UnicodeEncodeError:  # a non-UTF-8 argument: DuckDB raised a bare std::bad_cast
        raise SweepQueryError("--query: not UTF-8 text") from None
    if not 0 < timeout_s <= 1e7:  # NaN and inf too (the wait takes a finite number)
        raise SweepQueryError(f"--query-timeout-s {timeout_s}: expected seconds, more than 0 and at most 1e7")
    ctx = multiprocessing.get_context("spawn")  # never fork a process that may hold Ray or DuckDB threads
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_run, args=(str(path), sql, memory_limit_bytes(), child), daemon=True)
    proc.start()
    child.close()
    try:
        if not parent.poll(timeout_s):
            raise SweepQueryError(f"--query: still running after {timeout_s:g} s; stopped "
                                  "(--query-timeout-s allows more)")
        msg = parent.recv()
    except EOFError:
        raise SweepQueryError(f"--query: the query process ended without a result (exit {proc.exitcode})") from None
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join()
        parent.close()
    if msg[0] == "error":
        raise SweepQueryError(msg[1])
    return msg[1], msg[2]
