"""trnsim sweep: the sweep file (grid, seeded random search, errors), and one real sweep on a
local Ray: interrupted after two points, resumed, every row checked against the command run
directly, a failed point recorded, and DuckDB over the Parquet."""
import json
import os
import subprocess
import sys

import pytest

from cli_path import ROOT, trnsim_cli
from trnsim.sweeps import SweepSpecError, parse_spec, query, run_sweep
from trnsim.sweeps.point import command_line, rows_of_result


def test_grid_is_the_cartesian_product_in_file_order():
    sw = parse_spec({"command": "llm", "model": "m", "axes": {"tp": [4, 8], "batch": [1, 8, 32]}})
    pts = sw.points()
    assert len(pts) == 6 and pts[0] == {"model": "m", "tp": 4, "batch": 1} and pts[-1]["tp"] == 8
    assert {(p["tp"], p["batch"]) for p in pts} == {(t, b) for t in (4, 8) for b in (1, 8, 32)}


def test_random_search_is_seeded_and_stays_in_range():
    spec = {"command": "serve", "samples": 200, "seed": 7,
            "axes": {"batch": {"min": 1, "max": 64, "log": True}, "rate": {"min": 0.5, "max": 2.0}, "tp": [4, 8]}}
    a, b = parse_spec(spec).points(), parse_spec(spec).points()
    assert a == b
    assert all(1 <= p["batch"] <= 64 and isinstance(p["batch"], int) and 0.5 <= p["rate"] <= 2.0 for p in a)
    assert {p["tp"] for p in a} == {4, 8}
    # log-uniform: about half the draws below the geometric mean (8)
    assert 0.35 < sum(p["batch"] < 8 for p in a) / len(a) < 0.65
    assert parse_spec({**spec, "seed": 8}).points() != a


@pytest.mark.parametrize("doc,msg", [
    ({"command": "nope"}, "command: expected one of"),
    ({"command": "llm", "axes": {"tp": 4}}, "axes.tp: expected a list"),
    ({"command": "llm", "axes": {"tp": []}}, "axes.tp: an empty list"),
    ({"command": "llm", "samples": 0, "axes": {}}, "samples: expected a positive integer"),
    ({"command": "llm", "samples": 3, "axes": {"b": {"min": 0, "max": 4, "log": True}}}, "a log range needs min > 0"),
    ({"command": "llm", "tp": 4, "axes": {"tp": [8]}}, "tp: both a fixed option and an axis"),
])
def test_bad_sweep_files_are_one_line_errors(doc, msg):
    with pytest.raises(SweepSpecError, match=msg):
        parse_spec(doc)


def test_command_line_and_flattening():
    argv = command_line("trnsim", "collective", [], {"op": "all-reduce", "sizes": ["1K", "1M"], "step_factor": 4,
                                                     "check": True, "trace": None})
    assert argv == ["trnsim", "collective", "--op", "all-reduce", "--sizes", "1K,1M", "--step-factor", "4", "--check",
                    "--json"]
    rows = rows_of_result({"time_s": 1.0, "tp": 8, "breakdown": {"matmul_s": 0.5}, "ops": [{"x": 1}]}, {"tp": 4})
    assert rows == [{"tp": 4, "time_s": 1.0, "result_tp": 8, "breakdown_matmul_s": 0.5}]


