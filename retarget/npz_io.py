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
from retarget.npy_header import NPY_MAGIC, ByteReader, NpyHeader, read_exact, read_npy_header

_ZIP_SIGNATURES = (b"PK\x03\x04", b"PK\x05\x06")
"""How an archive must start for `np.load` to read it as one: a member's local header, or an empty archive."""

_CHUNK_BYTES = 2**18
"""Array data is copied in pieces of this size (numpy's own), so a large array never sits in memory twice."""


def _array_data(fh: ByteReader, header: NpyHeader, available_bytes: int) -> np.ndarray:
    """The array `header` declares, read from `fh` (just past the header), as `numpy.lib.format.read_array`
    builds it; refused before allocating when the member holds fewer bytes than declared."""
    count = 1
    for n in header.shape:
        count *= n
    num_bytes = count * header.dtype.itemsize
    if num_bytes > available_bytes:
        raise ValueError(f"EOF: reading array data, expected {num_bytes} bytes, the member holds {available_bytes}")
    array = np.ndarray(count, dtype=header.dtype)  # as numpy: np.empty mishandles zero-width strings
    if num_bytes:
        flat_bytes = array.view(np.uint8)
        for start in range(0, num_bytes, _CHUNK_BYTES):
            chunk = read_exact(fh, min(_CHUNK_BYTES, num_bytes - start), "array data")
            flat_bytes[start : start + len(chunk)] = np.frombuffer(chunk, dtype=np.uint8)
    if header.fortran_order:
        return array.reshape(header.shape[::-1]).transpose()
    return array.reshape(header.shape)


def _read_member(
    zf: zipfile.ZipFile, member: str, path: Path, what: str, frame_keys: tuple[str, ...]
) -> np.ndarray | bytes:
    """One member as `np.load` gives it (an array, or the raw bytes of a member that is not one), its
    declared shape and dtype checked before a byte of array data is allocated."""
    key = member.removesuffix(".npy")
    info = zf.getinfo(member)
    with zf.open(info) as fh:
        first_bytes = fh.read(len(NPY_MAGIC))
        if first_bytes != NPY_MAGIC and not member.endswith(".npy"):
            # np.load returns such a member's bytes; its declared size bounds what it can make us hold.
            check_elements((info.file_size,), path, f"{what}: {key!r}")
            return first_bytes + fh.read()
        header = read_npy_header(fh, first_bytes)  # a ".npy" member without the magic string: ValueError
        if header.dtype.hasobject:
            raise MotionFileError(
                path,
                f"{what}: {key!r} holds pickled Python objects; refusing to unpickle an "
                "untrusted file (save plain numeric or string arrays)",
            )
        check_elements(header.shape, path, f"{what}: {key!r}")
        if key in frame_keys and header.shape:
            check_frames(header.shape[0], path, f"{what}: {key!r} of shape {header.shape}")
        if header.canonical:
            return _array_data(fh, header, info.file_size - header.num_bytes)
    with zf.open(info) as fh:  # a header numpy's reader had to read: numpy reads the array too
        return np.lib.format.read_array(fh, allow_pickle=False)


def _read_members(zf: zipfile.ZipFile, path: Path, what: str, frame_keys: tuple[str, ...]) -> dict[str, np.ndarray]:
    """Every member, each opened once, keyed as `np.load` keys them (the name without ".npy"; a member
    named exactly as a key wins over "key.npy")."""
    names = list(dict.fromkeys(zf.namelist()))
    members = {name: _read_member(zf, name, path, what, frame_keys) for name in names}
    keys = dict.fromkeys(name.removesuffix(".npy") for name in names)
    return {key: members[key] if key in members else members[key + ".npy"] for key in keys}  # type: ignore[misc]


def load_npz_arrays(
    path: str | Path, what: str = ".npz file", frame_keys: tuple[str, ...] = ()
) -> dict[str, np.ndarray]:
    """All arrays of an `.npz` archive; `what` names the expected content in errors ("AMASS clip"); the
    arrays named in `frame_keys` hold one row per frame, and their frame count is checked before loading.

    The file is opened once and each member once; the result is `np.load(path, allow_pickle=False)`'s."""
    path = Path(path)
    if not path.exists():
        raise MotionFileError(path, "file does not exist")
    if path.is_dir():
        raise MotionFileError(path, f"is a folder, expected a {what}")
    try:
        with open(path, "rb") as fh:
            signature = fh.read(len(NPY_MAGIC))
            if signature[:1] == b"\x80":  # a pickle protocol marker: np.load would need allow_pickle to read it
                raise MotionFileError(
                    path, f"holds a pickled Python object, not a {what}; refusing to unpickle an untrusted file"
                )
            if signature == NPY_MAGIC:
                raise MotionFileError(
                    path, f"is a single .npy array (renamed?); expected an .npz archive of named arrays ({what})"
                )
            fh.seek(0)
            with zipfile.ZipFile(fh) as zf:
                if not signature.startswith(_ZIP_SIGNATURES):
                    # zipfile finds an archive by its end; np.load, like us, wants one that starts as one
                    raise MotionFileError(path, f"has data before its zip archive; not a {what}")
                return _read_members(zf, path, what, frame_keys)
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
        found = f"strings ({arr.dtype})" if arr.dtype.kind in "US" else f"{arr.dtype} values"
        raise MotionFileError(path, f"{what}: {key!r} must hold numbers, found {found}")
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
