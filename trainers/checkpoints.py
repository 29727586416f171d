"""Which checkpoint of a run folder is the newest, and trimming a run's logs back to a resumed checkpoint.

A run folder holds ``model_<iteration>.pt`` every ``checkpoint_every`` iterations and ``model_last.pt``. The newest
is decided by iteration number, not by file name order ("990" sorts after "1845") or file time (copies reorder
times): a run killed between checkpoints resumes from its last one, whichever file holds it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import torch

from retarget.asap_pkl import atomic_write

NUMBERED = re.compile(r"model_(\d+)\.pt")

TRAIN_LOCK = ".train.lock"
"""Held in a run folder while a training or fine-tuning writes there."""


def checkpoint_iteration(path: Path) -> int:
    """The PPO iteration a checkpoint was saved at (``model_<it>.pt`` by name, ``model_last.pt`` by content)."""
    if m := NUMBERED.fullmatch(path.name):
        return int(m.group(1))
    return int(torch.load(path, weights_only=True, mmap=True)["iteration"])


def newest_checkpoint(run_dir: Path) -> Path | None:
    """The checkpoint of ``run_dir`` with the highest iteration (``model_last.pt`` on a tie), or None."""
    numbered = [p for p in run_dir.glob("model_*.pt") if NUMBERED.fullmatch(p.name)]
    last = run_dir / "model_last.pt"
    if not numbered:
        return last if last.is_file() else None
    top = max(numbered, key=lambda p: int(NUMBERED.fullmatch(p.name).group(1)))  # type: ignore[union-attr]
    if last.is_file() and checkpoint_iteration(last) >= checkpoint_iteration(top):
        return last
    return top


def trim_run_logs(run_dir: Path, iteration: int) -> None:
    """Drop learning-curve and episode-term rows after ``iteration``: a resumed run recomputes them."""
    curve = run_dir / "learning_curve.csv"
    if curve.is_file():
        lines = curve.read_text().splitlines(keepends=True)
        kept = lines[:1] + [ln for ln in lines[1:] if int(ln.split(",", 1)[0]) <= iteration]
        if len(kept) != len(lines):
            atomic_write(curve, lambda tmp: tmp.write_text("".join(kept)))
    terms = run_dir / "episode_terms.jsonl"
    if terms.is_file():
        rows = terms.read_text().splitlines(keepends=True)
        kept = [ln for ln in rows if json.loads(ln)["iteration"] <= iteration]
        if len(kept) != len(rows):
            atomic_write(terms, lambda tmp: tmp.write_text("".join(kept)))
