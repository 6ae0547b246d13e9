"""trnsim: an executable model of a Trainium-class AI system.

The C++ core is in trnsim._core; this package adds the Pythonic surface on top of it.
"""
from trnsim import _core
from trnsim._core import ConfigError, ShapeError, TrnsimError, UnsupportedError
from trnsim.hw import chip_presets, load_chip, load_system, preset_yaml, specs, system_presets
from trnsim.collectives import collective, collective_algorithms, collective_ops, collective_run
from trnsim.kernels import KernelBuilder, kernel, kernel_list, run

__version__ = _core.__version__

__all__ = ["ConfigError", "ShapeError", "TrnsimError", "UnsupportedError", "__version__"]
__all__ += ["specs", "load_chip", "load_system", "chip_presets", "system_presets", "preset_yaml"]
__all__ += ["collective", "collective_run", "collective_algorithms", "collective_ops"]
__all__ += ["kernel", "kernel_list", "run", "KernelBuilder"]
