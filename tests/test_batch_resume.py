"""SIGKILL a running batch at random moments, resume it, and get the uninterrupted run's bytes."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from test_batch_helpers import make_short_clips, output_bytes, without_times

from retarget.batch import BatchOptions, find_clips, run_batch
from retarget.batch.record import read_record
from retarget.config import RetargetConfig

KILLS = 3
SEED = 20250501
CLI = "import sys; from cli.main import main; sys.exit(main())"


def _committed(out: Path) -> dict[str, tuple[int, int]]:
    """Clips whose record says ok, with (inode, mtime) of their .pkl: these must never be rewritten."""
    done = {}
    for path in (out / "records").glob("*.json"):
        record = read_record(path)
        pkl = out / "clips" / f"{path.stem}.pkl"
        if record is not None and record.ok and pkl.exists():
            st = pkl.stat()
            done[path.stem] = (st.st_ino, st.st_mtime_ns)
    return done


def _start(src: Path, out: Path) -> subprocess.Popen:
    cmd = [sys.executable, "-c", CLI, "batch", str(src), "-o", str(out), "--workers", "2", "--quiet"]
    cwd = Path(__file__).resolve().parent.parent
    # Started as an interactive shell starts a command: SIGINT at its default. A child inherits an ignored SIGINT,
    # and Python then installs no KeyboardInterrupt handler; a test run started in the background of a
    # non-interactive shell (`pytest &`, as CI or nohup may) has SIGINT ignored, so its batch could not be stopped.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # a handler is reset to default on exec
    try:
        return subprocess.Popen(cmd, cwd=cwd, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    finally:
        signal.signal(signal.SIGINT, previous)


def test_sigkilled_batch_resumes_to_identical_outputs(tmp_path):
    src = tmp_path / "src"
    make_short_clips(src, 10, frames=10)
    reference = tmp_path / "reference"
    run_batch(find_clips(src), reference, RetargetConfig(), BatchOptions(executor="inline"))

    rng = random.Random(SEED)
    out = tmp_path / "out"
    kills = 0
    progress: list[int] = []  # clips committed after each attempt
    for attempt in range(3 * KILLS):
        committed = _committed(out) if out.exists() else {}
        # Kill once this many clips are done (10: in the final phase); the first kill lands mid-batch. The moment is
        # set by progress (records written), never by a sleep: SIGSTOP freezes the driver and its workers the
        # moment the count is seen, so a fast machine cannot finish the batch before the kill and a slow one is
        # not killed early.
        target = 3 if attempt == 0 else rng.randint(len(committed), 10)
        proc = _start(src, out)
        deadline = time.monotonic() + 300  # a hung batch fails the test; it is not a speed limit
        while proc.poll() is None and time.monotonic() < deadline:
            if out.exists() and len(list((out / "records").glob("*.json"))) >= target:
                os.killpg(proc.pid, signal.SIGSTOP)
                break
            time.sleep(0.005)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)  # the driver and its workers, mid-whatever
            kills += 1
        proc.wait()
        progress.append(len(_committed(out)) if out.exists() else 0)
        # Whatever finished before is still there, untouched.
        now = _committed(out)
        assert all(now.get(name) == stamp for name, stamp in committed.items()), "a finished clip was redone"
        if kills >= KILLS:
            break
    assert kills >= 2, "the batch finished before it could be killed; make the clips longer"
    assert any(0 < n < 10 for n in progress), f"no kill landed mid-batch: {progress}"
    print("clips committed after each killed run:", progress)

    final = _start(src, out)
    _, stderr = final.communicate(timeout=180)
    assert final.returncode == 0, stderr.decode()
    assert output_bytes(out) == output_bytes(reference)
    assert len(output_bytes(out)) == 11
    assert without_times(out / "manifest.json") == without_times(reference / "manifest.json")
    for record in (reference / "records").glob("*.json"):
        assert without_times(out / "records" / record.name) == without_times(record)
    leftovers = [p for p in out.rglob(".*.tmp")]
    assert leftovers == []


def _spawned_workers(pid: int) -> list[int]:
    """Process ids of the batch workers (multiprocessing `spawn` children) of process `pid`."""
    workers = []
    for stat_path in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat_path.read_text().rsplit(")", 1)[1].split()[1])
            cmdline = (stat_path.parent / "cmdline").read_bytes()
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile
        if ppid == pid and b"spawn_main" in cmdline:
            workers.append(int(stat_path.parent.name))
    return workers


INTERRUPT_DELAYS_S = (0.0, 0.1, 0.3)
"""When Ctrl-C lands after the first worker appears: while the workers import the package (seconds), the moment
before they can ignore SIGINT themselves, and while the driver is still starting the second one."""


def test_ctrl_c_while_workers_start_exits_130_without_a_traceback(tmp_path):
    src = tmp_path / "src"
    # Enough clips that the batch cannot finish between the test seeing a worker and the signal landing: on a
    # loaded machine the /proc scan below can take seconds, and a signal that lands while a finished batch exits
    # is lost (exit 0). An interrupted batch never gets to the later clips, so they cost nothing.
    make_short_clips(src, 48, frames=40)
    for delay_s in INTERRUPT_DELAYS_S:
        out = tmp_path / f"out_{delay_s}"
        proc = _start(src, out)
        deadline = time.monotonic() + 120
        while not _spawned_workers(proc.pid) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
        assert proc.poll() is None, "the batch ended before its workers started"
        time.sleep(delay_s)
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: the terminal signals the whole process group
        _, stderr_bytes = proc.communicate(timeout=120)
        stderr = stderr_bytes.decode()
        assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, f"at +{delay_s} s:\n{stderr}"
        assert proc.returncode == 130, f"at +{delay_s} s: exit {proc.returncode}\n{stderr}"
        interrupted = [line for line in stderr.splitlines() if line.startswith("interrupted")]
        assert len(interrupted) == 1 and "rerun the same command to resume" in interrupted[0], stderr
