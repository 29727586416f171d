"""Every hostile input of tests/fuzz_inputs.py, on every command that reads it: exit code 1, one
line naming the file, no traceback, nothing written, the inputs unchanged; the cases that would
allocate gigabytes run in a subprocess under an address-space limit."""

from __future__ import annotations

import hashlib
import json
import os
import resource
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from fuzz_inputs import CASES, FuzzCase
from test_batch_helpers import make_short_clips

from cli.main import main
from retarget.asap_pkl import read_motion_library
from retarget.batch.sources import discover_clips

REPO = Path(__file__).resolve().parent.parent
MEMORY_LIMIT_BYTES = 3 * 1024**3
"""Address space a hostile case may use (importing torch, MuJoCo and pinocchio takes about 1.5 GiB of it)."""


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT_BYTES, MEMORY_LIMIT_BYTES))


def folder_state(folder: Path) -> dict[str, tuple[str, str]]:
    """Every entry under `folder` (hidden ones too): its kind and, for regular files, a hash of its bytes."""
    state = {}
    for root, dirs, files in os.walk(folder, followlinks=False):
        for name in dirs + files:
            path = Path(root) / name
            mode = path.lstat().st_mode
            if stat.S_ISREG(mode):
                state[str(path.relative_to(folder))] = ("file", hashlib.sha256(path.read_bytes()).hexdigest())
            else:
                target = os.readlink(path) if stat.S_ISLNK(mode) else ""
                state[str(path.relative_to(folder))] = (stat.filemode(mode)[0], target)
    return state


def run_cli(args: list[str], in_subprocess: bool) -> tuple[int, str, str]:
    """Exit code, stdout, stderr of `asap-retarget ARGS` (a subprocess under the memory limit, or in-process)."""
    if in_subprocess:
        env = dict(os.environ, PYTHONPATH=str(REPO))
        proc = subprocess.run(
            [sys.executable, "-c", "from cli.main import main; main()", *args],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            preexec_fn=_limit_memory,
            timeout=300,
            check=False,
        )
        return proc.returncode, proc.stdout, proc.stderr
    result = CliRunner().invoke(main, args)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        import traceback

        tb = "".join(traceback.format_exception(result.exception))
        return 99, result.stdout, result.stderr + "Traceback (in-process)\n" + tb
    return result.exit_code, result.stdout, result.stderr


def check_refused(case: FuzzCase, folder: Path) -> None:
    hostile = case.build(folder)
    before = folder_state(folder)
    code, out, err = run_cli(hostile.args, case.memory)
    lines = [line for line in err.splitlines() if line.strip()]
    assert "Traceback" not in out + err, f"{case.name}: {err[-3000:]}"
    assert code == 1, f"{case.name}: exit {code}\n{out[-2000:]}\n{err[-2000:]}"
    assert len(lines) == 1, f"{case.name}: expected one line, got {lines}"
    if hostile.names is None:  # an option's value is at fault: no file may be blamed
        blamed = [name for name in before if Path(name).name in lines[0]]
        assert not blamed, f"{case.name}: {lines[0]!r} blames {blamed}"
    else:
        assert hostile.names.name in lines[0], f"{case.name}: {lines[0]!r} does not name {hostile.names.name}"
    assert hostile.says in lines[0], f"{case.name}: {lines[0]!r} does not say {hostile.says!r}"
    assert folder_state(folder) == before, f"{case.name}: the folder changed"


@pytest.mark.parametrize("case", [c for c in CASES if not c.memory], ids=lambda c: c.name)
def test_hostile_input_is_refused_in_one_line(case: FuzzCase, tmp_path: Path) -> None:
    check_refused(case, tmp_path)


@pytest.mark.parametrize("case", [c for c in CASES if c.memory], ids=lambda c: c.name)
def test_hostile_size_is_refused_under_a_memory_limit(case: FuzzCase, tmp_path: Path) -> None:
    check_refused(case, tmp_path)


# ---------------------------------------------------------------- batch: a full disk, sources that are gone


