"""The header of one `.npy` array (a member of an `.npz` archive): format version, shape, memory order, dtype.

numpy's readers (`numpy.lib.format.read_array_header_1_0/2_0`) parse the header, the text of a Python dict,
with `ast.literal_eval`: 15-25 µs per array, about a fifth of reading a clip. Every header numpy writes
has one layout, ``{'descr': '<f4', 'fortran_order': False, 'shape': (155, 72), }`` padded with spaces to a
newline. That layout is matched here with a regular expression (~1 µs); only a header whose every character
the pattern accepts is read this way, and every other one (structured dtypes, Python 2 files, hand-written
or hostile headers) goes to numpy's reader, so what is accepted, and the shape and dtype it means, stay
numpy's own.
"""

from __future__ import annotations

import io
import re
import struct
from dataclasses import dataclass
from typing import Protocol

import numpy as np

NPY_MAGIC = b"\x93NUMPY"
"""The first bytes of every `.npy` array; two version bytes follow."""

_LENGTH_FORMATS = {(1, 0): "<H", (2, 0): "<I", (3, 0): "<I"}
"""The header length's struct format per format version (1.0: two bytes; 2.0 and 3.0: four)."""

_MAX_HEADER_BYTES = 10_000
"""numpy's default `max_header_size`: longer headers go to numpy's reader, which refuses them."""

_INT = rb"(?:0|[1-9][0-9]*)"  # a Python int literal as `repr` writes one (no leading zeros, no signs)
_CANONICAL = re.compile(
    rb"\{'descr': '([<>|=]?[A-Za-z][0-9]*)', 'fortran_order': (True|False), 'shape': \(("
    + rb"|"
    + _INT
    + rb",|"
    + _INT
    + rb"(?:, "
    + _INT
    + rb")+"
    + rb")\), \} *\n"
)
"""The header `numpy.lib.format` writes for a plain (non-structured) dtype, byte for byte."""


class ByteReader(Protocol):
    """A binary stream: a file, a zip member, `io.BytesIO`."""

    def read(self, size: int = -1, /) -> bytes: ...


@dataclass(frozen=True)
class NpyHeader:
    """What an array's header declares; the array data follows the header."""

    version: tuple[int, int]
    """Format version (1, 0), (2, 0) or (3, 0)."""
    shape: tuple[int, ...]
    """Declared shape."""
    fortran_order: bool
    """Whether the data is stored column-major."""
    dtype: np.dtype
    """Element type, byte order included."""
    num_bytes: int
    """Bytes of the magic string, version, length field and header: where the array data starts."""
    canonical: bool
    """Whether the header has numpy's own layout (read here); otherwise numpy's reader read it."""


def read_exact(fh: ByteReader, size: int, what: str) -> bytes:
    """`size` bytes of `fh`, or ValueError naming `what` (numpy's wording for a short `.npy`)."""
    data = fh.read(size)
    while len(data) < size:
        more = fh.read(size - len(data))
        if not more:
            raise ValueError(f"EOF: reading {what}, expected {size} bytes got {len(data)}")
        data += more
    return data


def read_npy_header(fh: ByteReader, first_bytes: bytes = b"") -> NpyHeader:
    """The header at the start of `fh` (of which `first_bytes` were already read); leaves `fh` at the data.

    Raises ValueError as numpy does for a wrong magic string, an unknown version, a short or malformed header.
    """
    magic = first_bytes + read_exact(fh, len(NPY_MAGIC) + 2 - len(first_bytes), "magic string")
    if magic[:-2] != NPY_MAGIC:
        raise ValueError(f"the magic string is not correct; expected {NPY_MAGIC!r}, got {magic[:-2]!r}")
    version = (magic[-2], magic[-1])
    length_format = _LENGTH_FORMATS.get(version)
    if length_format is None:
        raise ValueError(f"we only support format version (1,0), (2,0), and (3,0), not {version}")
    length_field = read_exact(fh, struct.calcsize(length_format), "array header length")
    (header_length,) = struct.unpack(length_format, length_field)
    text = read_exact(fh, header_length, "array header")
    num_bytes = len(magic) + len(length_field) + header_length
    match = _CANONICAL.fullmatch(text) if header_length <= _MAX_HEADER_BYTES else None
    if match is not None:
        descr, fortran, shape_text = match.groups()
        try:
            dtype = np.dtype(descr.decode("ascii"))  # numpy's own conversion of a string descr
        except TypeError:
            dtype = None  # not a dtype: numpy's reader words the error
        if dtype is not None:
            shape = tuple(int(n) for n in shape_text.replace(b",", b" ").split())
            return NpyHeader(version, shape, fortran == b"True", dtype, num_bytes, canonical=True)
    # Anything else: numpy's reader, on the same bytes (a 3.0 header read as 2.0's latin-1 text: field
    # names may read differently, the shape and whether the dtype holds objects do not).
    replay = io.BytesIO(length_field + text)
    if version == (1, 0):
        shape, fortran_order, dtype = np.lib.format.read_array_header_1_0(replay)
    else:
        shape, fortran_order, dtype = np.lib.format.read_array_header_2_0(replay)
    return NpyHeader(version, tuple(shape), bool(fortran_order), dtype, num_bytes, canonical=False)
