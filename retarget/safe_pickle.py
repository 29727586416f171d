"""Load pickle and joblib files without letting them run code.

Unpickling calls whatever callables a file names; a motion library from an unknown source
could name ``os.system``. This unpickler resolves only the few globals that numpy arrays
and joblib's array wrapper need, and refuses object-dtype arrays (whose payload would be
unpickled by an unrestricted loader inside joblib). Anything else raises
:class:`MotionFileError` naming the file and the refused global.
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import joblib.numpy_pickle as joblib_pickle

from retarget.errors import MotionFileError

_ALLOWED_GLOBALS: frozenset[tuple[str, str]] = frozenset(
    {
        ("numpy", "ndarray"),
        ("numpy", "dtype"),
        ("numpy.core.multiarray", "_reconstruct"),
        ("numpy._core.multiarray", "_reconstruct"),
        ("numpy.core.multiarray", "scalar"),
        ("numpy._core.multiarray", "scalar"),
        ("numpy.core.numeric", "_frombuffer"),
        ("numpy._core.numeric", "_frombuffer"),
        ("joblib.numpy_pickle", "NumpyArrayWrapper"),
        ("collections", "OrderedDict"),
    }
)


class UnsafePickleError(MotionFileError):
    """The file asked the unpickler for something outside the allowed types."""


class _RestrictedUnpickler(joblib_pickle.NumpyUnpickler):
    dispatch = joblib_pickle.NumpyUnpickler.dispatch.copy()

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in _ALLOWED_GLOBALS:
            raise UnsafePickleError(
                self.filename or None,
                f"refusing to load: the pickle asks for {module}.{name}, which a motion library never needs "
                "(it could run code)",
            )
        return super().find_class(module, name)

    def load_build(self) -> None:
        # The state about to be applied sits on top of the stack, its object just below.
        state, obj = self.stack[-1], self.stack[-2]
        if isinstance(obj, joblib_pickle.NumpyArrayWrapper) and isinstance(state, dict):
            dtype = state.get("dtype")
            if dtype is None or getattr(dtype, "hasobject", True):
                raise UnsafePickleError(
                    self.filename or None, "refusing to load an object-dtype array (its payload is a raw pickle)"
                )
        super().load_build()

    dispatch[pickle.BUILD[0]] = load_build


def safe_load(path: str | Path) -> Any:
    """Load a pickle or joblib file (compressed or not), allowing only numpy arrays and
    plain containers. Raises :class:`MotionFileError` on unsafe, corrupt or truncated files."""
    path = Path(path)
    if not path.exists():
        raise MotionFileError(path, "file does not exist")
    try:
        with open(path, "rb") as raw, joblib_pickle._validate_fileobject_and_memmap(raw, str(path), None) as (fobj, _):
            return _RestrictedUnpickler(str(path), fobj, ensure_native_byte_order=True).load()
    except MotionFileError:
        raise
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError, IndexError, KeyError, OSError) as exc:
        raise MotionFileError(path, f"corrupt or truncated pickle ({type(exc).__name__}: {exc})") from exc
