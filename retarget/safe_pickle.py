"""Load pickle and joblib files without letting them run code.

Unpickling calls whatever callables a file names; a motion library from an unknown source
could name ``os.system``. This unpickler resolves only the few globals that numpy arrays
and joblib's array wrapper need, and refuses object-dtype arrays (whose payload would be
unpickled by an unrestricted loader inside joblib). Anything else raises
:class:`MotionFileError` naming the file and the refused global.

Sizes are bounded too (:mod:`retarget.limits`): an array's declared shape is checked before numpy
allocates it, and the loaded object is walked once, counting shared containers each time they are
reached, so a few kilobytes of shared nested lists cannot expand into gigabytes downstream and a
deeply nested one cannot exhaust the recursion of whoever walks it.

Readers of other pickled layouts (video-pose results) widen the allowed set by exactly the globals their
layout needs with :func:`restricted_load`'s ``extra_globals``.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, Any

import joblib.numpy_pickle as joblib_pickle
import numpy as np

from retarget.errors import MotionFileError
from retarget.limits import Limits, check_elements, current_limits

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


ExtraGlobals = Mapping[tuple[str, str], Callable[[], Any]]
"""(module, name) of a global → a function returning the object. It is called only when a file asks for that
global, so an optional dependency (torch) is imported only for the files that need it."""


class _RestrictedUnpickler(joblib_pickle.NumpyUnpickler):
    dispatch = joblib_pickle.NumpyUnpickler.dispatch.copy()

    def __init__(self, filename: str, file_handle: IO[bytes], extra_globals: ExtraGlobals) -> None:
        super().__init__(filename, file_handle, ensure_native_byte_order=True)
        self.extra_globals = extra_globals

    def find_class(self, module: str, name: str) -> Any:
        resolve = self.extra_globals.get((module, name))
        if resolve is not None:
            return resolve()
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
        path = self.filename or None
        if isinstance(obj, joblib_pickle.NumpyArrayWrapper) and isinstance(state, dict):
            dtype = state.get("dtype")
            if dtype is None or getattr(dtype, "hasobject", True):
                raise UnsafePickleError(path, "refusing to load an object-dtype array (its payload is a raw pickle)")
            _check_declared(state.get("shape"), dtype, path)
        elif isinstance(obj, np.ndarray) and isinstance(state, tuple) and len(state) == 5:
            _check_declared(state[1], state[2], path)  # ndarray.__setstate__(version, shape, dtype, fortran, data)
        super().load_build()

    dispatch[pickle.BUILD[0]] = load_build


def _check_declared(shape: Any, dtype: Any, path: str | None) -> None:
    """A pickled array's declared shape, checked before numpy allocates it (subarray dtypes included)."""
    if not isinstance(shape, tuple) or not all(isinstance(n, int) and n >= 0 for n in shape):
        raise MotionFileError(path, f"corrupt pickle: an array declares the shape {shape!r}")
    sub = getattr(dtype, "shape", ())
    check_elements(shape + tuple(sub), path, "a pickled array")


def _check_expanded(obj: Any, path: Path, limits: Limits) -> None:
    """Refuse nesting deeper than ``max_depth`` and more container items or array elements than the
    limits, counting a shared container each time it is reached (as a consumer converting it would)."""
    seen: dict[int, tuple[int, int]] = {}

    def visit(o: Any, depth: int) -> tuple[int, int]:
        if isinstance(o, np.ndarray):
            return 0, o.size
        if not isinstance(o, (dict, list, tuple)):
            return 0, 0
        if depth > limits.max_depth:
            raise MotionFileError(
                path,
                f"containers nested deeper than {limits.max_depth} levels; a motion file "
                "needs 4: the file is corrupt or hostile",
            )
        if id(o) in seen:
            return seen[id(o)]
        children = [x for kv in o.items() for x in kv] if isinstance(o, dict) else o
        items, elements = len(o), 0
        for child in children:
            i, e = visit(child, depth + 1)
            items, elements = items + i, elements + e
        if items > limits.max_container_items or elements > limits.max_elements:
            raise MotionFileError(
                path,
                f"expands to {items:.3g} container items and {elements:.3g} array elements (shared references "
                f"counted each time), over the limits of {limits.max_container_items} and {limits.max_elements}",
            )
        seen[id(o)] = (items, elements)
        return items, elements

    visit(obj, 0)


def restricted_load(fobj: IO[bytes], path: str | Path, extra_globals: ExtraGlobals | None = None) -> Any:
    """Unpickle ``fobj`` (plain pickle or joblib's array format; ``path`` names it in errors), resolving only the
    numpy and joblib globals :func:`safe_load` allows plus ``extra_globals``, with the same declared-shape checks.

    A refused global or object-dtype array raises :class:`UnsafePickleError`; a corrupt stream raises what the
    unpickler raised (``pickle.UnpicklingError``, ``EOFError``, ...), for the caller to word. The loaded object's
    expanded size is not walked here (:func:`safe_load` does)."""
    return _RestrictedUnpickler(str(path), fobj, extra_globals or {}).load()


def safe_load(path: str | Path) -> Any:
    """Load a pickle or joblib file (compressed or not), allowing only numpy arrays and
    plain containers. Raises :class:`MotionFileError` on unsafe, corrupt or truncated files."""
    path = Path(path)
    if not path.exists():
        raise MotionFileError(path, "file does not exist")
    try:
        with open(path, "rb") as raw, joblib_pickle._validate_fileobject_and_memmap(raw, str(path), None) as (fobj, _):
            data = restricted_load(fobj, path)
    except MotionFileError:
        raise
    except MemoryError as exc:
        raise MotionFileError(path, "does not fit in memory while unpickling; the file is corrupt or hostile") from exc
    except (
        pickle.UnpicklingError,
        EOFError,
        ValueError,
        TypeError,
        AttributeError,
        IndexError,
        KeyError,
        OSError,
    ) as exc:
        raise MotionFileError(path, f"corrupt or truncated pickle ({type(exc).__name__}: {exc})") from exc
    _check_expanded(data, path, current_limits())
    return data
