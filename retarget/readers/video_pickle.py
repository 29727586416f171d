"""Load the pickled result files of video-pose estimators without letting them run code.

WHAM writes ``joblib.dump`` of a ``collections.defaultdict`` of numpy arrays; TRAM writes
``np.save`` of a Python dict (an object array, so the payload is a pickle) holding torch
tensors; GVHMR writes ``torch.save``. The first two go through the project's restricted
unpickler (:mod:`retarget.safe_pickle`) widened by exactly the globals these layouts need:
the ``defaultdict`` and its ``dict`` factory, and torch's tensor rebuild, whose storage bytes
are read back with ``torch.load(weights_only=True)`` instead of torch's unrestricted loader.
The ``.pt`` files are read with ``torch.load(weights_only=True)``. torch is an optional
extra; without it these files are refused with a message saying what to install.
"""

from __future__ import annotations

import collections
import io
import pickle
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from retarget.errors import MotionFileError

if TYPE_CHECKING:
    from retarget.safe_pickle import ExtraGlobals

_TORCH_HINT = "reading it needs torch: pip install torch==2.13.0 (the package's 'video' extra)"


def _torch(path: Path) -> Any:
    try:
        import torch
    except ImportError as exc:
        raise MotionFileError(path, f"holds torch tensors; {_TORCH_HINT}") from exc
    return torch


def _storage_from_bytes(path: Path) -> Callable[[bytes], Any]:
    def load(data: bytes) -> Any:
        return _torch(path).load(io.BytesIO(data), weights_only=True, map_location="cpu")

    return load


def _result_globals(path: Path) -> ExtraGlobals:
    """The globals WHAM's and TRAM's layouts need beyond numpy's (torch only when a file holds tensors)."""
    return {
        ("collections", "defaultdict"): lambda: collections.defaultdict,
        ("builtins", "dict"): lambda: dict,
        ("torch._utils", "_rebuild_tensor_v2"): lambda: _torch(path)._utils._rebuild_tensor_v2,
        ("torch.storage", "_load_from_bytes"): lambda: _storage_from_bytes(path),
    }


def _unpickle(path: Path, fobj: Any) -> Any:
    # The restricted unpickler subclasses joblib's: loaded on first use, not by every process that detects
    # a clip's format (joblib costs 40-65 ms of start-up).
    from retarget.safe_pickle import restricted_load

    try:
        return restricted_load(fobj, path, _result_globals(path))
    except MotionFileError:
        raise
    except (
        pickle.UnpicklingError,
        EOFError,
        ValueError,
        TypeError,
        AttributeError,
        IndexError,
        KeyError,
        RuntimeError,
        OSError,
    ) as exc:
        raise MotionFileError(path, f"corrupt or truncated pickle ({type(exc).__name__}: {exc})") from exc


def load_result_pickle(path: Path) -> Any:
    """A joblib or pickle result file (WHAM's ``wham_output.pkl``)."""
    import joblib.numpy_pickle as joblib_pickle

    try:
        with open(path, "rb") as raw, joblib_pickle._validate_fileobject_and_memmap(raw, str(path), None) as (fobj, _):
            return _unpickle(path, fobj)
    except OSError as exc:
        raise MotionFileError(path, f"cannot read ({exc.strerror or exc})") from exc


def load_npy_object(path: Path) -> Any:
    """The Python object inside an ``np.save``-d object array (TRAM's ``hps_track_*.npy``, ``camera.npy``);
    a plain numeric ``.npy`` comes back as its array."""
    try:
        with open(path, "rb") as fobj:
            version = np.lib.format.read_magic(fobj)
            reader = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            shape, _, dtype = reader(fobj)
            if not dtype.hasobject:
                fobj.seek(0)
                return np.load(fobj, allow_pickle=False)
            array = _unpickle(path, fobj)
    except MotionFileError:
        raise
    except (ValueError, OSError, EOFError) as exc:
        raise MotionFileError(path, f"not a readable .npy file ({type(exc).__name__}: {exc})") from exc
    if isinstance(array, np.ndarray) and array.shape == () and shape == ():
        return array.item()
    return array


def load_pt(path: Path) -> Any:
    """A ``torch.save`` file, tensors only (``weights_only=True``: no code can run)."""
    torch = _torch(path)
    try:
        return torch.load(path, weights_only=True, map_location="cpu")
    except pickle.UnpicklingError as exc:
        named = re.search(r"GLOBAL ([\w.]+)", str(exc))
        what = f"asks for {named.group(1)}" if named else "holds more than tensors and plain containers"
        raise MotionFileError(path, f"refusing to load: the file {what} (it could run code)") from exc
    except (RuntimeError, EOFError, OSError, ValueError) as exc:
        raise MotionFileError(path, f"not a readable torch file ({type(exc).__name__}: {exc})") from exc


def to_numpy(value: Any) -> np.ndarray:
    """A torch tensor or array-like as a float64/int numpy array."""
    if hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    return np.asarray(value)