def test_sweep_on_local_ray_interrupted_resumed_and_queried(tmp_path, monkeypatch):
    monkeypatch.setenv("TRNSIM_SWEEP_RAY_WORTH_S", "0")  # Ray at once: these points are too quick to start it for
    exe = trnsim_cli()
    spec = {"command": "collective", "system": "trn2.48xlarge", "sizes": "64K,4M", "trnsim": exe,
            "axes": {"op": ["all-reduce", "all-gather"], "algorithm": ["ring", "direct", "no-such-algorithm"]}}
    out = tmp_path / "results.parquet"
    first = run_sweep(spec, out, local=0, progress=False, limit=2)  # "interrupted" after two points
    assert first["ran"] == 2 and first["points"] == 6
    second = run_sweep(spec, out, local=2, progress=False)  # on Ray, skipping what is done
    assert second["skipped"] == 2 and second["ran"] == 4 and second["failed"] == 2
    assert second["ray_started"] and second["driver_points"] + second["ray_points"] == 4  # this process helps while Ray starts
    cols, rows = query(out, "select op, algorithm, status, size_bytes, time_s, busbw_gbps, error from results "
                            "order by op, algorithm, size_bytes")
    got = [dict(zip(cols, r)) for r in rows]
    assert len(got) == 2 * 2 * 2 + 2  # ok points: one row per size; failed points: one row each
    for op in ("all-reduce", "all-gather"):
        for alg in ("ring", "direct"):
            ref = json.loads(subprocess.run([exe, "collective", "--op", op, "--algorithm", alg, "--system",
                                             "trn2.48xlarge", "--sizes", "64K,4M", "--json"], capture_output=True,
                                            text=True, check=True).stdout)
            mine = [g for g in got if g["op"] == op and g["algorithm"] == alg]
            assert [(g["size_bytes"], g["time_s"], g["busbw_gbps"]) for g in mine] == \
                   [(r["size_bytes"], r["time_s"], r["busbw_gbps"]) for r in ref]
    bad = [g for g in got if g["status"] == "error"]
    assert len(bad) == 2 and all("no-such-algorithm" in g["error"] for g in bad)
    # a third run has nothing left but the failed points, which it retries (and they fail again)
    third = run_sweep(spec, out, local=0, progress=False)
    assert third["skipped"] == 4 and third["ran"] == 2
    assert query(out, "select count(*) from results")[1][0][0] == 10
    p = subprocess.run([sys.executable, "-m", "trnsim", "sweep", "-o", str(out), "--json", "--query",
                        "select count(distinct point_id) n from results where status = 'ok'"],
                       capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT / "python")})
    assert p.returncode == 0 and json.loads(p.stdout) == [{"n": 4}]
    p = subprocess.run([sys.executable, "-m", "trnsim", "sweep", "-o", str(out), "--query", "select nope from results"],
                       capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT / "python")})
    assert p.returncode == 2 and p.stderr.startswith("trnsim: error: --query: ") and p.stderr.count("\n") == 1
    from trnsim.reports import report_html
    html = report_html([out])  # the Parquet drawn as a sweep: axes from its metadata, the failed points listed
    assert "Sweep: results" in html and "axes: op, algorithm" in html and "no-such-algorithm" in html
    assert "Pareto front: throughput vs latency" in html


