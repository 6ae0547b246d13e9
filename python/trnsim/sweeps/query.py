"""SQL over a sweep's Parquet with DuckDB: the file is the view `results`."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Union


class SweepQueryError(ValueError):
    """A query that DuckDB refused, or a results file that is not there."""


def query(results: Union[str, os.PathLike], sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    """(column names, rows) of `sql` run against `results` (the Parquet file, as the view `results`)."""
    import duckdb
    path = Path(results)
    if not path.exists():
        raise SweepQueryError(f"{path}: no such results file (run the sweep first, or name it with -o)")
    try:
        sql.encode("utf-8")
    except UnicodeEncodeError:  # a non-UTF-8 argument: DuckDB raised a bare std::bad_cast
        raise SweepQueryError("--query: not UTF-8 text") from None
    con = duckdb.connect()
    try:
        literal = "'" + str(path).replace("'", "''") + "'"
        con.execute(f"create view results as select * from read_parquet({literal})")
        cur = con.execute(sql)
        cols = [d[0] for d in cur.description] if cur.description else []
        return cols, cur.fetchall()
    except duckdb.Error as e:
        raise SweepQueryError(f"--query: {str(e).splitlines()[0]}") from None
    finally:
        con.close()
