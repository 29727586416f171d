"""Atomic writes of files meant to be opened by people (videos, plots, the report page)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from retarget.asap_pkl import atomic_write


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_shared(path: Path, write_fn: Callable[[Path], None]) -> None:
    """Like :func:`retarget.asap_pkl.atomic_write`, but the file gets the usual 0644 (less the
    umask) instead of mkstemp's 0600, so a browser or web server run by someone else can read it."""

    def write(tmp: Path) -> None:
        write_fn(tmp)
        os.chmod(tmp, 0o666 & ~_umask())

    atomic_write(Path(path), write)
