"""Compiled "real" G1 models reused across profiles that differ only in their PD gains.

System identification evaluates dozens of candidate robots, most of which differ from the last one only in
Kp ratios. Compiling a model costs about as much as replaying the transitions it is scored on, while PD gains
are plain numbers in ``actuator_gainprm`` / ``actuator_biasprm`` from which MuJoCo derives nothing at compile
time. So one model is compiled per profile-without-gains (what changes model sizes or compile-time derived
quantities: the delay's control history, the torso mass and its inertia statistics, friction, torque limits),
and each request writes the requested profile's Kp and Kd into every actuator — all of them, every time, so
no gain of an earlier request survives into a later one.
"""

from __future__ import annotations

from dataclasses import replace

import mujoco

from robots.registry import load_robot_spec
from trainers.config import SimConfig
from trainers.real.model import build_real_model, profile_pd_gains
from trainers.real.profiles import RealProfile, get_profile


def without_gains(profile: RealProfile) -> RealProfile:
    """The part of ``profile`` a compiled model is keyed on: everything but the PD gains and the labels."""
    return replace(profile, name="", description="", kp_scale=(), kd_scale=())


class GainEditedModels:
    """Models of ``sim``'s robot: :meth:`model` returns a compiled model equal to ``build_real_model(profile, sim)``.

    A returned model is shared: it is valid until the next :meth:`model` call, which may rewrite its gains.
    """

    def __init__(self, sim: SimConfig | None = None):
        self.sim = SimConfig() if sim is None else sim
        self.joint_names = load_robot_spec(self.sim.robot).joint_names
        self.compiled: dict[RealProfile, mujoco.MjModel] = {}

    def model(self, profile: RealProfile | str) -> mujoco.MjModel:
        """The compiled model of ``profile`` (compiled once per :func:`without_gains` key, gains written in)."""
        profile = get_profile(profile)
        if profile.engine != "mujoco":
            # Another engine builds its own robot from the compiled model; gains edited later need not reach it.
            return build_real_model(profile, self.sim)
        key = without_gains(profile)
        if key not in self.compiled:
            self.compiled[key] = build_real_model(key, self.sim)
        model = self.compiled[key]
        ids = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_ACTUATOR, name) for name in self.joint_names]
        kp, kd = profile_pd_gains(profile, self.sim)
        # Position actuator: force = Kp·ctrl − Kp·q − Kd·q̇ (gain Kp, bias (0, −Kp, −Kd)), as the builder writes it.
        model.actuator_gainprm[ids, 0] = kp
        model.actuator_biasprm[ids, 1] = -kp
        model.actuator_biasprm[ids, 2] = -kd
        return model

    @property
    def compiles(self) -> int:
        """Models compiled so far."""
        return len(self.compiled)
