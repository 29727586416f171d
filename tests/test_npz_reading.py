"""Reading `.npz` archives with one opening per file and member: the arrays are `np.load`'s, bit for bit, on
the real clips and on every dtype, order and version numpy writes; headers in numpy's own layout are read
as numpy reads them; every other header goes through numpy's reader; and sizes are refused before
allocating, including the ones `np.load` would only find out about after."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import numpy as np
import pytest
from conftest import FIXTURES, smpl_clip

from retarget.errors import MotionFileError
from retarget.limits import MAX_ELEMENTS_ENV
from retarget.npy_header import read_npy_header
from retarget.npz_io import load_npz_arrays

_ARRAYS = {
    "f4_2d": np.arange(12, dtype="<f4").reshape(3, 4),
    "f8_big_endian": np.linspace(0.0, 1.0, 7).astype(">f8"),
    "fortran": np.asfortranarray(np.arange(24, dtype=np.float64).reshape(2, 3, 4)),
    "i8_scalar": np.array(30),
    "bool": np.array([True, False, True]),
    "unicode": np.array(["neutral", "female"]),
    "bytes": np.array([b"ab", b"c"]),
    "complex": np.array([1 + 2j, 3 - 4j]),
    "empty": np.zeros((0, 72), dtype=np.float32),
    "zero_width": np.zeros(3, dtype="S0"),
    "structured": np.zeros(2, dtype=[("x", "<f4"), ("name", "<U3")]),
    "datetime": np.array(["2024-01-01"], dtype="datetime64[D]"),
    "large": np.arange(100_000, dtype=np.float64).reshape(-1, 4),  # several 256 KiB pieces
}


def _npy_bytes(array: np.ndarray, version: tuple[int, int] | None = None) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array(buf, array, version=version)
    return buf.getvalue()


def _assert_same(ours: dict, reference: dict) -> None:
    assert list(ours) == list(reference)
    for key, value in reference.items():
        if isinstance(value, bytes):
            assert ours[key] == value
            continue
        assert ours[key].dtype == value.dtype and ours[key].shape == value.shape, key
        assert ours[key].flags.f_contiguous == value.flags.f_contiguous, key
        assert ours[key].tobytes() == value.tobytes(), key  # bit for bit, NaN payloads included


def _np_load(path: Path) -> dict:
    with np.load(path, allow_pickle=False) as npz:
        return {key: npz[key] for key in npz.files}


@pytest.mark.parametrize("name", ["walk_level1_filter", "kick_level1_filter", "SpiderMan_level2"])
def test_real_clips_read_as_np_load_reads_them(name: str) -> None:
    path = smpl_clip(name)
    _assert_same(load_npz_arrays(path), _np_load(path))


def test_every_dtype_and_order_stored_and_compressed(tmp_path: Path) -> None:
    for save in (np.savez, np.savez_compressed):
        path = tmp_path / f"{save.__name__}.npz"
        save(path, **_ARRAYS)
        _assert_same(load_npz_arrays(path), _np_load(path))


@pytest.mark.parametrize("version", [(1, 0), (2, 0), (3, 0)])
@pytest.mark.parametrize("key", sorted(_ARRAYS))
def test_headers_read_as_numpy_reads_them(version: tuple[int, int], key: str) -> None:
    raw = _npy_bytes(_ARRAYS[key], version)
    header = read_npy_header(io.BytesIO(raw))
    reference = io.BytesIO(raw)
    assert np.lib.format.read_magic(reference) == version == header.version
    read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
    shape, fortran_order, dtype = read(reference)
    assert (header.shape, header.fortran_order, header.dtype) == (shape, fortran_order, dtype)
    assert header.num_bytes == reference.tell()  # where the data starts
    # numpy's own layout is read here, except for the dtypes whose descr is not a plain string
    assert header.canonical == (key not in ("structured", "datetime"))


def _header_bytes(text: str) -> bytes:
    padded = text + " " * (-(len(text) + 11) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + len(padded).to_bytes(2, "little") + padded.encode("latin1")


@pytest.mark.parametrize(
    "text",
    [
        "{'shape': (3,), 'fortran_order': False, 'descr': '<f8', }",  # keys in another order
        "{'descr':'<f8','fortran_order':False,'shape':(3,)}",  # other spacing
        "{'descr': '<f8', 'fortran_order': False, 'shape': (3L,), }",  # Python 2's long integers
        "{'descr': '<f8', 'fortran_order': 0, 'shape': (3,), }",  # not a bool: numpy refuses
        "{'descr': '<f8', 'fortran_order': False, 'shape': (007,), }",  # leading zeros: not a literal
        "{'descr': '<f8', 'fortran_order': False, 'shape': (-3,), }",  # negative: numpy's reader decides
        "{'descr': '<q9', 'fortran_order': False, 'shape': (3,), }",  # not a dtype
        "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), 'extra': 1, }",
        "[1, 2]",
    ],
)
@pytest.mark.filterwarnings("ignore:Reading `.npy` or `.npz` file required additional header parsing")
def test_other_headers_go_to_numpy(text: str) -> None:
    raw = _header_bytes(text)
    try:
        expected = np.lib.format.read_array_header_1_0(io.BytesIO(raw[8:]))
    except ValueError as exc:
        with pytest.raises(ValueError, match=str(exc)[:20]):
            read_npy_header(io.BytesIO(raw))
        return
    header = read_npy_header(io.BytesIO(raw))
    assert not header.canonical
    assert (header.shape, header.fortran_order, header.dtype) == expected


def test_short_or_foreign_headers_are_value_errors() -> None:
    raw = _npy_bytes(np.zeros(3))
    for cut in (3, 9, 20):
        with pytest.raises(ValueError, match="EOF: reading"):
            read_npy_header(io.BytesIO(raw[:cut]))
    with pytest.raises(ValueError, match="format version"):
        read_npy_header(io.BytesIO(b"\x93NUMPY\x04\x00" + raw[8:]))
    with pytest.raises(ValueError, match="magic string is not correct"):
        read_npy_header(io.BytesIO(b"\x93NUMPX" + raw[6:]))


def _zip(path: Path, members: dict[str, bytes], compression: int = zipfile.ZIP_STORED) -> Path:
    with zipfile.ZipFile(path, "w", compression=compression) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def test_declared_data_beyond_the_member_is_refused_before_allocating(tmp_path: Path) -> None:
    # 9e7 float64 (720 MB) under the element limit, over 64 bytes of data: np.load would allocate it first.
    raw = _header_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (1250000, 72), }") + b"\0" * 64
    assert read_npy_header(io.BytesIO(raw)).canonical
    path = _zip(tmp_path / "short.npz", {"poses.npy": raw})
    with pytest.raises(MotionFileError, match="short.npz: .*expected 720000000 bytes, the member holds 64"):
        load_npz_arrays(path)
    # compressed: the member's declared uncompressed size is what bounds it
    path = _zip(tmp_path / "deflated.npz", {"poses.npy": raw}, zipfile.ZIP_DEFLATED)
    with pytest.raises(MotionFileError, match="deflated.npz: .*the member holds 64"):
        load_npz_arrays(path)


def test_members_without_the_npy_suffix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # np.load gives a member that is not an array as its bytes, and reads one that is whatever its name
    notes = b"recorded on a Tuesday"
    path = _zip(tmp_path / "mixed.npz", {"trans": _npy_bytes(np.ones((4, 3))), "notes.txt": notes})
    ours = load_npz_arrays(path)
    _assert_same(ours, _np_load(path))
    assert ours["notes.txt"] == notes
    # such members are checked like the others (np.load alone would allocate them unchecked)
    monkeypatch.setenv(MAX_ELEMENTS_ENV, "11")
    with pytest.raises(MotionFileError, match=r"mixed.npz: .*'trans' declares shape \(4, 3\)"):
        load_npz_arrays(path)
    monkeypatch.setenv(MAX_ELEMENTS_ENV, "20")
    with pytest.raises(MotionFileError, match=r"mixed.npz: .*'notes.txt' declares shape \(21,\)"):
        load_npz_arrays(path)


def test_a_member_named_as_a_key_wins_as_in_np_load(tmp_path: Path) -> None:
    path = _zip(tmp_path / "shadow.npz", {"a.npy": _npy_bytes(np.zeros(2)), "a": _npy_bytes(np.ones(3))})
    ours = load_npz_arrays(path)
    _assert_same(ours, _np_load(path))
    assert ours["a"].tolist() == [1.0, 1.0, 1.0]


def test_data_before_the_archive_is_refused(tmp_path: Path) -> None:
    archive = _zip(tmp_path / "plain.npz", {"trans.npy": _npy_bytes(np.ones((4, 3)))}).read_bytes()
    path = tmp_path / "prefixed.npz"
    path.write_bytes(b"#!junk\n" + archive)
    assert zipfile.ZipFile(path).namelist() == ["trans.npy"]  # zipfile alone would read it
    with pytest.raises(MotionFileError, match="prefixed.npz: has data before its zip archive"):
        load_npz_arrays(path)


def test_an_empty_archive_is_empty(tmp_path: Path) -> None:
    path = tmp_path / "empty.npz"
    np.savez(path)
    assert load_npz_arrays(path) == _np_load(path) == {}


def test_fixture_clips_all_read_alike() -> None:
    clips = sorted((FIXTURES / "smpl_video").glob("*.npz"))
    assert clips
    for path in clips:
        _assert_same(load_npz_arrays(path), _np_load(path))


def test_the_new_refusals_reach_the_command_as_one_line(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from cli.main import main

    clip = smpl_clip("squat_level1_filter")
    archive = clip.read_bytes()
    prefixed = tmp_path / "prefixed.npz"
    prefixed.write_bytes(b"#!junk\n" + archive)
    raw = _header_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (1250000, 72), }") + b"\0" * 64
    short = _zip(tmp_path / "short.npz", {"poses.npy": raw})
    for path in (prefixed, short):
        before = path.read_bytes()
        out_pkl = tmp_path / f"{path.stem}.pkl"
        result = CliRunner().invoke(main, ["retarget", str(path), "-o", str(out_pkl)])
        lines = [line for line in result.output.splitlines() if line.strip()]
        assert result.exit_code == 1 and len(lines) == 1 and path.name in lines[0], result.output
        assert "Traceback" not in result.output and not out_pkl.exists() and path.read_bytes() == before