def test_ctrl_c_keeps_the_finished_points_and_a_rerun_resumes(tmp_path):
    import signal
    import time
    import yaml
    exe = trnsim_cli()
    spec = tmp_path / "sweep.yaml"
    spec.write_text(yaml.safe_dump({"command": "kernel", "args": ["matmul"], "functional": True, "trnsim": exe,
                                    "axes": {"m": [256, 512], "k": [512, 1024], "n": [512]}}))
    out = tmp_path / "r.parquet"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python")}
    p = subprocess.Popen([sys.executable, "-m", "trnsim", "sweep", str(spec), "-o", str(out), "--local", "0"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    parts = tmp_path / "r.parquet.parts"
    deadline = time.monotonic() + 60
    while not (parts.exists() and any(parts.glob("part-*.parquet"))) and time.monotonic() < deadline:
        time.sleep(0.05)
    p.send_signal(signal.SIGINT)  # as Ctrl-C does
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130 and "sweep interrupted" in err and "Traceback" not in err, err
    saved = query(out, "select count(*) from results where status = 'ok'")[1][0][0]
    assert 1 <= saved < 4
    done = run_sweep(str(spec), out, local=0, progress=False)
    assert done["skipped"] == saved and done["ran"] == 4 - saved and done["failed"] == 0
    assert query(out, "select count(distinct point_id) from results where status = 'ok'")[1][0][0] == 4


def _fake_command(tmp_path, name: str, body: str) -> str:
    """An executable standing in for trnsim: the sweep file's `trnsim:` may name any command."""
    exe = tmp_path / name
    exe.write_text(f"#!{sys.executable}\nimport json, sys, time\n{body}\n")
    exe.chmod(0o755)
    return str(exe)


def test_a_point_reports_its_own_cpu_time_and_times_out(tmp_path):
    from trnsim.sweeps.point import run_point
    out = 'print(json.dumps({"kind": "run", "time_s": 1.0}))'
    busy = _fake_command(tmp_path, "busy", "t = time.process_time()\nwhile time.process_time() - t < 0.4: pass\n" + out)
    idle = _fake_command(tmp_path, "idle", "time.sleep(0.4)\n" + out)
    [b] = run_point(busy, "run", [], {"x": 1}, "b")
    [i] = run_point(idle, "run", [], {"x": 1}, "i")
    assert b["status"] == i["status"] == "ok" and b["time_s"] == 1.0
    assert 0.4 <= b["cpu_s"] <= 0.4 + 0.3  # the loop, plus Python's start
    assert i["cpu_s"] < 0.3 and i["wall_s"] >= 0.4  # sleeping costs wall time, not CPU
    [t] = run_point(_fake_command(tmp_path, "slow", "time.sleep(30)"), "run", [], {"x": 1}, "t", timeout_s=0.5)
    assert t["status"] == "error" and t["error"] == "timed out after 0.5 s" and t["wall_s"] < 10


def test_ray_task_needs_the_trnsim_command_but_not_its_python_package():
    """Ray pickles run_point by value: a worker unpickles and runs it without importing trnsim."""
    from ray import cloudpickle
    from trnsim.sweeps import point
    exe = trnsim_cli()
    cloudpickle.register_pickle_by_value(point)  # as ray_run does before submitting
    blob = cloudpickle.dumps(point.run_point)
    code = ("import json, pickle, sys; f = pickle.loads(sys.stdin.buffer.read()); "
            "rows = f(sys.argv[1], 'collective', [], {'op': 'all-gather', 'system': 'trn2.48xlarge', 'sizes': '1M'}, 'p'); "
            "print(json.dumps({'imported': sorted(m for m in sys.modules if m.split('.')[0] == 'trnsim'), 'rows': rows}))")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    p = subprocess.run([sys.executable, "-c", code, exe], input=blob, capture_output=True, env=env, check=True)
    got = json.loads(p.stdout)
    ref = json.loads(subprocess.run([exe, "collective", "--op", "all-gather", "--system", "trn2.48xlarge", "--sizes",
                                     "1M", "--json"], capture_output=True, text=True, check=True).stdout)
    assert got["imported"] == []
    assert [r["time_s"] for r in got["rows"]] == [r["time_s"] for r in ref] and got["rows"][0]["status"] == "ok"


def test_rows_are_written_at_once_then_in_batches():
    from trnsim.progress import Progress
    from trnsim.sweeps.runner import _Sink

    class Store:
        parts: list = []

        def append(self, rows):
            self.parts.append(len(rows))

    store = Store()
    sink = _Sink(store, Progress("t", quiet=True))
    for i in range(4):  # within microseconds: the first is written at once, the rest wait for the next flush
        sink.add([{"point_id": str(i), "status": "ok" if i else "error"}])
    assert store.parts == [1]
    sink.flush()
    assert store.parts == [1, 3] and sink.failed == 1


def test_the_local_ray_is_lean_and_leaves_nothing_running():
    """The in-process Ray has no autoscaler monitor, log monitor or dashboard (a Ray upgrade that
    moves Ray's internals falls back to ray.init with a warning, and fails this test)."""
    import ray
    from trnsim.sweeps.local_ray import connect
    if ray.is_initialized():
        pytest.skip("a Ray is already connected in this process")
    c = connect(None, 1)
    try:
        kinds = set(c._node.all_processes)
        pids = [info.process.pid for infos in c._node.all_processes.values() for info in infos]
        assert c.lean and c.cpus == 1
        assert {"gcs_server", "raylet"} <= kinds and not kinds & {"monitor", "log_monitor", "dashboard"}
        assert ray.get(ray.remote(lambda: 6 * 7).remote()) == 42
    finally:
        c.stop()
    assert not ray.is_initialized()
    for pid in pids:
        assert not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().split(") ")[1][0] == "Z"


def test_ctrl_c_while_local_ray_starts_stops_the_points_this_process_runs(tmp_path):
    """The driver runs points while Ray starts: Ctrl-C kills them (they are in flight, not failed)
    and Ray is stopped once started, instead of waiting for the points to end."""
    import signal
    import time
    import yaml
    slow = _fake_command(tmp_path, "slow", 'time.sleep(60)\nprint(json.dumps({"kind": "run", "time_s": 1.0}))')
    spec = tmp_path / "sweep.yaml"
    spec.write_text(yaml.safe_dump({"command": "run", "trnsim": slow, "axes": {"x": [1, 2, 3, 4]}}))
    out = tmp_path / "r.parquet"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python"), "TRNSIM_SWEEP_RAY_WORTH_S": "0"}
    p = subprocess.Popen([sys.executable, "-m", "trnsim", "sweep", str(spec), "-o", str(out), "--local", "2"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    time.sleep(1.5)
    t0 = time.monotonic()
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130 and "sweep interrupted: 0 rows saved" in err and "Traceback" not in err, err
    assert time.monotonic() - t0 < 30  # not the points' 60 s
    left = subprocess.run(["pgrep", "-f", slow], capture_output=True, text=True).stdout.split()
    assert left == []


def test_local_ray_runs_its_points_in_one_worker_as_many_at_once_as_cpus(tmp_path, monkeypatch):
    """On the lean local Ray one Python worker (the point pool) serves both CPUs: the points Ray
    ran share one parent process, other than this one, and two of them overlap in time. (The
    points this process runs while Ray starts wait for Ray's first, so that Ray gets some.)"""
    import yaml
    go = tmp_path / "ray-started"
    body = (f'import os, pathlib\ngo = pathlib.Path({str(go)!r})\n'
            'if os.getppid() == int(os.environ["DRIVER"]):\n'
            '    while not go.exists() and time.time() < {t}: time.sleep(0.05)\n'
            'else:\n    go.touch()\n'
            't0 = time.time()\ntime.sleep(0.3)\n'
            'print(json.dumps({{"kind": "run", "time_s": 1.0, "parent": os.getppid(), "t0": t0, "t1": time.time()}}))')
    import time
    monkeypatch.setenv("TRNSIM_SWEEP_RAY_WORTH_S", "0")
    spec = tmp_path / "sweep.yaml"
    spec.write_text(yaml.safe_dump({"command": "run", "env": {"DRIVER": str(os.getpid())}, "axes": {"x": list(range(8))},
                                    "trnsim": _fake_command(tmp_path, "nap", body.format(t=time.time() + 60))}))
    s = run_sweep(str(spec), tmp_path / "r.parquet", local=2, progress=False)
    assert s["ran"] == 8 and s["failed"] == 0 and s["ray_points"] >= 4
    _, rows = query(tmp_path / "r.parquet", f"select parent, t0, t1 from results where parent <> {os.getpid()} order by t0")
    assert len(rows) == s["ray_points"] and len({r[0] for r in rows}) == 1
    assert any(b[1] < a[2] for a, b in zip(rows, rows[1:]))  # two at once


def test_a_sweep_shorter_than_rays_start_does_not_start_it(tmp_path, monkeypatch):
    """Quick points: this process runs them all, two at once, and Ray is never started; points
    whose CPU time adds up to more than Ray's start make it start (the rest then go to Ray)."""
    import yaml
    monkeypatch.setenv("TRNSIM_SWEEP_RAY_WORTH_S", "20")  # 3 s by default; more here, for a loaded machine
    spec = tmp_path / "sweep.yaml"
    out = 'print(json.dumps({"kind": "run", "time_s": 1.0}))'
    spec.write_text(yaml.safe_dump({"command": "run", "trnsim": _fake_command(tmp_path, "quick", out),
                                    "axes": {"x": list(range(10))}}))
    s = run_sweep(str(spec), tmp_path / "quick.parquet", local=2, progress=False)
    assert not s["ray_started"] and s["driver_points"] == 10 and s["ray_points"] == 0 and s["failed"] == 0
    assert query(tmp_path / "quick.parquet", "select count(*) from results where status = 'ok'")[1] == [(10,)]
    monkeypatch.setenv("TRNSIM_SWEEP_RAY_WORTH_S", "0.5")  # 12 points of 0.3 CPU-s, 2 at a time: 1.8 s > 0.5 s
    busy = "t = time.process_time()\nwhile time.process_time() - t < 0.3: pass\n"
    spec.write_text(yaml.safe_dump({"command": "run", "trnsim": _fake_command(tmp_path, "busy", busy + out),
                                    "axes": {"x": list(range(12))}}))
    s = run_sweep(str(spec), tmp_path / "slow.parquet", local=2, progress=False)
    assert s["ray_started"] and s["driver_points"] + s["ray_points"] == 12 and s["failed"] == 0


def test_query_is_bounded_in_memory_and_time(tmp_path):
    """The user's SQL runs in a child capped at TRNSIM_MAX_MEMORY and stopped after --query-timeout-s:
    `repeat('x', 10^9)` took 4 GB, and a scan of 10^13 rows ran without end."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    out = tmp_path / "r.parquet"
    pq.write_table(pa.table({"a": [1, 2, 3]}), out)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python"), "TRNSIM_MAX_MEMORY": "1G"}

    def sweep(*args):
        return subprocess.run([sys.executable, "-m", "trnsim", "sweep", "-o", str(out), *args],
                              capture_output=True, text=True, env=env, timeout=60)
    p = sweep("--query", "select length(repeat('x', 1000000000))")
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "the limit is 1.0 GiB" in p.stderr, p.stderr
    p = sweep("--query", "select count(*) from range(10000000000000)", "--query-timeout-s", "2")
    assert p.returncode == 2 and p.stderr == ("trnsim: error: --query: still running after 2 s; stopped "
                                              "(--query-timeout-s allows more)\n"), p.stderr
    p = sweep("--query-timeout-s", "2")
    assert p.returncode == 2 and "--query-timeout-s needs --query" in p.stderr
    assert query(out, "select sum(a) from results", timeout_s=30) == (["sum(a)"], [(6,)])
