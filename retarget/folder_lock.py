"""One writer per output folder: an advisory ``flock`` on a lock file, held while the command writes there.

The lock dies with its process (SIGKILL included), so a killed run never leaves a stale lock behind; a second
command pointed at the same folder meanwhile is refused with one line instead of interleaving its files.
"""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from retarget.errors import AsapRetargetError


class FolderLock:
    """``with FolderLock(folder, ".train.lock", "training", ConfigError):`` — raises ``error`` if it is held."""

    def __init__(self, folder: Path, name: str, what: str, error: type[AsapRetargetError]):
        self.path, self.what, self.error = Path(folder) / name, what, error
        self.fh: TextIO | None = None

    def __enter__(self):
        try:
            import fcntl
        except ImportError:  # no flock on this platform: run unlocked
            return self
        self.fh = fh = open(self.path, "a")
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            fh.close()
            self.fh = None
            raise self.error(
                f"{self.path.parent}: another {self.what} is writing to this folder ({self.path.name} is locked)"
            ) from exc
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fh is not None:
            self.fh.close()
