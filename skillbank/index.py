"""Deprecated: the search indexes moved to :mod:`skillbank.store.index` (the store layer owns
the index and its sync)."""

import warnings

from skillbank.store.index import *  # noqa: F401,F403
from skillbank.store.index import __all__  # noqa: F401

warnings.warn("skillbank.index moved to skillbank.store.index; import it from there",
              DeprecationWarning, stacklevel=2)
