"""Reading `.npz` files safely: no unpickling, sizes checked from the headers before loading, and
every way an archive can be broken reported as one :class:`MotionFileError` naming the file.

Every `.npz` reader of the package (AMASS, BeyondMimic, joint positions, robot and bench logs)
loads through :func:`load_npz_arrays`.
"""

from __future__ import annotations

import zipfile
import zlib
from pathlib import Path

import numpy as np

from retarget.errors import MotionFileError
from retarget.limits import check_elements, check_frames

_NPY_MAGIC = b"\x93NUMPY"


def _member_header(zf: zipfile.ZipFile, member: str) -> tuple[tuple[int, ...], np.dtype]:
    with zf.open(member) as fh:
        version = np.lib.format.read_magic(fh)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(fh)
        else:  # 2.0 and 3.0 share the layout (3.0 allows utf-8 field names)
            shape, _, dtype = np.lib.format.read_array_header_2_0(fh)
    return tuple(shape), dtype


def _check_headers(path: Path, what: str, frame_keys: tuple[str, ...]) -> None:
    """Each member's declared shape and dtype, before a byte of array data is allocated; the first
    dimension of `frame_keys` counts frames."""
    with zipfile.ZipFile(path) as zf:
        for member in zf.namelist():
            if not member.endswith(".npy"):
                continue
            shape, dtype = _member_header(zf, member)
            key = member.removesuffix(".npy")
            if dtype.hasobject:
                raise MotionFileError(
                    path,
                    f"{what}: {key!r} holds pickled Python objects; refusing to unpickle an "
                    "untrusted file (save plain numeric or string arrays)",
                )
            check_elements(shape, path, f"{what}: {key!r}")
            if key in frame_keys and shape:
                check_frames(shape[0], path, f"{what}: {key!r} of shape {shape}")


def load_npz_arrays(
    path: str | Path, what: str = ".npz file", frame_keys: tuple[str, ...] = ()
) -> dict[str, np.ndarray]:
    """All arrays of an `.npz` archive; `what` names the expected content in errors ("AMASS clip"); the
    arrays named in `frame_keys` hold one row per frame, and their frame count is checked before loading."""
    path = Path(path)
    if not path.exists():
        raise MotionFileError(path, "file does not exist")
    if path.is_dir():
        raise MotionFileError(path, f"is a folder, expected a {what}")
    try:
        with open(path, "rb") as fh:
            magic = fh.read(len(_NPY_MAGIC))
        if magic[:1] == b"\x80":  # a pickle protocol marker: np.load would need allow_pickle to read it
            raise MotionFileError(
                path, f"holds a pickled Python object, not a {what}; refusing to unpickle an untrusted file"
            )
        if magic == _NPY_MAGIC:
            raise MotionFileError(
                path, f"is a single .npy array (renamed?); expected an .npz archive of named arrays ({what})"
            )
        _check_headers(path, what, frame_keys)
        with np.load(path, allow_pickle=False) as npz:
            return {key: npz[key] for key in npz.files}
    except MotionFileError:
        raise
    except ValueError as exc:
        if "pickle" in str(exc).lower():
            raise MotionFileError(
                path, f"{what} holds pickled Python objects; refusing to unpickle an untrusted file"
            ) from exc
        raise MotionFileError(path, f"not a readable {what} ({exc})") from exc
    except (zipfile.BadZipFile, zlib.error, OSError, EOFError, KeyError, NotImplementedError) as exc:
        raise MotionFileError(
            path, f"corrupt or truncated {what} ({type(exc).__name__}: {exc}); re-export or re-download it"
        ) from exc
    except MemoryError as exc:
        raise MotionFileError(path, f"{what} does not fit in memory") from exc


def read_npz(path: str | Path, what: str, required_keys: tuple[str, ...]) -> dict[str, np.ndarray]:
    """All arrays of an `.npz` file that must hold `required_keys`; `what` names it in errors ("robot log")."""
    data = load_npz_arrays(path, what)
    missing = [k for k in required_keys if k not in data]
    if missing:
        raise MotionFileError(path, f"{what} is missing keys {missing}; expected {list(required_keys)}")
    return data


def numeric_array(path: str | Path, data: dict[str, np.ndarray], key: str, what: str) -> np.ndarray:
    """`data[key]` as float64, refusing strings, objects and other non-numbers with one line naming the key."""
    arr = np.asarray(data[key])
    if arr.dtype.kind not in "biuf":
        raise MotionFileError(path, f"{what}: {key!r} must hold numbers, found {arr.dtype} values")
    return arr.astype(np.float64)


def scalar_number(path: str | Path, value: object, key: str, what: str, positive: bool = False) -> float:
    """One finite number (a 0-d or one-element array, or a Python number) named `key`."""
    arr = np.asarray(value)
    if arr.dtype.kind not in "biuf" or arr.size != 1:
        raise MotionFileError(path, f"{what}: {key!r} must be one number, found {value!r}")
    number = float(arr.reshape(-1)[0])
    if not np.isfinite(number) or (positive and number <= 0):
        raise MotionFileError(
            path, f"{what}: {key!r} must be a {'positive ' if positive else ''}finite number, found {number}"
        )
    return number
