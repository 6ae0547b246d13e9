"""A sweep's points as Ray tasks. For a local Ray this process runs points itself, one per CPU, from
the start; Ray is started once the first points show that the rest will outlast its start (2-3 s
and 2 CPU-s on 2 cores: a shorter sweep is done before Ray would be up, and never starts it), and
the rest go to Ray once Ray's first point is back.

Tasks run `point.run_point`, pickled by value: a worker imports Ray and nothing of trnsim (its
package loads the C++ module, 0.2 CPU-s per worker), so the nodes of a cluster need only the
trnsim command, not the Python package.
"""
from __future__ import annotations

import collections
import os
import threading
import time
import warnings
from typing import Any, Callable, Optional

from trnsim.sweeps import point
from trnsim.sweeps.local_ray import connect
from trnsim.sweeps.point import _opts, run_point

WINDOW_PER_CPU = 2  # local tasks in flight per CPU: each busy with one queued behind, the rest left to share
RAY_WORTH_S = 3.0  # start a local Ray only when the points left are expected to take longer than this


def ray_worth_s() -> float:
    """RAY_WORTH_S, or $TRNSIM_SWEEP_RAY_WORTH_S (0: start the local Ray at once, whatever the sweep)."""
    v = os.environ.get("TRNSIM_SWEEP_RAY_WORTH_S")
    try:
        return max(0.0, float(v)) if v else RAY_WORTH_S
    except ValueError:
        warnings.warn(f"sweep: TRNSIM_SWEEP_RAY_WORTH_S={v!r} is not a number of seconds; using {RAY_WORTH_S}",
                      stacklevel=2)
        return RAY_WORTH_S


class _DriverRunner:
    """`n` threads running points from the shared queue in this process until `halt` (Ray is ready)."""

    def __init__(self, n: int, queue: collections.deque, run: Callable[[str, dict, set], list[dict]], sink):
        self.queue, self.run_one, self.sink = queue, run, sink
        self.halt = threading.Event()
        self.live: set = set()  # the points' processes running now
        self._interrupted = False
        self.ran = 0
        self.cost_s = 0.0  # CPU time of the points finished here
        self.finished = threading.Event()  # set when a point finishes
        self._count = threading.Lock()
        self.error: Optional[BaseException] = None
        self._threads = [threading.Thread(target=self._loop, name=f"sweep-driver-{i}", daemon=True) for i in range(n)]
        for t in self._threads:
            t.start()

    def _loop(self) -> None:
        try:
            while not self.halt.is_set():
                try:
                    pid, p = self.queue.popleft()
                except IndexError:
                    return
                rows = self.run_one(pid, p, self.live)
                if self._interrupted:  # killed by Ctrl-C: in flight, not failed (a re-run runs it)
                    return
                self.sink.add(rows)
                with self._count:
                    self.ran += 1
                    self.cost_s += rows[0].get("cpu_s") or rows[0].get("wall_s") or 0.0
                self.finished.set()
        except BaseException as e:  # re-raised in the caller's thread
            self.error = e

    def ray_worth_starting(self, cpus: int) -> bool:
        """Waits until the points finished here tell whether those left would outlast Ray's start
        (True), or none is left for Ray (False). The estimate, once each runner has finished two
        points, is the mean CPU time of the points so far times the points left over the CPUs: the
        time they take on idle cores, whatever the load (a busy machine makes every point slower
        but Ray's start no cheaper). Until then, the first points taking RAY_WORTH_S is a yes."""
        t0, worth = time.perf_counter(), ray_worth_s()
        while self.queue and self.error is None:
            with self._count:
                ran, cost = self.ran, self.cost_s
            full = ran >= 2 * cpus  # two points a runner: one alone says little
            if full and cost / ran * len(self.queue) / cpus > worth:
                return True
            if not full and time.perf_counter() - t0 >= worth:
                return True
            self.finished.wait(0.05)
            self.finished.clear()
        return self.error is not None  # a runner failed: Ray runs the rest, the error is raised after

    def stop(self, interrupted: bool = False) -> None:
        self.halt.set()
        if interrupted:
            self._interrupted = True
            for proc in list(self.live):
                proc.kill()
        for t in self._threads:
            t.join()


def run_on_ray(sw, exe: str, todo: list, sink, address: Optional[str], local: Optional[int],
               timing: dict[str, Any]) -> None:
    """Runs `todo` [(point id, options)] into `sink`; fills timing's ray_start_s, driver_points and ray_points."""
    queue = collections.deque(todo)
    run_one = lambda pid, p, live: run_point(exe, sw.command, sw.args, p, pid, sw.timeout_s, sw.env, live)  # noqa: E731
    cpus = local or os.cpu_count() or 1
    helper = _DriverRunner(cpus, queue, run_one, sink) if address is None else None
    cluster, interrupted = None, False
    timing["ray_started"] = False
    try:
        # else this process runs (or is finishing) every point: Ray would only have cost its start
        if helper is None or helper.ray_worth_starting(cpus):
            t0 = time.perf_counter()
            timing["ray_started"] = True
            cluster = connect(address, local)
            timing["ray_start_s"] = time.perf_counter() - t0
            _dispatch(sw, exe, queue, sink, helper, cluster)
    except KeyboardInterrupt:
        interrupted = True
        raise
    finally:
        if helper is not None:
            helper.stop(interrupted)
            timing["driver_points"] = helper.ran
        timing["ray_points"] = len(todo) - timing.get("driver_points", 0) - len(queue)
        if cluster is not None:
            t1 = time.perf_counter()
            cluster.stop()
            timing["ray_stop_s"] = time.perf_counter() - t1
    if helper is not None and helper.error is not None:
        raise helper.error


def _dispatch(sw, exe: str, queue: collections.deque, sink, helper: Optional[_DriverRunner], cluster) -> None:
    """Submits points from the queue (all at once on a cluster, whose autoscaler sees the demand; a
    window on a local Ray, so that the driver's runner can take points until Ray's first is back).
    On the lean local Ray the points go to one actor holding every CPU that runs that many at once
    (one Python worker to start, not one per CPU); elsewhere each point is a task of one CPU."""
    import ray
    from ray import cloudpickle
    cloudpickle.register_pickle_by_value(point)
    if cluster.lean:
        pool = ray.remote(num_cpus=cluster.cpus, max_concurrency=cluster.cpus, max_restarts=0,
                          max_task_retries=0)(point.PointPool).remote()
        call = pool.run.remote
    else:
        call = ray.remote(num_cpus=1, max_retries=0)(run_point).remote
    window = WINDOW_PER_CPU * cluster.cpus if helper is not None else len(queue)
    pending: dict[Any, tuple[str, dict]] = {}

    def submit() -> None:
        while len(pending) < window:
            try:
                pid, p = queue.popleft()
            except IndexError:
                return
            pending[call(exe, sw.command, sw.args, p, pid, sw.timeout_s, sw.env)] = (pid, p)

    submit()
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1, timeout=1.0)
        for ref in ready:
            pid, p = pending.pop(ref)
            try:
                rows = ray.get(ref)
            except Exception as e:  # a worker lost, not a failed point: record it, go on
                rows = [{"point_id": pid, **_opts(p), "status": "error", "error": f"ray: {type(e).__name__}: {e}"}]
            sink.add(rows)
            if helper is not None:
                helper.halt.set()  # Ray's workers are up: the driver's runner takes no more points
        submit()
