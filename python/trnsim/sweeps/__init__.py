"""`trnsim sweep`: a sweep file's points as Ray tasks into Parquet, queried with DuckDB.

    trnsim.sweep("sweep.yaml", "results.parquet")           # local Ray, all CPUs
    trnsim.sweeps.query("results.parquet", "select * from results order by time_s limit 5")
"""
from trnsim.sweeps.query import query
from trnsim.sweeps.runner import run_sweep
from trnsim.sweeps.spec import Sweep, SweepSpecError, parse_spec

__all__ = ["run_sweep", "query", "parse_spec", "Sweep", "SweepSpecError"]
