"""SysID's reused models: a candidate written into a cached model is the freshly compiled candidate, whatever
candidates came before it."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from conftest import asap_reference
from trajectories import frames

from robots.registry import load_robot_spec
from trainers.delta.collect import collect_rollouts
from trainers.delta.gain_models import GainEditedModels
from trainers.delta.one_step import one_step_rms, predict_next, recorded_next, transitions
from trainers.delta.prepared_replay import PreparedReplay
from trainers.delta.sysid import SysIdConfig, identify, profile_from_parameters
from trainers.real.model import build_real_model
from trainers.reference import load_references

NOMINAL = {"kp_ankles": 1.0, "kp_legs": 1.0, "kp_waist": 1.0, "kp_arms": 1.0}
A = {**NOMINAL, "kp_ankles": 0.65, "kp_arms": 1.25, "delay_physics_steps": 2.0, "torso_mass_offset_kg": 1.0}
B = {**NOMINAL, "kp_legs": 0.5, "kp_waist": 0.8, "delay_physics_steps": 2.0, "torso_mass_offset_kg": 1.0}
C = {**NOMINAL, "kp_ankles": 0.9, "delay_physics_steps": 4.0, "torso_mass_offset_kg": -2.0}


def model_fields(model: mujoco.MjModel) -> dict[str, np.ndarray]:
    """Every array of a compiled model and of its option and statistic structs, by name."""
    out = {name: getattr(model, name) for name in dir(model) if isinstance(getattr(model, name, None), np.ndarray)}
    for struct in ("opt", "stat"):
        obj = getattr(model, struct)
        for name in dir(obj):
            value = getattr(obj, name, None)
            if not name.startswith("_") and isinstance(value, (int, float, np.ndarray)):
                out[f"{struct}.{name}"] = np.asarray(value)
    return out


def assert_same_model(a: mujoco.MjModel, b: mujoco.MjModel) -> None:
    fa, fb = model_fields(a), model_fields(b)
    assert fa.keys() == fb.keys()
    differ = [k for k in fa if fa[k].shape != fb[k].shape or not np.array_equal(fa[k], fb[k], equal_nan=True)]
    assert differ == []


@pytest.fixture(scope="module")
def combined_pairs():
    """40 frames of a zero-policy rollout of the squat in the "combined" robot (soft ankles, delay, friction,
    torque limits, heavier torso), as one-step transitions."""
    refs = load_references(asap_reference("squat_level1_filter"), build_real_model("nominal"), load_robot_spec())
    (traj,) = collect_rollouts(None, refs, "combined").values()
    return transitions([frames(traj, slice(40))])


def test_a_cached_candidate_is_the_compiled_candidate_after_any_other():
    models = GainEditedModels()
    for params in (A, B, C, A, NOMINAL | {"delay_physics_steps": 0.0, "torso_mass_offset_kg": 0.0}, B):
        profile = profile_from_parameters(params)
        assert_same_model(models.model(profile), build_real_model(profile))
    # A and B share their delay and torso mass, hence one compiled model; C and the nominal robot one each.
    assert models.compiles == 3
    # The comparison sees a gain left behind: B's model is not A's.
    b = models.model(profile_from_parameters(B))
    with pytest.raises(AssertionError):
        assert_same_model(b, build_real_model(profile_from_parameters(A)))


def test_cost_of_a_then_b_then_a_is_a_cost_and_the_fresh_models(combined_pairs):
    goal = recorded_next(combined_pairs)
    models = GainEditedModels()
    costs = [one_step_rms(models.model(profile_from_parameters(p)), combined_pairs, goal) for p in (A, B, C, A)]
    fresh = [one_step_rms(build_real_model(profile_from_parameters(p)), combined_pairs, goal) for p in (A, B, C)]
    assert costs[3] == costs[0]
    assert costs[:3] == fresh
    assert len(set(costs[:3])) == 3  # the candidates are told apart


def test_prepared_replay_predicts_what_predict_next_does_in_any_order(combined_pairs):
    models = GainEditedModels()
    replay = PreparedReplay(combined_pairs)
    for params in (A, C, B, A):  # delays 2, 4, 2: two start-state layouts, each model's data reused
        prepared = replay.predict(models.model(profile_from_parameters(params)))
        fresh = predict_next(build_real_model(profile_from_parameters(params)), combined_pairs)
        for name in ("dof_pos", "dof_vel", "root_pos_w", "root_quat_w", "root_lin_vel_w", "root_ang_vel_w"):
            np.testing.assert_array_equal(getattr(prepared, name), getattr(fresh, name), err_msg=name)
    assert len(replay.starts) == 2
    goal = recorded_next(combined_pairs)
    model = models.model(profile_from_parameters(B))
    assert replay.rms(model, goal) == one_step_rms(model, combined_pairs, goal)


def test_identify_reports_the_costs_of_freshly_compiled_candidates(combined_pairs):
    cfg = SysIdConfig(
        kp_ratios=(0.65, 1.0),
        delays_physics_steps=(0, 2),
        torso_mass_offsets_kg=(0.0, 2.0),
        rounds=1,
        max_transitions=len(combined_pairs),
    )
    seen: list[tuple[dict[str, float], float]] = []
    traj = combined_pairs[0][0]
    result = identify([traj], cfg, on_eval=lambda p, c: seen.append((p, c)))
    assert result.evaluations == len(seen) == 7  # nominal; delay 2; 0.65 in each of 4 groups; torso +2 kg
    goal = recorded_next(combined_pairs)
    for params, cost in seen:
        assert cost == one_step_rms(build_real_model(profile_from_parameters(params)), combined_pairs, goal)
    # The "combined" robot's 10 ms delay and softer ankles are found among these candidates.
    assert result.parameters["delay_physics_steps"] == 2.0 and result.parameters["kp_ankles"] == 0.65
    assert result.rms_identified < result.rms_nominal
