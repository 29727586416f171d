"""Run clip jobs as Ray tasks: the same :func:`retarget_clip`, results streamed back to the driver.

Ray is an optional extra (`pip install 'asap-retarget[ray]'`). With no address a local Ray
instance is started with `workers` CPUs and shut down at the end; with `address` (e.g.
`ray://head:10001` or `auto`) the batch joins an existing cluster, whose nodes must have this
package installed and see the source paths (shared storage). Outputs come back to the driver as
bytes and only the driver writes files, exactly as with the process pool.

At most one task per cluster CPU is in flight, so results stream in bounded memory and a task's
timeout, counted from submission, is close to its running time. A task whose worker dies fails
that clip only (`max_retries=0`: a clip that crashes a worker would crash the retry too).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator

from retarget.batch.clip import ClipJob, ClipOutcome, failed_outcome, retarget_clip
from retarget.batch.pool import BatchError


def _import_ray():
    try:
        import ray
    except ImportError as exc:
        raise BatchError(
            "--executor ray needs Ray: install it with `pip install 'asap-retarget[ray]'` (or `pip install ray`)"
        ) from exc
    return ray


class RayExecutor:
    """Clips as Ray tasks on a local instance (`address=None`) or an existing cluster."""

    def __init__(self, address: str | None, workers: int, timeout_s: float | None):
        self.address = address
        self.workers = workers
        self.timeout_s = timeout_s

    def map_unordered(self, jobs: Iterable[ClipJob]) -> Iterator[ClipOutcome]:
        ray = _import_ray()
        started_here = not ray.is_initialized()
        if started_here:
            if self.address is None:
                ray.init(num_cpus=self.workers, include_dashboard=False, log_to_driver=False)
            else:
                ray.init(address=self.address, log_to_driver=False)
        try:
            yield from self._run(ray, jobs)
        finally:
            if started_here:
                ray.shutdown()

    def _run(self, ray, jobs: Iterable[ClipJob]) -> Iterator[ClipOutcome]:
        remote = ray.remote(num_cpus=1, max_retries=0)(retarget_clip)
        window = max(1, int(ray.cluster_resources().get("CPU", 1)))
        in_flight: dict = {}  # ObjectRef -> (job, submitted at)
        pending = iter(jobs)
        exhausted = False
        while True:
            while not exhausted and len(in_flight) < window:
                job = next(pending, None)
                if job is None:
                    exhausted = True
                else:
                    in_flight[remote.remote(job)] = (job, time.monotonic())
            if not in_flight:
                return
            timeout = None
            if self.timeout_s is not None:
                oldest = min(t for _, t in in_flight.values())
                timeout = max(0.0, oldest + self.timeout_s - time.monotonic()) + 0.01
            done, _ = ray.wait(list(in_flight), num_returns=1, timeout=timeout)
            for ref in done:
                job, submitted = in_flight.pop(ref)
                try:
                    yield ray.get(ref)
                except ray.exceptions.RayError as exc:
                    first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                    message = f"{job.source}: Ray task failed ({type(exc).__name__}: {first_line})"
                    yield failed_outcome(job, message, time.monotonic() - submitted)
            if self.timeout_s is not None:
                now = time.monotonic()
                for ref, (job, submitted) in list(in_flight.items()):
                    if now - submitted > self.timeout_s:
                        ray.cancel(ref, force=True)
                        del in_flight[ref]
                        message = f"{job.source}: timed out after {self.timeout_s:g} s (Ray task cancelled)"
                        yield failed_outcome(job, message, now - submitted)
