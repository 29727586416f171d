"""Atomic writes of files meant to be opened by people (videos, plots, the report page)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from retarget.atomic_io import atomic_write


def write_shared(path: Path, write_fn: Callable[[Path], None]) -> None:
    """:func:`retarget.atomic_io.atomic_write`, which already gives the file the usual 0644 (less the
    umask) instead of mkstemp's 0600, so a browser or web server run by someone else can read it."""
    atomic_write(Path(path), write_fn)
