"""Plain defaults shared by the trainers' configs and the CLI options (no numpy, torch or MuJoCo here)."""

from __future__ import annotations

DEFAULT_NUM_THREADS = 2
"""MuJoCo threads stepping the batched environments (``SimConfig.num_threads``, ``--threads``)."""
ENGINES = ("mujoco", "warp")
"""Physics engines of the training environments (``SimConfig.engine``, ``--engine``)."""
DEFAULT_ENGINE = "mujoco"
"""MuJoCo's C batch: the fastest on a CPU (MuJoCo Warp's CPU backend is 20-80x slower; it is for GPUs)."""
DEFAULT_WARP_DEVICE = "cuda"
"""Where ``--engine warp`` runs unless ``--device`` says otherwise."""

ITERATIONS_CONVENTION = (
    "The run's total: a folder that holds a checkpoint resumes and trains only the iterations it lacks "
    "(rerunning the same command finishes an interrupted run; a finished one trains nothing)."
)
"""How every ``--iterations`` counts (``train track``, ``train finetune``, ``loop``), said once for their --help."""
DEFAULT_TRACK_ITERATIONS = 500
"""PPO iterations of ``train track`` / ``train_track`` (a run's total; 500 × 64 envs × 24 steps ≈ 0.8 M steps)."""
DEFAULT_TRACK_NUM_ENVS = 64
"""Parallel environments of ``train track`` / ``train_track``."""
DEFAULT_CHECKPOINT_EVERY = 50
"""Iterations between the numbered checkpoints of a training run (``--checkpoint-every``)."""
