"""The "real" G1 profiles: what each changes, the delay's exact timing,
and the nominal model's equality with training's."""

from __future__ import annotations

import numpy as np
import pytest

from trainers.real.model import build_pd_spec, build_real_model
from trainers.real.profiles import PROFILES, UnknownProfileError, get_profile
from trainers.real.stepper import PdRobot
from trainers.sim_model import build_training_model


def test_nominal_spec_compiles_to_the_training_model():
    ours, theirs = build_real_model("nominal"), build_training_model()
    assert (ours.nq, ours.nv, ours.nu, ours.ngeom) == (theirs.nq, theirs.nv, theirs.nu, theirs.ngeom)
    for field in (
        "actuator_gainprm",
        "actuator_biasprm",
        "actuator_forcerange",
        "dof_armature",
        "dof_damping",
        "dof_frictionloss",
        "body_mass",
        "geom_conaffinity",
        "geom_contype",
    ):
        np.testing.assert_array_equal(getattr(ours, field), getattr(theirs, field), err_msg=field)
    assert ours.opt.timestep == theirs.opt.timestep and ours.opt.integrator == theirs.opt.integrator


def test_fixed_base_has_no_free_joint_and_no_floor(g1):
    model = build_pd_spec(fixed_base=True).compile()
    assert model.nq == model.nv == g1.num_dof
    assert all(model.geom(i).name != "floor" for i in range(model.ngeom))


def test_soft_ankles_change_only_ankle_stiffness(g1):
    nominal, soft = build_real_model("nominal"), build_real_model("soft_ankles")
    ankle = np.array(["ankle" in n for n in g1.joint_names])
    np.testing.assert_allclose(soft.actuator_gainprm[ankle, 0], 0.65 * nominal.actuator_gainprm[ankle, 0])
    np.testing.assert_allclose(soft.actuator_biasprm[ankle, 1], 0.65 * nominal.actuator_biasprm[ankle, 1])
    np.testing.assert_array_equal(soft.actuator_gainprm[~ankle], nominal.actuator_gainprm[~ankle])
    np.testing.assert_array_equal(soft.actuator_biasprm[:, 2], nominal.actuator_biasprm[:, 2])  # Kd unchanged


def test_friction_and_combined_profiles(g1):
    nominal, friction, combined = (build_real_model(p) for p in ("nominal", "friction", "combined"))
    dofs = [friction.jnt_dofadr[friction.joint(n).id] for n in g1.joint_names]
    np.testing.assert_allclose(friction.dof_frictionloss[dofs], 0.3)
    np.testing.assert_allclose(friction.dof_damping[dofs], 0.2)
    np.testing.assert_allclose(friction.actuator_forcerange, 0.8 * nominal.actuator_forcerange)
    torso = combined.body("torso_link").id
    assert combined.body_mass[torso] == pytest.approx(nominal.body_mass[torso] + 2.0)
    assert combined.actuator_history[0, 0] == 3  # 2-step delay keeps 3 samples


@pytest.mark.parametrize("profile", ["delay", "combined"])
def test_delay_applies_the_target_of_exactly_n_physics_steps_ago(profile):
    n = get_profile(profile).delay_physics_steps
    robot = PdRobot(build_real_model(profile, fixed_base=True))
    m, d = robot.model, robot.data
    start = np.zeros(m.nu)
    robot.reset(start)
    rng = np.random.default_rng(0)
    sent = []
    kp, kd = m.actuator_gainprm[:, 0], -m.actuator_biasprm[:, 2]
    for k in range(400):  # 2 s: long enough for data.time to accumulate rounding
        target = rng.normal(0.0, 0.05, m.nu)
        sent.append(target)
        q, qd = robot.dof_pos, robot.dof_vel
        robot.step_physics(target)
        applied = sent[k - n] if k >= n else start
        expected = np.clip(kp * (applied - q) - kd * qd, m.actuator_forcerange[:, 0], m.actuator_forcerange[:, 1])
        np.testing.assert_allclose(d.actuator_force, expected, atol=1e-9, err_msg=f"step {k}")


def test_reset_fills_the_delay_history_with_the_targets():
    robot = PdRobot(build_real_model("delay", fixed_base=True))
    hold = np.full(robot.model.nu, 0.1)
    robot.reset(hold, targets=hold)
    robot.step_physics(np.zeros(robot.model.nu))  # the new target is not applied yet; the held 0.1 is
    # At rest on its held target, so no torque (an empty history would pull it toward 0: −Kp·0.1).
    np.testing.assert_allclose(robot.data.actuator_force, 0.0, atol=1e-9)


def test_unknown_profile_lists_the_choices():
    with pytest.raises(UnknownProfileError, match="soft_ankles_delay"):
        get_profile("wobbly")
    assert set(PROFILES) >= {"soft_ankles", "delay", "friction", "soft_ankles_delay", "combined"}
