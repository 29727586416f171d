"""Analytic checks of the physics filter: frame utilities, contact wrench, ballistic flight, replay."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from retarget.filter.contact_wrench import solve_contact_forces
from retarget.filter.dynamics import analyse_dynamics, pin_model
from retarget.filter.frames import good_ranges, noise_level_m, persistent, runs
from retarget.filter.motion_checks import GRAVITY_M_S2, ballistic_deviation_m, floor_offset_m
from retarget.filter.replay import replay_range
from retarget.filter.robot_geometry import compute_robot_geometry


def test_runs_persistence_and_good_ranges():
    mask = np.array([0, 1, 1, 0, 1, 1, 1, 0, 0], dtype=bool)
    assert runs(mask) == [(1, 3), (4, 7)]
    assert runs(persistent(mask, 3)) == [(4, 7)]
    assert good_ranges(mask, 2) == [(7, 9)]
    assert good_ranges(mask, 1) == [(7, 9), (0, 1), (3, 4)]


def test_noise_level_estimates_white_noise_sigma():
    rng = np.random.default_rng(1)
    t = np.arange(300) / 30.0
    smooth = np.stack([np.sin(2 * np.pi * 1.5 * t), np.cos(t), 0.3 * t], axis=1)[:, None, :].repeat(10, axis=1)
    # A 1.5 Hz swing of 1 m shows as (2 - 2cos(π/10))² / √70 = 1.1 mm: 20× below 2 cm of noise.
    assert noise_level_m(smooth).max() < 1.2e-3
    noisy = smooth + rng.normal(0, 0.02, smooth.shape)
    # Median over points of a 3-D noise norm (chi with 3 dof, median 1.54) averaged over 5 frames: ≈ 1.56 σ.
    assert np.median(noise_level_m(noisy)) == pytest.approx(0.02 * 1.56, rel=0.1)
    assert np.median(noise_level_m(noisy)) - np.median(noise_level_m(smooth)) > 0.025


def test_ballistic_arc_and_floor_offset():
    t = np.arange(12) / 30.0
    assert ballistic_deviation_m(1.0 + 2.0 * t - 0.5 * GRAVITY_M_S2 * t**2, 30.0) < 1e-9
    assert ballistic_deviation_m(np.full(30, 1.0), 30.0) > 0.1  # hovering for 1 s is no free fall
    heights = np.concatenate([np.full(60, 0.10), np.full(30, 0.02), np.linspace(0.1, 0.5, 10)])
    assert floor_offset_m(heights, 0.03) == pytest.approx(0.10)


@pytest.fixture(scope="module")
def standing_qpos(g1, g1_mj_model):
    """The G1's rest pose with its soles on the floor, held for 1 s at 30 Hz."""
    q = g1_mj_model.qpos0.copy()
    q[2] = 1.0
    lowest = compute_robot_geometry(q[None], g1).sole_w[0, ..., 2].min()
    q[2] -= lowest
    return np.repeat(q[None], 30, axis=0)


def test_standing_robot_needs_its_weight_from_the_feet(g1, standing_qpos):
    geometry = compute_robot_geometry(standing_qpos, g1)
    dyn = analyse_dynamics(standing_qpos, geometry.sole_w, 30.0, g1)
    _, _, mass = pin_model(g1.name)
    # Independent of pinocchio: every <inertial><mass> of the URDF, summed (35.1 kg for the 23-dof G1).
    urdf_mass = sum(float(m.get("value")) for m in ET.parse(g1.urdf_path).getroot().iter("mass"))
    assert mass == pytest.approx(urdf_mass, rel=1e-9) and 30.0 < urdf_mass < 40.0
    assert dyn.in_contact.all()
    assert dyn.residual_force_n.max() < 1.0 and dyn.residual_moment_nm.max() < 0.5
    assert all(c.passed for c in dyn.checks)
    # The contact forces that hold it add up to m·g, straight up.
    points = geometry.sole_w[0].reshape(-1, 3)
    com = points.mean(axis=0) + np.array([0.0, 0.0, 0.6])
    com[:2] = points[:, :2].mean(axis=0)
    sol = solve_contact_forces(points, com, np.array([0, 0, mass * GRAVITY_M_S2]), np.zeros(3), 0.8)
    assert sol.forces_w.sum(axis=0) == pytest.approx([0, 0, mass * GRAVITY_M_S2], abs=0.5)
    assert (sol.forces_w[:, 2] >= 0).all()


