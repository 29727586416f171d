"""Run clip jobs in worker processes that may crash or hang without stopping the batch.

`concurrent.futures.ProcessPoolExecutor` marks the whole pool broken when one worker dies and
cannot stop a single hung task, so this pool keeps one pipe per worker and knows which clip each
worker holds: a worker that dies (segfault, OOM kill, `os._exit`) fails only that clip, a clip past
its timeout has its worker killed, and in both cases a fresh worker takes the slot.

Workers are started with `spawn` (no forked copies of the driver's threads or locks) and warm
up (model compiled, solver caches filled) before they report ready, so a clip's timeout never counts start-up.
They exit when their pipe closes, which also happens when the driver is killed.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor
from concurrent.futures import wait as futures_wait
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import islice
from multiprocessing import resource_tracker
from multiprocessing.connection import Connection, wait

from retarget.batch.clip import ClipJob, ClipOutcome, failed_outcome, retarget_clip, warm_up
from retarget.config import RetargetConfig
from retarget.errors import AsapRetargetError

MAX_START_FAILURES = 3
"""Workers dying before their first clip this many times in a row means the pool cannot work."""
_THREAD_ENV = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


class BatchError(AsapRetargetError):
    """The batch itself cannot run (not one clip's problem)."""


def _worker_main(conn: Connection, config: RetargetConfig) -> None:
    # Ctrl-C reaches the whole process group; the driver decides what stops and kills workers. The worker was
    # started with SIGINT blocked (see _sigint_blocked), so a Ctrl-C during its imports stayed pending: ignoring
    # SIGINT before unblocking it discards that one too.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    warm_up(config)
    try:
        conn.send(("ready", None))
    except OSError:
        return
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return  # the driver closed the pipe or died
        if job is None:
            return
        outcome = retarget_clip(job)
        try:
            conn.send(("done", outcome))
        except OSError:
            return


@contextmanager
def _single_threaded_env():
    # One BLAS/OpenMP thread per worker: N workers on N cores, not N x N threads.
    saved = {k: os.environ.get(k) for k in _THREAD_ENV}
    for key in _THREAD_ENV:
        os.environ.setdefault(key, "1")
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)


@contextmanager
def _sigint_blocked():
    """SIGINT blocked in this thread while it starts a worker: the child inherits the blocked mask through
    fork and exec, so a Ctrl-C that lands while it imports (seconds, before `_worker_main` can ignore SIGINT)
    cannot raise KeyboardInterrupt there and print a traceback. multiprocessing's resource tracker unblocks
    SIGINT after starting itself, so it must be running before this block."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


@contextmanager
def _sigint_deferred():
    """A Ctrl-C that reaches the driver while it starts workers is acted on once they are started and listed.

    Blocking the signal in this thread is not enough: another thread of the driver may take it, and Python then
    raises KeyboardInterrupt here anyway, possibly before a worker was sent its start-up data (the worker then
    dies with a traceback) or before it is listed for the driver to stop. The signal is noted and raised again,
    through the handler that was in place, when the block ends."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGINT) is None:
        yield  # only the main thread can install a handler; none of Python's own is in place to defer
        return
    caught: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if caught:
            signal.raise_signal(signal.SIGINT)


