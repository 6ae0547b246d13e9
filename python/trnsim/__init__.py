"""trnsim: an executable model of a Trainium-class AI system.

The C++ core is in trnsim._core; this package adds the Pythonic surface on top of it.
"""
from trnsim import _core
from trnsim._core import ConfigError, ConstantRequiredError, ShapeError, TrnsimError, UnsupportedError
from trnsim.hw import chip_presets, load_chip, load_system, preset_yaml, specs, system_presets
from trnsim.collectives import collective, collective_algorithms, collective_ops, collective_run
from trnsim.kernels import KernelBuilder, kernel, kernel_list, run
from trnsim.compiler import CompiledModel, compile_onnx, load_compiled, supported_ops
from trnsim.conversion import convert  # module named apart so it cannot shadow the function
from trnsim.tensor_parallel import run_tensor_parallel
from trnsim.gpu import gpu_offline
from trnsim.llm import llm, llm_model, llm_models
from trnsim.train import train
from trnsim.serve import serve, serve_options
from trnsim.compare import compare

__version__ = _core.__version__

__all__ = ["ConfigError", "ConstantRequiredError", "ShapeError", "TrnsimError", "UnsupportedError", "__version__"]
__all__ += ["specs", "load_chip", "load_system", "chip_presets", "system_presets", "preset_yaml"]
__all__ += ["collective", "collective_run", "collective_algorithms", "collective_ops"]
__all__ += ["kernel", "kernel_list", "run", "KernelBuilder"]
__all__ += ["compile_onnx", "CompiledModel", "supported_ops", "load_compiled", "convert"]
__all__ += ["train"]
__all__ += ["gpu_offline"]
__all__ += ["llm", "llm_model", "llm_models"]
__all__ += ["serve", "serve_options"]
__all__ += ["compare"]

from trnsim.progress import Progress


def report(results, output="report.html", title=None):
    """Draws results (paths of --json files or .parquet, or result dicts) as one HTML file; see trnsim.reports."""
    from trnsim.reports import build_report
    return build_report(results if isinstance(results, (list, tuple)) else [results], output, title)


def sweep(spec, output="results.parquet", address=None, local=None, progress=True):
    """Runs a sweep (a sweep.yaml path or the same as a dict) on Ray into Parquet; see trnsim.sweeps."""
    from trnsim.sweeps import run_sweep
    return run_sweep(spec, output, address=address, local=local, progress=progress)


__all__ += ["report", "sweep", "Progress"]


# PyTorch front end (issue 4): trnsim.trace, and torch.compile(backend="trnsim") registered with
# TorchDynamo once torch._dynamo is imported, so `import trnsim` never imports torch itself.
def trace(model, example_inputs, chip="trn2", dtype="fp32", mode="functional", batch=None, opset=17):
    """Compile a PyTorch module for the simulated chip; see trnsim.torch_backend.trace."""
    from trnsim.torch_backend import trace as _trace
    return _trace(model, example_inputs, chip=chip, dtype=dtype, mode=mode, batch=batch, opset=opset)


def _install_torch_backend_hook():
    import importlib.abc
    import importlib.util
    import sys

    def register():
        try:
            from trnsim.torch_backend import register as _register
            _register()
        except Exception as e:  # a broken torch must not break `import trnsim`
            import warnings
            warnings.warn(f"trnsim: could not register the torch.compile backend: {e}")

    if "torch._dynamo" in sys.modules:
        register()
        return
    if "torch" not in sys.modules and importlib.util.find_spec("torch") is None:
        return  # no torch here: nothing to register

    class _After(importlib.abc.Loader):  # runs the real loader, then registers
        def __init__(self, loader):
            self.loader = loader

        def create_module(self, spec):
            return self.loader.create_module(spec)

        def exec_module(self, module):
            module.__loader__ = module.__spec__.loader = self.loader  # hide the wrapper
            self.loader.exec_module(module)
            register()

        def __getattr__(self, name):  # get_source, get_filename, ...: the real loader's
            return getattr(self.loader, name)

    class _Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name != "torch._dynamo":
                return None
            sys.meta_path.remove(self)
            spec = importlib.util.find_spec(name)
            if spec is not None and spec.loader is not None:
                spec.loader = _After(spec.loader)
            return spec

    sys.meta_path.insert(0, _Finder())


_install_torch_backend_hook()
__all__ += ["trace"]


# Reports of torch.compile(backend="trnsim") runs (issue 11 item 3, issue 12 item 6): the last
# graph, or the whole session (programs compiled, runs, CPU fallbacks, TTFT/TPOT of a generation).
def last_report(all=False):
    """The report of the graph that ran last on the simulated chip; all=True: session_report()."""
    from trnsim.torch_backend import last_report as _last
    return _last(all=all)


def session_report():
    """Every graph since import or reset_session(); see trnsim.torch_backend.session_report."""
    from trnsim.torch_backend import session_report as _session
    return _session()


def reset_session():
    from trnsim.torch_backend import reset_session as _reset
    _reset()


__all__ += ["last_report", "session_report", "reset_session"]
