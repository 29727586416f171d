"""What makes a fit, and the file it is saved in, the same from one run to the next.

* **Files.** ``torch.save`` given a path names the zip archive's records after that path's stem; written through
  :func:`~retarget.atomic_io.atomic_write` that stem is a random temporary name, so two saves of equal tensors
  differed in bytes (and in sha256, which the fine-tuning record and the loop's provenance compare).
  :func:`save_torch` serializes to memory first, where the archive is always named ``archive``: equal payloads
  give equal bytes.
* **Threads.** Torch's CPU matrix products split their reductions by the number of intra-op threads, so an Adam
  fit run with 4 threads ends on other float32 weights than with 1 or 2 (measured on a real Δa MLP fit), and a
  policy's actions for a batch of 6 observations differ in their last two rows by up to 1e-7 between 1 and 2
  threads (MKL's row tail; 8 or 64 rows agree at 1 and 2, not at 4). A process's thread count is not theirs to
  choose — the PPO runner sets its own, and the same bench process collects and fits before and after
  fine-tunings, or after resuming them without building a runner — so the regressions and a policy's
  deterministic actions (``act_inference``) run under :func:`reproducible_threads`, one thread, whatever the
  caller had.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import torch

from retarget.atomic_io import atomic_write

REPRODUCIBLE_TORCH_THREADS = 1
"""Torch intra-op threads of every regression fit (Δa, Δs) and of a policy's deterministic actions: one, so no
reduction order depends on the machine's core count or on what ran before in the process. The fits are small (a
few thousand transitions, 128-unit layers) and inference is a few layers per policy step, so one thread costs little."""


def save_torch(path: str | Path, payload: object) -> Path:
    """``torch.save(payload)`` to ``path`` atomically, the bytes a function of the payload alone."""
    buffer = io.BytesIO()
    torch.save(payload, buffer)
    data = buffer.getvalue()
    atomic_write(Path(path), lambda tmp: tmp.write_bytes(data))
    return Path(path)


@contextmanager
def reproducible_threads() -> Iterator[int]:
    """Run the block with :data:`REPRODUCIBLE_TORCH_THREADS` torch threads, then give the caller's count back."""
    before = torch.get_num_threads()
    torch.set_num_threads(REPRODUCIBLE_TORCH_THREADS)
    try:
        yield REPRODUCIBLE_TORCH_THREADS
    finally:
        torch.set_num_threads(before)
