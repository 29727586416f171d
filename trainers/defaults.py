"""Plain defaults shared by the trainers' configs and the CLI options (no numpy, torch or MuJoCo here)."""

from __future__ import annotations

DEFAULT_NUM_THREADS = 2
"""MuJoCo threads stepping the batched environments (``SimConfig.num_threads``, ``--threads``)."""
