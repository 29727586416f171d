"""Every hostile input of tests/fuzz_inputs.py, on every command that reads it: exit code 1, one
line naming the file, no traceback, nothing written, the inputs unchanged; the cases that would
allocate gigabytes run in a subprocess under an address-space limit."""

from __future__ import annotations

import hashlib
import os
import resource
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from fuzz_inputs import CASES, FuzzCase

from cli.main import main

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
        proc = subprocess.run([sys.executable, "-c", "from cli.main import main; main()", *args], cwd=REPO, env=env,
                              capture_output=True, text=True, preexec_fn=_limit_memory, timeout=300, check=False)  # fmt: skip
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
    assert hostile.names.name in lines[0], f"{case.name}: {lines[0]!r} does not name {hostile.names.name}"
    assert folder_state(folder) == before, f"{case.name}: the folder changed"


@pytest.mark.parametrize("case", [c for c in CASES if not c.memory], ids=lambda c: c.name)
def test_hostile_input_is_refused_in_one_line(case: FuzzCase, tmp_path: Path) -> None:
    check_refused(case, tmp_path)


@pytest.mark.parametrize("case", [c for c in CASES if c.memory], ids=lambda c: c.name)
def test_hostile_size_is_refused_under_a_memory_limit(case: FuzzCase, tmp_path: Path) -> None:
    check_refused(case, tmp_path)
