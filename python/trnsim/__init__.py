"""trnsim: an executable model of a Trainium-class AI system.

The C++ core is in trnsim._core; this package adds the Pythonic surface on top of it.
"""
from trnsim import _core
from trnsim._core import ConfigError, ShapeError, TrnsimError, UnsupportedError

__version__ = _core.__version__

__all__ = ["ConfigError", "ShapeError", "TrnsimError", "UnsupportedError", "__version__"]
