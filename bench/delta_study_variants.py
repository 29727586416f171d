"""The Δa settings the study compares: one default setting and variants that change one factor of it each.

A setting is (fitting rollouts, joints Δa acts on, Δa model, fine-tuning iterations). A variant is named by the
factor it changes, e.g. ``joints=ankles``; ``default`` is the setting every variant departs from.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from trainers.delta.defaults import (
    DEFAULT_FINETUNE_ITERATIONS,
    DEFAULT_FITTING_ROLLOUTS,
    DEFAULT_JOINTS,
    DEFAULT_MODEL,
    JOINT_SET_NAMES,
    MODEL_KINDS,
)

STUDY_MODELS = (*MODEL_KINDS, "ppo")
"""Δa models of the study: the supervised regressors and the paper's PPO (:mod:`trainers.delta.ppo_fit`)."""
DEFAULT_VARIANTS = (
    "joints=ankles",
    "rollouts=2",
    "model=mlp",
    "iterations=25",
    "model=ppo",
    "rollouts=18",
    "joints=legs",
    "iterations=100",
)
"""The variants in the order they run (a study stopped early has the first ones): the paper's ankle-only Δa and
the smallest data set first, the costliest fine-tuning last."""


class VariantError(ValueError):
    """A variant or setting that cannot be parsed; the message names it and the valid choices."""


@dataclass(frozen=True)
class Setting:
    """One Δa setting, from fitting data to fine-tuning."""

    rollouts: int = DEFAULT_FITTING_ROLLOUTS
    """Rollouts of the pre-trained policy in the "real" robot that Δa is fitted on (the first ones collected)."""
    joints: str = DEFAULT_JOINTS
    """Joint subset Δa acts on (ankles, legs, all)."""
    model: str = DEFAULT_MODEL
    """per_joint_linear or mlp (supervised on one-step labels), or ppo (the paper's PPO in the nominal simulator)."""
    iterations: int = DEFAULT_FINETUNE_ITERATIONS
    """PPO iterations of the policy's fine-tuning with the frozen Δa."""

    def changed(self, spec: str) -> Setting:
        """This setting with one factor changed by ``spec`` ('joints=ankles', 'rollouts=2', ...)."""
        factor, sep, value = spec.partition("=")
        fields = {f.name for f in dataclasses.fields(self)}
        if not sep or factor not in fields:
            raise VariantError(f"variant {spec!r}: expected FACTOR=VALUE with FACTOR one of {', '.join(fields)}")
        if factor in ("rollouts", "iterations"):
            if not value.isdigit() or int(value) < 1:
                raise VariantError(f"variant {spec!r}: {factor} must be a positive integer")
            return dataclasses.replace(self, **{factor: int(value)})
        valid = JOINT_SET_NAMES if factor == "joints" else STUDY_MODELS
        if value not in valid:
            raise VariantError(f"variant {spec!r}: {factor} must be one of {', '.join(valid)}")
        return dataclasses.replace(self, **{factor: value})


def parse_setting(spec: str, base: Setting) -> Setting:
    """``base`` with every 'FACTOR=VALUE' of the comma list ``spec`` applied (the study's default setting)."""
    setting = base
    for part in filter(None, (p.strip() for p in spec.split(","))):
        setting = setting.changed(part)
    return setting


def variants(default: Setting, specs: list[str]) -> dict[str, Setting]:
    """name → setting: 'default' first, then each spec's one-factor change (a spec that changes nothing is
    dropped: it would be the default run twice)."""
    out = {"default": default}
    for spec in specs:
        setting = default.changed(spec)
        if setting != default and spec not in out:
            out[spec] = setting
    return out


def folder_name(variant: str) -> str:
    """Subfolder of a variant ('joints=ankles' → 'joints-ankles')."""
    return variant.replace("=", "-")
