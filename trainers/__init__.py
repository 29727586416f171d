"""Bundled trainers: the ASAP loop (tracking PPO, delta action model, fine-tuning) in MuJoCo, on the CPU.

The public API, imported lazily (``import trainers`` loads neither torch nor MuJoCo)::

    from trainers import finetune_policy, train_track

    train_track("library.pkl", "runs/pre", iterations=100)
    finetune_policy("runs/pre", "library.pkl", "runs/ft", delta="delta.pt", iterations=50)

- Train: :func:`train_track` (stage 1), configured by :class:`TrackingEnvConfig` and :class:`PPOConfig`.
- Load and evaluate: :func:`load_policy` (a run folder or checkpoint), :func:`load_references` (a motion library
  as tracking references), :func:`evaluate_policy`; :func:`export_actor` writes the deployable ONNX actor.
- Delta action (stage 2): :func:`collect_rollouts` in a "real" profile, :func:`fit_learned_delta`
  (:class:`LearnedDeltaConfig`, defaults as ``asap-retarget delta fit``).
- Fine-tune (stage 3): :func:`finetune_policy`; the whole loop in one call: :func:`run_loop` (:class:`LoopConfig`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from robots.lazy_exports import lazy_exports

_EXPORTS: dict[str, str] = {
    "LearnedDeltaConfig": "trainers.delta.learned",
    "LoopConfig": "trainers.finetune.loop_config",
    "PPOConfig": "trainers.ppo.config",
    "TrackingEnvConfig": "trainers.config",
    "collect_rollouts": "trainers.delta.collect",
    "evaluate_policy": "trainers.evaluate",
    "export_actor": "trainers.export",
    "finetune_policy": "trainers.finetune.finetune",
    "fit_learned_delta": "trainers.delta.learned",
    "load_policy": "trainers.policy_io",
    "load_references": "trainers.reference",
    "run_loop": "trainers.finetune.loop",
    "train_track": "trainers.train",
}
__all__ = [
    "LearnedDeltaConfig",
    "LoopConfig",
    "PPOConfig",
    "TrackingEnvConfig",
    "collect_rollouts",
    "evaluate_policy",
    "export_actor",
    "finetune_policy",
    "fit_learned_delta",
    "load_policy",
    "load_references",
    "run_loop",
    "train_track",
]
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
    from trainers.config import TrackingEnvConfig
    from trainers.delta.collect import collect_rollouts
    from trainers.delta.learned import LearnedDeltaConfig, fit_learned_delta
    from trainers.evaluate import evaluate_policy
    from trainers.export import export_actor
    from trainers.finetune.finetune import finetune_policy
    from trainers.finetune.loop import run_loop
    from trainers.finetune.loop_config import LoopConfig
    from trainers.policy_io import load_policy
    from trainers.ppo.config import PPOConfig
    from trainers.reference import load_references
    from trainers.train import train_track
