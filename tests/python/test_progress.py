"""The progress helper: plain lines off a terminal (rate, ETA by the closed form), nothing when
quiet, a rich bar on a terminal; the stderr line protocol round-trips."""
import io

from trnsim.progress import Progress, parse_progress_line, progress_line


class Tty(io.StringIO):
    def isatty(self):
        return True


def test_lines_when_not_a_terminal_and_the_eta_closed_form():
    s = io.StringIO()
    with Progress("calibration", total=4, stream=s, min_interval_s=0.0, unit="rows") as p:
        assert p.mode == "lines"
        for _ in range(4):
            p.advance()
        t0 = p._t0
        assert p.eta_s(t0 + 8.0) == 0.0
        p.done = 1
        assert abs(p.eta_s(t0 + 2.0) - 6.0) < 1e-9  # 2 s per row, 3 rows left
        p.done = 4
    lines = s.getvalue().splitlines()
    assert len(lines) == 4 and lines[-1].startswith("calibration: 4/4 rows") and "rows/s" in lines[-1]


def test_nothing_in_json_mode_and_a_bar_on_a_terminal():
    s = io.StringIO()
    with Progress("sweep", total=3, stream=s, quiet=True) as p:
        p.advance(3)
    assert s.getvalue() == "" and p.mode == "quiet"
    t = Tty()
    with Progress("sweep", total=3, stream=t) as p:
        assert p.mode == "bar"
        p.advance(3)
    assert "3/3" in t.getvalue() and "sweep" in t.getvalue()


def test_protocol_line_round_trip():
    assert parse_progress_line(progress_line(3, 64, "compile layer 3") + "\n") == (3, 64, "compile layer 3")
    assert parse_progress_line("trnsim-progress: 5/9") == (5, 9, "")
    assert parse_progress_line(progress_line(7, None, "time kernel shapes")) == (7, None, "time kernel shapes")
    assert parse_progress_line("trnsim: simulated 1 us") is None


def test_callable_as_the_calibration_callback():
    s = io.StringIO()
    with Progress("decoder", stream=s, min_interval_s=0.0) as p:
        for i in range(3):
            p(i + 1, 3)  # rows(progress=p) calls progress(done, total)
    assert p.done == 3 and p.total == 3 and s.getvalue().splitlines()[-1].startswith("decoder: 3/3")


def _tiny_model(path):
    """x @ W + b with two initializers and three nodes after import (MatMul, Add, Relu)."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((64, 32)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(32).astype(np.float32), "b")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Add", ["m", "b"], ["a"]),
             helper.make_node("Relu", ["a"], ["y"])]
    g = helper.make_graph(nodes, "tiny", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 64])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 32])], [w, b])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)


def test_cpp_commands_speak_the_protocol_and_stay_quiet_in_json(tmp_path):
    import os
    import subprocess
    from cli_path import trnsim_cli
    model = tmp_path / "tiny.onnx"
    _tiny_model(str(model))
    env = dict(os.environ, TRNSIM_PROGRESS="1")
    cmd = [trnsim_cli(), "run", str(model), "--chip", "trn1", "--timing-only"]
    err = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stderr
    lines = [p for p in map(parse_progress_line, err.splitlines()) if p]
    last = {label: (done, total) for done, total, label in lines}
    assert last["import initializers"] == (2, 2)  # the model's two initializers
    done, total = last["lower nodes"]
    assert done == total and total >= 1
    quiet = subprocess.run(cmd + ["--json"], env=env, capture_output=True, text=True, check=True).stderr
    assert not [ln for ln in quiet.splitlines() if parse_progress_line(ln)]
