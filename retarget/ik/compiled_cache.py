"""Keep numba's on-disk cache of compiled callers in step with the modules their callees come from.

numba decides whether a cached function is fresh from a hash of the one file that defines it. A compiled
function embeds the machine code of the compiled functions it calls, so a caller in
:mod:`retarget.ik.gauss_newton` cached before an edit of :mod:`retarget.ik.kernel` or
:mod:`retarget.ik.banded` would keep running their old code. :func:`stamp_with_sources` adds those files'
content hashes to the caller's cache key, so an edit of any of them recompiles it once.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from types import ModuleType


def stamp_with_sources(module: ModuleType, sources: Iterable[ModuleType]) -> None:
    """Make the cache of every numba dispatcher defined in `module` stale when any file of `sources` changes.

    Uses numba's cache-file object (``Dispatcher._cache._cache_file._source_stamp``); if a numba version has
    no such attribute the cache keeps numba's own rule (the defining file only)."""
    stamps = []
    for source in sources:
        with open(str(source.__file__), "rb") as f:
            stamps.append((source.__name__, hashlib.sha256(f.read()).digest()))
    for value in vars(module).values():
        if getattr(value, "__module__", None) != module.__name__:
            continue
        cache_file = getattr(getattr(value, "_cache", None), "_cache_file", None)
        if cache_file is not None and hasattr(cache_file, "_source_stamp"):
            cache_file._source_stamp = (cache_file._source_stamp, tuple(stamps))