def _exit_description(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            return f"killed by signal {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"exited with code {exitcode}"


@dataclass
class _Slot:
    process: mp.process.BaseProcess
    conn: Connection
    ready: bool = False
    job: ClipJob | None = None
    started_s: float = 0.0


class ProcessExecutor:
    """`workers` spawned processes; each clip gets `timeout_s` seconds (None: no limit)."""

    def __init__(self, workers: int, timeout_s: float | None, config: RetargetConfig):
        if workers < 1:
            raise BatchError(f"workers must be at least 1, found {workers}")
        self.workers = workers
        self.timeout_s = timeout_s
        self.config = config
        self._ctx = mp.get_context("spawn")

    def _start(self) -> _Slot:
        parent, child = self._ctx.Pipe(duplex=True)
        process = self._ctx.Process(target=_worker_main, args=(child, self.config), daemon=True)
        # Started now, not inside process.start(): starting it unblocks SIGINT again (see _sigint_blocked).
        resource_tracker.ensure_running()
        with _single_threaded_env(), _sigint_blocked():
            process.start()
        child.close()
        return _Slot(process, parent)

    @staticmethod
    def _stop(slot: _Slot, kill: bool) -> None:
        if kill and slot.process.is_alive():
            slot.process.kill()
        slot.conn.close()
        slot.process.join(timeout=5)
        if slot.process.is_alive():
            slot.process.kill()
            slot.process.join()

    def map_unordered(self, jobs: Iterable[ClipJob]) -> Iterator[ClipOutcome]:
        pending = iter(jobs)
        exhausted = False
        start_failures = 0
        queued: deque[ClipJob] = deque()  # look-ahead: how many workers are worth starting
        slots: list[_Slot] = []  # started lazily, so a batch with nothing to do starts none
        try:
            while True:
                while not exhausted and len(queued) < self.workers:
                    job = next(pending, None)
                    if job is None:
                        exhausted = True
                    else:
                        queued.append(job)
                for slot in slots:
                    if slot.ready and slot.job is None and queued:
                        slot.job, slot.started_s = queued.popleft(), time.monotonic()
                        slot.conn.send(slot.job)
                busy = sum(s.job is not None for s in slots)
                if not queued and busy == 0 and exhausted:
                    return
                with _sigint_deferred():
                    while len(slots) < min(self.workers, busy + len(queued)):
                        slots.append(self._start())
                wait([s.conn for s in slots] + [s.process.sentinel for s in slots], timeout=self._wait_s(slots))
                for slot in list(slots):
                    outcome, dead = self._poll(slot)
                    if dead:  # replaced lazily above, only if there is still work for it
                        if not slot.ready:
                            start_failures += 1
                            if start_failures >= MAX_START_FAILURES:
                                raise BatchError(
                                    "batch worker processes die on start "
                                    f"({_exit_description(slot.process.exitcode)}); "
                                    "their error is printed above. Scripts that start a batch must be importable "
                                    "files that guard their entry point with `if __name__ == '__main__':`"
                                )
                        self._stop(slot, kill=True)
                        slots.remove(slot)
                    elif slot.ready:
                        start_failures = 0
                    if outcome is not None:
                        yield outcome
        finally:
            for slot in slots:  # idle workers exit on EOF; busy or still starting ones are killed
                self._stop(slot, kill=slot.job is not None or not slot.ready)

    def _wait_s(self, slots: list[_Slot]) -> float | None:
        if self.timeout_s is None:
            return None
        now = time.monotonic()
        left = [s.started_s + self.timeout_s - now for s in slots if s.job is not None]
        return max(0.0, min(left)) + 0.01 if left else None

    def _poll(self, slot: _Slot) -> tuple[ClipOutcome | None, bool]:
        """(finished outcome or None, whether the slot's worker is dead or must be killed)."""
        try:
            if slot.conn.poll():
                kind, outcome = slot.conn.recv()
                if kind == "ready":
                    slot.ready = True
                    return None, False
                slot.job = None
                return outcome, False
        except (EOFError, OSError):
            pass  # the worker died; its sentinel says how below
        if not slot.process.is_alive():
            slot.process.join()
            job, slot.job = slot.job, None
            if job is None:
                return None, True
            how = _exit_description(slot.process.exitcode)
            elapsed = time.monotonic() - slot.started_s
            return failed_outcome(job, f"{job.source}: worker process {how} while retargeting this clip", elapsed), True
        if slot.job is not None and self.timeout_s is not None:
            elapsed = time.monotonic() - slot.started_s
            if elapsed > self.timeout_s:
                job, slot.job = slot.job, None
                message = f"{job.source}: timed out after {self.timeout_s:g} s (worker killed)"
                return failed_outcome(job, message, elapsed), True
        return None, False


class InlineExecutor:
    """Clips one after another in this process: for debugging and profiling only (no crash
    isolation, no timeout)."""

    def __init__(self, config: RetargetConfig | None = None):
        self.config = config

    def map_unordered(self, jobs: Iterable[ClipJob]) -> Iterator[ClipOutcome]:
        config = self.config
        for job in jobs:
            if config is not None:  # as a pool worker does: the one-time start-up before the first clip, not in it
                warm_up(config)
                config = None
            yield retarget_clip(job)


class ThreadExecutor:
    """`workers` threads of this process: one copy of the code, models and caches for all of them, so the
    memory of a worker is what one clip in flight adds. MuJoCo's rollouts and steps release the GIL; the
    Python between them does not. No crash isolation and no timeout (a thread cannot be stopped)."""

    def __init__(self, workers: int, config: RetargetConfig | None = None):
        if workers < 1:
            raise BatchError(f"workers must be at least 1, found {workers}")
        self.workers = workers
        self.config = config

    def map_unordered(self, jobs: Iterable[ClipJob]) -> Iterator[ClipOutcome]:
        if self.config is not None:  # once, before the threads: they share what it compiles and caches
            warm_up(self.config)
        pending = iter(jobs)
        with ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="clip") as pool:
            running = {pool.submit(retarget_clip, job) for job in islice(pending, self.workers)}
            while running:
                done, running = futures_wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    job = next(pending, None)
                    if job is not None:
                        running.add(pool.submit(retarget_clip, job))
                    yield future.result()
