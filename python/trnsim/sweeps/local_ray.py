"""Where a sweep's Ray runs: a lean local Ray started in this process, or a user's cluster by address.

The local Ray is a head node without the processes a sweep never uses: the autoscaler monitor
(one node, fixed CPUs; it also ignores SIGTERM, which cost 1 s on every stop), the log monitor
(worker output is not shown: log_to_driver=False) and the dashboard's API server (job submission,
state API). On a 2-core machine these were 1.0-1.4 CPU-s of a 3 CPU-s start, competing with the
points. Ray's public `ray.init` cannot leave them out, so the node is started as `ray.init` starts
it (ray==2.60 is pinned), with those three switched off; if that ever fails, `ray.init` starts a
full Ray, with a warning.
"""
from __future__ import annotations

import contextlib
import os
import signal
import threading
import warnings
from typing import Any, Optional

INIT_KW: dict[str, Any] = {"log_to_driver": False, "configure_logging": False}


class RayCluster:
    """A connected Ray: `cpus` it offers, `lean` (this process started a lean node), `stop()`."""

    def __init__(self, node=None, started_here: bool = False):
        import ray
        self._node, self._started_here = node, started_here
        self.lean = node is not None
        self.cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))

    def stop(self) -> None:
        import ray
        if self._started_here:
            ray.shutdown()
        if self._node is not None:
            self._node.kill_all_processes(check_alive=False, allow_graceful=True, wait=True)
            self._node = None


def connect(address: Optional[str], cpus: Optional[int]) -> RayCluster:
    """A cluster by address (ConnectionError naming it when it cannot be reached), the Ray this
    process is already connected to, or a new local Ray with `cpus` CPUs (default all)."""
    import ray
    if ray.is_initialized():
        return RayCluster()
    if address:
        try:
            ray.init(address=address, **INIT_KW)
        except Exception as e:  # ray raises ConnectionError, ValueError, RuntimeError, ...
            msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise ConnectionError(f"--address {address}: cannot connect to the Ray cluster: {msg}") from None
        return RayCluster(started_here=True)
    with _sigint_held() as interrupted:  # a start cut short leaves Ray's processes running
        cluster = _start_local(cpus or os.cpu_count() or 1)
    if interrupted:
        cluster.stop()
        raise KeyboardInterrupt
    return cluster


def _start_local(n: int) -> RayCluster:
    import ray
    try:
        node = _start_lean_node(n)
    except Exception as e:  # a Ray other than the pinned one: its internals moved
        warnings.warn(f"sweep: cannot start a lean local Ray ({type(e).__name__}: {e}); starting a full one "
                      f"with ray.init, which takes longer", stacklevel=3)
        ray.init(num_cpus=n, include_dashboard=False, **INIT_KW)
        return RayCluster(started_here=True)
    try:
        ray.init(address=node.address, **INIT_KW)
    except BaseException:
        node.kill_all_processes(check_alive=False, allow_graceful=True, wait=True)
        raise
    return RayCluster(node, started_here=True)


@contextlib.contextmanager
def _sigint_held():
    """Ctrl-C is noted, not raised, inside (in the main thread; elsewhere there is no handler to set)."""
    got: list[bool] = []
    if threading.current_thread() is not threading.main_thread():
        yield got
        return
    old = signal.signal(signal.SIGINT, lambda *_: got.append(True))
    try:
        yield got
    finally:
        signal.signal(signal.SIGINT, old if old is not None else signal.default_int_handler)


def _start_lean_node(cpus: int):
    """A head node as ray.init starts one (ray/_private/worker.py, `init`), less three processes."""
    from ray._private.authentication.authentication_token_setup import ensure_token_if_auth_enabled
    from ray._private.node import Node
    from ray._private.parameter import RayParams

    class LeanNode(Node):
        def start_api_server(self, *, include_dashboard, raise_on_failure):  # noqa: ARG002
            self._webui_url = None  # no dashboard, no job or state API: a sweep uses neither

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # as ray.init does for a local Ray
    ensure_token_if_auth_enabled(None, create_token_if_missing=True)
    # no Python workers started ahead of demand: the sweep asks for one (its point pool); a worker
    # per CPU started anyway would cost 0.4 CPU-s each, taken from the points
    params = RayParams(num_cpus=cpus, include_dashboard=False, include_log_monitor=False, no_monitor=True,
                       _system_config={"enable_worker_prestart": False, "prestart_worker_first_driver": False})
    return LeanNode(params, head=True, shutdown_at_exit=False, spawn_reaper=True, ray_init_cluster=True)
