"""The one way this package writes a file: to a temporary file beside it, then an atomic rename.

Before anything is written the target is checked: a path that is an input of the running command
(the same file after resolving links, hard links included) is refused, so ``convert a.pkl a.pkl``
cannot replace its own source; and so is anything at the path that is not a regular file (a device
node, a FIFO, a symlink, a folder), which a rename would silently turn into a plain file. Errors
while writing (read-only folder, disk full, permissions) become :class:`OutputFileError` naming
the file; nothing half-written is left.

Inputs are declared with :func:`reading_inputs` (the CLI declares every existing path it was given).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from pathlib import Path

from retarget.errors import AsapRetargetError

_INPUTS: ContextVar[tuple[tuple[int, int], ...]] = ContextVar("asap_retarget_inputs", default=())
"""(st_dev, st_ino) of every file the running command reads."""


class OutputFileError(AsapRetargetError):
    """An output path that must not or cannot be written."""

    def __init__(self, path: str | Path, problem: str):
        self.path = Path(path)
        super().__init__(f"{self.path}: {problem}")


def _file_id(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISREG(st.st_mode) else None


@contextlib.contextmanager
def reading_inputs(paths: Iterable[str | Path]) -> Iterator[None]:
    """Within this block, :func:`atomic_write` refuses to replace any of the existing files `paths`."""
    ids = tuple(i for i in (_file_id(Path(p)) for p in paths) if i is not None)
    token = _INPUTS.set(_INPUTS.get() + ids)
    try:
        yield
    finally:
        _INPUTS.reset(token)


def check_output_path(path: str | Path) -> None:
    """Raise :class:`OutputFileError` unless `path` is absent or a regular file that is not an input."""
    path = Path(path)
    try:
        st = path.lstat()
    except FileNotFoundError:
        return
    except NotADirectoryError as exc:
        raise OutputFileError(path, _inside_a_file(path)) from exc
    except OSError as exc:
        raise OutputFileError(path, f"cannot check the output path ({exc.strerror})") from exc
    if stat.S_ISLNK(st.st_mode):
        raise OutputFileError(
            path, "is a symbolic link; refusing to replace it (give the real path, or remove the link)"
        )
    if stat.S_ISDIR(st.st_mode):
        raise OutputFileError(path, "is a folder; give a file name for the output")
    if not stat.S_ISREG(st.st_mode):
        kind = "device node" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) else "FIFO or socket"
        raise OutputFileError(path, f"is a {kind}, not a regular file; refusing to replace it (choose another output)")
    if (st.st_dev, st.st_ino) in _INPUTS.get():
        raise OutputFileError(
            path, "the output is the input file; write to another path (inputs are never overwritten)"
        )


def check_output_folder(path: str | Path) -> None:
    """Raise :class:`OutputFileError` unless `path` is a folder, or can be made one (what exists of it and its
    parents is folders). For outputs that are folders (training runs), checked before any work."""
    path = Path(path)
    for existing in (path, *path.parents):
        if not (existing.exists() or existing.is_symlink()):
            continue
        if existing.is_dir():
            return
        if existing == path:
            raise OutputFileError(
                path,
                "exists and is not a folder; a run is written into a folder: give a new folder name, "
                "or the folder of a run to resume",
            )
        raise OutputFileError(path, _inside_a_file(path))


def _inside_a_file(path: Path) -> str:
    """What is wrong with a path below something that is not a folder."""
    above = next((p for p in path.parents if p.exists() and not p.is_dir()), path.parent)
    return f"{above} is not a folder, so nothing can be written inside it; choose another path"


def _os_problem(exc: OSError) -> str:
    what = {
        errno.ENOSPC: "the disk is full; free space or write elsewhere",
        errno.EDQUOT: "the disk quota is exceeded; free space or write elsewhere",
        errno.EFBIG: "the file would exceed the file-size limit; write elsewhere or raise the limit",
        errno.EROFS: "the file system is read-only; write elsewhere",
        errno.EACCES: "permission denied; write elsewhere or fix the folder's permissions",
        errno.EPERM: "operation not permitted; write elsewhere or fix the folder's permissions",
    }.get(exc.errno or 0)
    return f"cannot write: {what}" if what else f"cannot write ({exc.strerror or exc})"


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write(path: str | Path, write_fn: Callable[[Path], object]) -> None:
    """Write through `write_fn(tmp_path)` then rename, so readers never see a partial file."""
    path = Path(path)
    check_output_path(path)
    tmp: Path | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        os.close(fd)
        tmp = Path(tmp_name)
        write_fn(tmp)
        # mkstemp creates the file private (0600); give it the mode a plain open() would.
        os.chmod(tmp, 0o666 & ~_current_umask())
        check_output_path(path)  # the path may have changed while writing
        os.replace(tmp, path)
        tmp = None
    except OSError as exc:
        raise OutputFileError(path, _os_problem(exc)) from exc
    except MemoryError as exc:
        raise OutputFileError(path, "ran out of memory while writing") from exc
    finally:
        if tmp is not None:
            tmp.unlink(missing_ok=True)
