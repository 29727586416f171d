"""How a fine-tuning's deployed checkpoint is chosen (:mod:`trainers.finetune.selection`), in a module light enough
for the CLI to read its defaults."""

from __future__ import annotations

from dataclasses import dataclass

DEPLOYED = "model_deployed.pt"
"""The checkpoint a fine-tuning chose to deploy (:mod:`trainers.finetune.selection`), preferred to the newest when a
run folder is loaded as a policy; resuming a run still starts from its newest."""
SELECTION_FILE = "selection.json"
DEFAULT_SELECT_EVERY = 10
"""Fine-tuning iterations between candidate checkpoints when a selection is made."""
DEFAULT_SELECT_EPISODES = 8
"""Matched episodes each candidate runs in the fine-tuning simulator."""
SELECTION_SEED = 7
"""Seed of the selection episodes' randomized physics (the bench's evaluation episodes in the robot use 100)."""
MIN_START_NOISE_RAD = 0.02
"""Start-pose joint noise [rad] of matched episodes in a simulator without randomized physics, when the training's
is smaller (episodes that start alike in a deterministic simulator would be one episode counted several times)."""


@dataclass(frozen=True)
class SelectionConfig:
    """How the deployed checkpoint of a fine-tuning is chosen."""

    every: int = DEFAULT_SELECT_EVERY
    """Iterations between candidates; 0 deploys the last checkpoint (plain fine-tuning)."""
    episodes: int = DEFAULT_SELECT_EPISODES
    seed: int = SELECTION_SEED

    @property
    def enabled(self) -> bool:
        return self.every > 0


NO_SELECTION = SelectionConfig(every=0)
DEFAULT_SELECTION = NO_SELECTION
"""What ``train finetune``, ``loop`` and :func:`trainers.finetune.finetune.finetune_policy` deploy unless told."""