def test_contact_cannot_pull_or_push_outside_the_foot(g1, standing_qpos):
    points = compute_robot_geometry(standing_qpos[:1], g1).sole_w[0].reshape(-1, 3)
    centre = points.mean(axis=0)
    pull = solve_contact_forces(points, centre, np.array([0, 0, -100.0]), np.zeros(3), 0.8)
    assert np.linalg.norm(pull.residual_force_n) == pytest.approx(100.0, abs=1e-6)  # unilateral
    # A centre of mass 1 m outside the support polygon: the feet cannot hold it up.
    outside = solve_contact_forces(points, centre + np.array([1.0, 0, 0]), np.array([0, 0, 300.0]), np.zeros(3), 0.8)
    assert np.linalg.norm(outside.residual_force_n) > 10.0 and np.linalg.norm(outside.residual_moment_nm) > 10.0


def test_free_fall_passes_the_ballistic_check_and_hovering_fails(g1, standing_qpos):
    t = np.arange(20) / 30.0
    falling = np.repeat(standing_qpos[:1], 20, axis=0)
    falling[:, 2] += 1.5 + 1.0 * t - 0.5 * GRAVITY_M_S2 * t**2  # feet well above the floor throughout
    geometry = compute_robot_geometry(falling, g1)
    dyn = analyse_dynamics(falling, geometry.sole_w, 30.0, g1)
    assert not dyn.in_contact.any()
    ballistic = dyn.checks[0]
    assert ballistic.name == "robot.ballistic_com" and ballistic.passed
    assert dyn.com_accel_error_m_s2.max() < 0.05
    hovering = np.repeat(standing_qpos[:1], 20, axis=0)
    hovering[:, 2] += 0.3
    dyn = analyse_dynamics(hovering, compute_robot_geometry(hovering, g1).sole_w, 30.0, g1)
    assert not dyn.checks[0].passed
    assert dyn.com_accel_error_m_s2.max() == pytest.approx(GRAVITY_M_S2, abs=0.01)


def test_replay_holds_a_standing_pose(g1, standing_qpos):
    geometry = compute_robot_geometry(standing_qpos, g1)
    contact = np.ones((len(standing_qpos), 2), dtype=bool)
    outcome = replay_range(standing_qpos, geometry.body_pos_w, contact, 30.0, g1, 0, len(standing_qpos))
    assert not outcome.failed
    assert outcome.max_distance_m < 0.05
    assert outcome.steps == pytest.approx(29 * 200 / 30, abs=1)
    assert json.dumps(outcome.to_dict(30.0))


def test_cli_filter_writes_json_and_rejects_missing_file(tmp_path):
    from click.testing import CliRunner
    from conftest import smpl_clip

    from cli.main import main

    out = tmp_path / "verdicts.json"
    clip = smpl_clip("side_jump_level1_filter")
    result = CliRunner().invoke(main, ["filter", str(clip), "--json", str(out), "--layers", "kinematic"])
    assert result.exit_code == 0, result.output
    doc = json.loads(out.read_text())
    (verdict,) = doc["verdicts"]
    assert verdict["decision"] in ("keep", "trim", "reject") and verdict["num_frames"] == 92
    assert {c["name"] for c in verdict["checks"]} >= {"human.floating", "robot.self_collision"}
    missing = CliRunner().invoke(main, ["filter", str(tmp_path / "nope.npz")])
    assert missing.exit_code == 1 and "does not exist" in missing.output
    library = tmp_path / "lib.pkl"
    library.write_bytes(b"\x80\x04N.")
    not_a_clip = CliRunner().invoke(main, ["filter", str(library)])
    assert not_a_clip.exit_code == 1 and "lib.pkl" in not_a_clip.output and "AMASS .npz" in not_a_clip.output
    bad_layer = CliRunner().invoke(main, ["filter", str(clip), "--layers", "kinematic,magic"])
    assert bad_layer.exit_code == 2
