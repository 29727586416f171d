"""``c_output_silenced``: hide what C libraries print (PyBullet's build banner, Warp's CUDA probe)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def c_output_silenced() -> Iterator[None]:
    """Send what C code writes to file descriptors 1 and 2 to /dev/null (a CLI's output stays its report)."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 1)
            os.dup2(null.fileno(), 2)
        yield
    finally:
        for fd, copy in zip((1, 2), saved):
            os.dup2(copy, fd)
            os.close(copy)
