"""The fixed split of the 39 bundled clips into a tuning half and a test (reporting) half.

Chosen before any tuning, by name only: each clip gets a motion type from its name (:data:`MOTION_TYPE_OF_FAMILY`),
clips are sorted by (type, name), and alternate tuning / test through that list, so every type lands in both halves
(20 tuning, 19 test). Figures that count are reported on :data:`TEST_CLIPS` and on all clips; figures on
:data:`TUNING_CLIPS` alone are development notes.
"""

from __future__ import annotations

import re

# Clip family (the name without the ``video_`` prefix, level and suffixes) → motion type.
MOTION_TYPE_OF_FAMILY: dict[str, str] = {
    "APT": "dynamic",  # dance with fast steps and turns
    "CR7": "dynamic",  # run-up, jump and spin
    "SpiderMan": "dynamic",
    "lebron1": "dynamic",  # run and jump shot
    "kick": "dynamic",
    "shoot": "dynamic",
    "jump_degree": "jump",
    "jump_forward": "jump",
    "side_jump": "jump",
    "single_foot_jump": "jump",
    "single_foot_balance": "in_place",
    "squat": "in_place",
    "step_forward_back": "locomotion",
    "step_forward_forward": "locomotion",
    "walk": "locomotion",
}
MOTION_TYPES: tuple[str, ...] = ("dynamic", "jump", "in_place", "locomotion")

ALL_CLIPS: tuple[str, ...] = (
    "video_APT_level1_amass",
    "video_CR7_level1_filter_amass",
    "video_CR7_level2_filter_amass",
    "video_SpiderMan_level2_amass",
    "video_jump_degree_level1_filter_amass",
    "video_jump_degree_level2_filter_amass",
    "video_jump_degree_level4_filter_amass",
    "video_jump_degree_level5_filter_amass",
    "video_jump_forward_level1_filter_amass",
    "video_jump_forward_level2_filter_amass",
    "video_jump_forward_level3_filter_amass",
    "video_jump_forward_level4_filter_amass",
    "video_kick_level1_filter_amass",
    "video_kick_level2_filter_amass",
    "video_lebron1_filter_amass",
    "video_shoot_level1_filter_amass",
    "video_shoot_level2_filter_amass",
    "video_shoot_level3_filter_amass",
    "video_side_jump_level1_filter_amass",
    "video_side_jump_level2_filter_amass",
    "video_side_jump_level3_filter_amass",
    "video_single_foot_balance_level1_filter_amass",
    "video_single_foot_balance_level2_filter_amass",
    "video_single_foot_balance_level4_filter_amass",
    "video_single_foot_jump_level1_filter_amass",
    "video_single_foot_jump_level2_filter_amass",
    "video_squat_level1_filter_amass",
    "video_squat_level3_filter_amass",
    "video_step_forward_back_level1_filter_amass",
    "video_step_forward_back_level2_filter_amass",
    "video_step_forward_back_level3_filter_amass",
    "video_step_forward_back_level4_filter_amass",
    "video_step_forward_forward_level1_filter_amass",
    "video_step_forward_forward_level2_filter_amass",
    "video_step_forward_forward_level3_filter_amass",
    "video_step_forward_forward_level4_filter_amass",
    "video_walk_level1_filter_amass",
    "video_walk_level2_filter_amass",
    "video_walk_level3_filter_amass",
)


def clip_family(stem: str) -> str:
    """``video_jump_degree_level4_filter_amass`` → ``jump_degree``."""
    return re.sub(r"(_level\d+)?(_filter)?_amass$", "", stem.removeprefix("video_"))


def motion_type(stem: str) -> str:
    """The motion type of a bundled clip (KeyError for a clip outside the bundled set)."""
    return MOTION_TYPE_OF_FAMILY[clip_family(stem)]


def _split() -> tuple[tuple[str, ...], tuple[str, ...]]:
    ordered = sorted(ALL_CLIPS, key=lambda s: (MOTION_TYPES.index(motion_type(s)), s))
    return tuple(sorted(ordered[0::2])), tuple(sorted(ordered[1::2]))


TUNING_CLIPS, TEST_CLIPS = _split()
"""Tuning half (20 clips: solver changes may be judged on these) and test half (19 clips: reported, never tuned on)."""

SPLITS: dict[str, tuple[str, ...]] = {"test": TEST_CLIPS, "tuning": TUNING_CLIPS, "all": ALL_CLIPS}
