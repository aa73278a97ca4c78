"""Your agent on the command line: ``--agent module:factory`` (``skillbank eval``) and
``--gate-agent module:factory`` (``skillbank evolve``) load the factory here; both read the
task file with :func:`skillbank.consistency._taskfile.load_tasks`."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from typing import Any, Callable

from skillbank.cli._common import fail

__all__ = ["load_factory"]


def load_factory(spec: str, option: str = "--agent") -> Callable[..., Any]:
    """``package.module:name`` or ``path/to/file.py:name`` -> the callable it names.

    Args:
        spec: What the user passed.
        option: The flag it came with, for the error messages.

    Raises:
        CliError: (through ``fail``) a spec without ``:``, a missing file, a module that does
            not import, or no callable of that name.
    """
    target, sep, name = spec.rpartition(":")
    if not sep or not target or not name:
        fail(f"{option} {spec!r}: use module:factory or path/to/file.py:factory")
    try:
        if target.endswith(".py") or "/" in target or "\\" in target:
            path = Path(target)
            if not path.is_file():
                fail(f"{option} {spec}: no file {path}")
            module_spec = importlib.util.spec_from_file_location(path.stem, path)
            if module_spec is None or module_spec.loader is None:
                fail(f"{option} {spec}: cannot import {path}")
            module = importlib.util.module_from_spec(module_spec)
            sys.modules.setdefault(path.stem, module)
            module_spec.loader.exec_module(module)
        else:
            if "" not in sys.path and str(Path.cwd()) not in sys.path:
                sys.path.insert(0, str(Path.cwd()))  # like `python -m`: the current folder first
            module = importlib.import_module(target)
    except ImportError as exc:
        fail(f"{option} {spec}: cannot import {target} ({exc})")
    factory = getattr(module, name, None)
    if not callable(factory):
        fail(f"{option} {spec}: {target} has no callable {name!r}")
    return factory
