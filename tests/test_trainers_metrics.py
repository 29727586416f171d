"""Tracking metrics on hand-made trajectories with known answers."""

from __future__ import annotations

import numpy as np
import pytest

from trainers.metrics import tracking_metrics


def _ref(num_frames=10, num_points=3):
    t = np.arange(num_frames, dtype=float)[:, None, None]
    base = np.arange(num_points, dtype=float)[None, :, None] * np.array([0.0, 0.1, 0.0])
    return base + t * np.array([0.01, 0.0, 0.0])  # moving 10 mm/frame along x


def test_constant_offset_gives_global_error_only():
    ref = _ref()
    pos = ref + np.array([0.0, 0.0, 0.02])  # every point 20 mm too high
    m = tracking_metrics([(pos, ref)])
    assert m.eg_mpjpe_mm == pytest.approx(20.0)
    assert m.empjpe_mm == pytest.approx(0.0, abs=1e-9)  # root-relative: the offset cancels
    assert m.evel_mm_per_frame == pytest.approx(0.0, abs=1e-9)
    assert m.eacc_mm_per_frame2 == pytest.approx(0.0, abs=1e-9)
    assert m.success_rate == 1.0 and m.num_frames == 10


def test_velocity_and_acceleration_errors():
    ref = _ref()
    t = np.arange(10, dtype=float)[:, None, None]
    # Robot drifts by 3 mm per frame in y: velocity error 3 mm/frame, no acceleration error.
    pos = ref + t * np.array([0.0, 0.003, 0.0])
    m = tracking_metrics([(pos, ref)])
    assert m.evel_mm_per_frame == pytest.approx(3.0)
    assert m.eacc_mm_per_frame2 == pytest.approx(0.0, abs=1e-9)
    assert m.eg_mpjpe_mm == pytest.approx(3.0 * 4.5)  # mean of 0, 3, ..., 27 mm
    # Quadratic drift 0.5·k² mm: second difference 1 mm/frame².
    pos = ref + 0.5 * t**2 * np.array([0.0, 0.0, 0.001])
    assert tracking_metrics([(pos, ref)]).eacc_mm_per_frame2 == pytest.approx(1.0)


def test_root_relative_error_of_one_displaced_point():
    ref = _ref(num_points=4)
    pos = ref.copy()
    pos[:, 2] += np.array([0.04, 0.0, 0.0])  # one of four points 40 mm off
    m = tracking_metrics([(pos, ref)])
    assert m.empjpe_mm == pytest.approx(10.0)
    assert m.eg_mpjpe_mm == pytest.approx(10.0)


def test_success_uses_the_half_metre_mean_distance_rule_and_frames_weight_episodes():
    ref = _ref()
    ok = ref + np.array([0.49, 0.0, 0.0])
    bad = ref.copy()
    bad[-1] += np.array([0.51, 0.0, 0.0])  # one frame over 0.5 m
    m = tracking_metrics([(ok, ref), (bad, ref[:10])])
    assert m.success_rate == 0.5
    short = tracking_metrics([(ok[:2], ref[:2]), (ref, ref)])
    # 2 frames at 490 mm and 10 frames at 0: the frame-weighted mean.
    assert short.eg_mpjpe_mm == pytest.approx(490.0 * 2 / 12)


def test_shape_mismatch_is_rejected():
    with pytest.raises(ValueError, match="shape"):
        tracking_metrics([(np.zeros((5, 3, 3)), np.zeros((4, 3, 3)))])
