"""Every corruption of a real clip is caught by the check meant for it, in the right frames; the
uncorrupted original passes those checks; a clip-wide height offset is repaired, not rejected."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from conftest import smpl_clip

from retarget.filter import FilterConfig, filter_sequence
from retarget.filter.corruptions import jitter, lift, offset, sink, skate, teleport, time_scale
from retarget.readers.amass import read_amass_npz

# Replay is reported but does not decide by default; skip it here to keep the tests short.
CONFIG = FilterConfig(layers=("kinematic", "dynamic"))
CLIP = "kick_level1_filter"  # a calm clip: no jumps, feet planted
FAST_CLIP = "single_foot_jump_level1_filter"  # fast enough that ×4 beats the G1's motors


@pytest.fixture(scope="module")
def clip():
    seq = read_amass_npz(smpl_clip(CLIP))
    return seq, filter_sequence(seq, CONFIG)[1]


def _caught(corruption, original_verdict):
    verdict = filter_sequence(corruption.seq, CONFIG)[1]
    json.dumps(verdict.to_dict())
    check = verdict.check(corruption.expected_check)
    assert original_verdict.check(corruption.expected_check).passed, "the original must pass the check"
    assert not check.passed, check.to_dict()
    assert verdict.decision in ("trim", "reject")
    return verdict, check


@pytest.mark.parametrize("make, core_fraction", [(lift, 0.7), (sink, 0.7), (skate, 0.8), (jitter, 0.8)])
def test_segment_corruption_caught_in_its_frames(clip, make, core_fraction):
    seq, original = clip
    corruption = make(seq)
    verdict, check = _caught(corruption, original)
    a, b = corruption.frames
    inside = check.bad[a:b].mean()
    outside = np.concatenate([check.bad[: max(a - 3, 0)], check.bad[b + 3 :]]).sum()
    assert inside >= core_fraction, (corruption.name, check.bad_ranges, (a, b))
    assert outside == 0, (corruption.name, check.bad_ranges, (a, b))
    # The trimmed clip keeps none of the corrupted core.
    for start, stop in verdict.kept_ranges:
        assert stop <= a + 10 or start >= b - 10


def test_teleport_caught_at_the_jump(clip):
    seq, original = clip
    corruption = teleport(seq)
    verdict, check = _caught(corruption, original)
    assert check.bad_ranges == [corruption.frames]
    assert check.figures["jump_m"] == pytest.approx(0.5, abs=0.05)
    assert verdict.decision == "trim"  # the halves on either side are long enough to keep


def test_time_scaled_clip_beats_the_motors():
    seq = read_amass_npz(smpl_clip(FAST_CLIP))
    original = filter_sequence(seq, CONFIG)[1]
    corruption = time_scale(seq)
    _verdict, check = _caught(corruption, original)
    assert check.worst > 1.0
    assert len(check.bad) == corruption.frames[1]


@pytest.mark.parametrize("dz", [0.10, -0.10])
def test_clip_wide_offset_is_repaired_not_rejected(clip, dz):
    seq, original = clip
    verdict = filter_sequence(offset(seq, dz).seq, CONFIG)[1]
    repairs = {r.name: r for r in verdict.repairs}
    assert repairs["human.reground"].offset_m == pytest.approx(-dz, abs=0.01)
    assert verdict.decision == original.decision
    assert {c.name for c in verdict.failed_checks} == {c.name for c in original.failed_checks}
    assert verdict.kept_ranges == original.kept_ranges
