"""The feed-forward of the replay: inverse dynamics on the simulated state, with balance.

ASAP's PD gains are set for a policy that balances the robot; on their own they cannot
(the ankle pitch stiffness, 2 × 20 N·m/rad, is far below the 240 N·m/rad gravity tips a
35 kg robot over its ankles with), and feed-forward torques computed once along the
reference only hold an unstable equilibrium: in tests a G1 holding its first frame fell
within 1.5 s. So the feed-forward is recomputed every control step on the *simulated*
state: the desired acceleration is the reference acceleration plus a PD pull of the
floating base toward its reference pose; RNEA gives the generalized forces; the feet the
simulator has on the floor supply the base part (the same contact problem as layer 2,
friction cone and support polygon included) and the rest are joint torques. The base is
still not actuated: if the contacts cannot supply the wrench, the robot drifts or falls.
"""

from __future__ import annotations

import mujoco
import numpy as np
import pinocchio as pin

from retarget.filter.contact_wrench import solve_contact_forces
from retarget.filter.dynamics import base_wrench_w, contact_generalized_forces, pin_model
from robots.pinocchio_model import mujoco_qpos_to_pinocchio
from robots.registry import RobotSpec

CONTACT_GAP_M = 0.02
"""A simulated foot this close to the floor may push on it [m]."""


MAX_PULL_M_S2 = 10.0
"""Largest linear acceleration the base pull may ask for [m/s²]."""
MAX_PULL_RAD_S2 = 12.0
"""Largest angular acceleration the base pull may ask for [rad/s²]."""


def _clip_norm(x: np.ndarray, limit: float) -> np.ndarray:
    norm = float(np.linalg.norm(x))
    return x if norm <= limit else x * (limit / norm)


class BalanceFeedForward:
    """Joint torques [N·m] that make the simulated G1 follow a reference, from its contacts."""

    def __init__(self, mj_model: mujoco.MjModel, robot: RobotSpec, mu: float, base_kp: float, base_kd: float):
        self.model, self.foot_frames, self.mass = pin_model(robot.name)
        self.data = self.model.createData()
        self.robot = robot
        self.mu, self.base_kp, self.base_kd = mu, base_kp, base_kd
        self.sole_b = np.stack([robot.sole_points_b(link) for link in robot.foot_links])

    def __call__(
        self, mj_data: mujoco.MjData, q_ref: np.ndarray, v_ref: np.ndarray, a_ref: np.ndarray, ref_contact: np.ndarray
    ) -> np.ndarray:
        """Joint torques for the current MuJoCo state.

        `q_ref`, `v_ref`, `a_ref` are the reference in pinocchio form; `ref_contact` (2,) says which
        feet the reference has on the floor. A foot may push when the reference has it on the floor
        and the simulated sole is within `CONTACT_GAP_M` of it (the soft contact lets a loaded foot
        sink a few millimetres, so the other foot of a flat stance can hover by as much).
        """
        model, data = self.model, self.data
        q = mujoco_qpos_to_pinocchio(mj_data.qpos)
        rot = pin.Quaternion(q[6], q[3], q[4], q[5]).toRotationMatrix()
        v = mj_data.qvel.copy()
        v[0:3] = rot.T @ mj_data.qvel[0:3]  # MuJoCo: world linear velocity; pinocchio: base frame
        pin.forwardKinematics(model, data, q)
        soles = np.zeros((2,) + self.sole_b.shape[1:])
        feet = []
        for f in range(2):
            if ref_contact[f]:
                placement = pin.updateFramePlacement(model, data, self.foot_frames[f])
                soles[f] = placement.translation + self.sole_b[f] @ placement.rotation.T
                if soles[f][:, 2].min() < CONTACT_GAP_M:
                    feet.append(f)
        a_des = a_ref.copy()
        if feet:
            # Only feet on the floor can pull the base back; the pull is bounded (about 1 g, 2 turns/s²).
            error = pin.difference(model, q, q_ref)
            pull = self.base_kp * error[:6] + self.base_kd * (v_ref[:6] - v[:6])
            a_des[:3] += _clip_norm(pull[:3], MAX_PULL_M_S2)
            a_des[3:6] += _clip_norm(pull[3:6], MAX_PULL_RAD_S2)
        tau = pin.rnea(model, data, q, v, a_des)
        if not feet:
            return tau[6:].copy()
        force_w, moment_w, com = base_wrench_w(model, data, q, tau)
        points = np.concatenate([soles[f] for f in feet])
        sol = solve_contact_forces(points, com, force_w, moment_w, self.mu)
        return tau[6:] - contact_generalized_forces(model, data, q, self.foot_frames, feet, soles, sol.forces_w)[6:]
