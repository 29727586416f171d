"""Lazy re-exports for the package roots (here because robots is the lowest layer): ``import retarget`` stays
cheap, ``retarget.retarget_file`` loads its module.

A package's ``__init__`` names each public object and the module that defines it; the first attribute access
imports that module (PEP 562). Type checkers read the same names from an ``if TYPE_CHECKING:`` import block.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_exports(package: str, exports: dict[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``, whose public names map to their defining modules."""
    namespace = importlib.import_module(package).__dict__

    def __getattr__(name: str) -> Any:
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(exports[name]), name)
        namespace[name] = value  # later lookups skip __getattr__
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *exports})

    return __getattr__, __dir__