@pytest.fixture(scope="module")
def compiled_kernels(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Retarget one clip here first: the IK kernels' compiled code is cached on disk, and writing that cache
    under the file-size limit would fail the clips for a reason that has nothing to do with the batch."""
    from retarget.batch import process_clip
    from retarget.config import RetargetConfig

    folder = tmp_path_factory.mktemp("warm")
    (clip,) = make_short_clips(folder / "src", 1, frames=10)
    assert process_clip(clip, folder / "out", RetargetConfig()).ok


def _run_batch_limited(src: Path, out: Path, file_size_limit: int) -> subprocess.CompletedProcess:
    """`batch` in a subprocess whose files may not grow past `file_size_limit` bytes: a disk that fills."""

    def limits() -> None:
        _limit_memory()
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit then fails with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_size_limit, file_size_limit))

    args = ["batch", str(src), "-o", str(out), "--executor", "inline", "--quiet"]
    return subprocess.run(
        [sys.executable, "-c", "from cli.main import main; main()", *args],
        cwd=REPO,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
        capture_output=True,
        text=True,
        preexec_fn=limits,
        timeout=300,
        check=False,
    )


def _config_bytes() -> int:
    """Size of the batch's config.json (the first file it writes) with the default config."""
    from retarget.config import RetargetConfig

    return len((json.dumps(RetargetConfig().to_dict(), indent=2, sort_keys=True) + "\n").encode())


@pytest.mark.usefixtures("compiled_kernels")
def test_batch_on_a_full_disk_writes_its_manifest_with_the_failures(tmp_path: Path) -> None:
    src = tmp_path / "src"
    make_short_clips(src, 2, frames=60)
    before = folder_state(src)
    # config.json and the manifest (config plus ~1.5 kB per failed clip) fit; a clip's .pkl (~30 kB) does not.
    proc = _run_batch_limited(src, tmp_path / "out", _config_bytes() + 8000)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 3, proc.stderr
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert [c["status"] for c in manifest["clips"]] == ["failed", "failed"]
    assert all("file-size limit" in c["error"] for c in manifest["clips"])
    assert len(manifest["unwritten"]) == 2 and not list((tmp_path / "out" / "clips").glob("*"))
    assert "not written" in proc.stderr and "clip_00.pkl" in proc.stderr
    assert folder_state(src) == before


@pytest.mark.usefixtures("compiled_kernels")
def test_batch_says_which_files_it_could_not_write_when_even_the_manifest_does_not_fit(tmp_path: Path) -> None:
    src = tmp_path / "src"
    make_short_clips(src, 1, frames=10)
    proc = _run_batch_limited(src, tmp_path / "out", _config_bytes() + 64)  # the manifest holds the config and more
    lines = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert len(lines) == 1 and "manifest.json" in lines[0] and "clip_00.pkl" in lines[0], proc.stderr


def test_batch_retires_outputs_whose_source_is_gone(tmp_path: Path) -> None:
    src, out = tmp_path / "src", tmp_path / "out"
    make_short_clips(src, 3, frames=10)
    base = ["batch", str(src), "-o", str(out), "--executor", "inline", "--quiet"]
    assert CliRunner().invoke(main, base).exit_code == 0
    (src / "clip_01.npz").unlink()
    moved = CliRunner().invoke(main, [*base, "--move-stale"])
    assert moved.exit_code == 0, moved.output
    assert "clip_01" in moved.stderr and "moved into" in moved.stderr
    assert (out / "stale" / "clips" / "clip_01.pkl").is_file() and (
        out / "stale" / "records" / "clip_01.json"
    ).is_file()
    (src / "clip_02.npz").unlink()
    removed = CliRunner().invoke(main, base)
    assert removed.exit_code == 0 and "clip_02" in removed.stderr and "removed" in removed.stderr
    assert sorted(p.name for p in (out / "clips").iterdir()) == ["clip_00.pkl"]
    assert sorted(p.name for p in (out / "records").iterdir()) == ["clip_00.json"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert [c["clip"] for c in manifest["clips"]] == ["clip_00"] and manifest["stale_removed"] == ["clip_02"]
    assert list(read_motion_library(out / "motion_library.pkl")) == ["clip_00"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every folder whatever its permissions")
def test_batch_lists_unreadable_subfolders(tmp_path: Path) -> None:
    src = tmp_path / "src"
    make_short_clips(src / "readable", 1, frames=10)
    make_short_clips(src / "locked", 1, frames=10)
    (src / "locked").chmod(0)
    try:
        discovery = discover_clips(src)
    finally:
        (src / "locked").chmod(0o755)
    assert discovery.unreadable == [src / "locked"] and [p.parent.name for p in discovery.clips] == ["readable"]
