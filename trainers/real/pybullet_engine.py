"""A "real" G1 in PyBullet: another physics engine behind the batch interface the MuJoCo "real" robots use.

A profile named ``pybullet:<profile>`` (``pybullet`` alone: ``pybullet:nominal``) compiles the same
MuJoCo model as ``<profile>`` — that model carries the PD gains, torque limits, joint friction and
damping and the torso mass the profile sets — and marks it with a text element, :data:`ENGINE_TEXT`.
Whoever steps a marked model (:func:`trainers.real.batch.make_batch` for the tracking environment, the
:class:`~trainers.real.stepper.PdRobot`) gets a :class:`PybulletBatch`: the robot is loaded into
PyBullet from the same URDF, with PyBullet's own contact model (its mesh collision shapes against a
plane, its solver, its friction), and the MuJoCo model only serves as the kinematic mirror that
observations, rewards and metrics read (``xpos``, ``xquat``, ``site_xpos``, ``cvel``, ``subtree_com``).

The PD law is the one of the MuJoCo actuators, τ = clip(Kp·(q* − q) − Kd·q̇, ±τ_max), applied as a joint
torque at every physics step (same step size, same number of physics steps per policy step). What
PyBullet does differently, on purpose or because it cannot do otherwise:

* contacts: the convex hulls of the collision meshes (:mod:`trainers.real.pybullet_hulls`) and a
  sequential-impulse solver instead of MuJoCo's soft contacts;
* the −Kd·q̇ term is explicit (MuJoCo's ``implicitfast`` integrates it implicitly);
* rotor inertia (armature) has no PyBullet equivalent: it is added to the child link's principal inertia
  about every axis (:func:`_add_armature`), a heavier approximation than MuJoCo's joint-space armature;
* dry joint friction is a zero-velocity motor of that maximum force, viscous damping an explicit torque;
* an actuation delay is a queue of targets here (MuJoCo's model carries none, see :func:`mark_spec`).
"""

from __future__ import annotations

from collections import deque
from typing import Any

import mujoco
import numpy as np

from retarget.errors import AsapRetargetError
from robots.registry import load_robot_spec
from trainers.c_output import c_output_silenced
from trainers.real import pybullet_hulls

ENGINE_TEXT = "asap_real_engine"
"""Name of the MuJoCo text element whose data names the engine that plays a marked model."""
ROBOT_TEXT = "asap_real_robot"
"""Name of the text element naming the bundled robot (the URDF the other engine loads)."""
DELAY_NUMERIC = "asap_real_delay_steps"
"""Name of the numeric element holding the actuation delay [physics steps] of a marked model."""
_MASSLESS_KG = 1e-4
MIN_ENVS_PER_WORKER = 8
"""A PyBullet batch is split over worker processes only when each gets at least this many worlds (starting a
worker costs about a second: a handful of evaluation episodes stays in one process)."""
FLOOR_FRICTION = 1.0
"""Floor/foot friction coefficient in PyBullet (MuJoCo's default sliding friction is also 1)."""


class OtherEngineError(AsapRetargetError):
    """Something the other physics engine cannot do (domain randomization of the MuJoCo model)."""


def mark_spec(spec: mujoco.MjSpec, engine: str, robot: str, delay_physics_steps: int) -> mujoco.MjSpec:
    """Mark a profiled spec as played by ``engine``; its actuation delay moves from MuJoCo's actuators
    to a numeric element (the other engine delays the targets itself)."""
    for act in spec.actuators:
        act.delay, act.nsample = 0.0, 0
    spec.add_text(name=ENGINE_TEXT, data=engine)
    spec.add_text(name=ROBOT_TEXT, data=robot)
    spec.add_numeric(name=DELAY_NUMERIC, data=[float(delay_physics_steps)], size=1)
    return spec


def model_engine(model: mujoco.MjModel) -> str:
    """The engine a compiled model is played by ("mujoco" unless marked)."""
    return _model_text(model, ENGINE_TEXT) or "mujoco"


def _model_text(model: mujoco.MjModel, name: str) -> str:
    """The data of a text element ('' when the model has none of that name)."""
    i = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_TEXT, name)
    if i < 0:
        return ""
    start = int(model.text_adr[i])
    return bytes(model.text_data[start : start + int(model.text_size[i]) - 1]).decode()


def _add_armature(client: Any, body: int, link: int, armature_kgm2: float) -> None:
    if armature_kgm2 <= 0.0:
        return
    inertia = np.asarray(client.getDynamicsInfo(body, link)[2], dtype=float)
    client.changeDynamics(body, link, localInertiaDiagonal=(inertia + armature_kgm2).tolist())


class MirroredBatchState:
    """The part of :class:`mujoco.batch.Batch`'s interface that only touches the MuJoCo mirror of each PyBullet
    world: bound arrays, resets to the model's default state, and the refusal of domain randomization."""

    model: mujoco.MjModel
    data: list[mujoco.MjData]
    _arrays: dict[str, np.ndarray]

    def bind(self, name: str) -> np.ndarray:
        return self._arrays[name]

    def reset(self, ids: np.ndarray, stage: object = None) -> None:
        for i in np.asarray(ids, dtype=int):
            mujoco.mj_resetData(self.model, self.data[i])
            for key in ("qpos", "qvel", "ctrl"):
                self._arrays[key][i] = getattr(self.data[i], key)

    def expand(self, name: str) -> np.ndarray:
        raise OtherEngineError(f"domain randomization ({name}) is not available for a robot played by PyBullet")


class PybulletBatch(MirroredBatchState):
    """``nsim`` PyBullet worlds with the subset of :class:`mujoco.batch.Batch` that the stepping code uses:
    :meth:`bind` (qpos, qvel, ctrl, history and the kinematic outputs), :meth:`reset`, :meth:`forward`,
    :meth:`step`. Writes into the bound qpos/qvel/ctrl take effect at the next :meth:`forward` or
    :meth:`step`; PyBullet is the source of truth in between."""

    def __init__(self, model: mujoco.MjModel, nsim: int):
        with c_output_silenced():  # PyBullet prints its build date on import
            import pybullet  # type: ignore[import-not-found]
            from pybullet_utils.bullet_client import BulletClient  # type: ignore[import-untyped]

        self.model, self.nsim = model, int(nsim)
        self.robot = load_robot_spec(_model_text(model, ROBOT_TEXT))
        self.fixed_base = model.nq == self.robot.num_dof
        self.dt_s = float(model.opt.timestep)
        act_ids = [model.actuator(n).id for n in self.robot.joint_names]
        self.kp = model.actuator_gainprm[act_ids, 0].copy()
        self.kd = -model.actuator_biasprm[act_ids, 2].copy()
        self.tau_max_nm = model.actuator_forcerange[act_ids, 1].copy()
        jnt = [model.joint(n).id for n in self.robot.joint_names]
        dofs = model.jnt_dofadr[jnt]
        self.damping_nms = model.dof_damping[dofs].copy()
        self.frictionloss_nm = model.dof_frictionloss[dofs].copy()
        self.qpos_adr, self.qvel_adr = model.jnt_qposadr[jnt], dofs
        self.delay_steps = int(model.numeric(DELAY_NUMERIC).data[0])
        self.root_pos_w = model.body_pos[1].copy()
        self.root_quat_w = model.body_quat[1].copy()
        self.data = [mujoco.MjData(model) for _ in range(self.nsim)]
        self._arrays = {
            k: np.stack([getattr(d, k) for d in self.data])
            for k in (
                "qpos",
                "qvel",
                "ctrl",
                "xpos",
                "xquat",
                "site_xpos",
                "cvel",
                "subtree_com",
                "actuator_force",
                "history",
            )
        }
        self._arrays["actuator_force"] = np.zeros((self.nsim, model.nu))
        self._queue: list[deque[np.ndarray]] = [deque() for _ in range(self.nsim)]
        self.clients: list[Any] = []
        self.bodies: list[int] = []
        with c_output_silenced():  # PyBullet prints its build and a warning per sensor link without inertia
            self._load_worlds(pybullet, BulletClient)
        self._configure_links(pybullet)
        self._base_inertial = [c.getDynamicsInfo(b, -1)[3:5] for c, b in zip(self.clients, self.bodies)]
        self._pybullet = pybullet

    def _load_worlds(self, pybullet: Any, client_type: Any) -> None:
        urdf = pybullet_hulls.hull_urdf(self.robot.urdf_path)  # the same convex shapes, 4× faster to load
        for _ in range(self.nsim):
            client = client_type(connection_mode=pybullet.DIRECT)
            client.setGravity(0.0, 0.0, -9.81)
            client.setTimeStep(self.dt_s)
            if not self.fixed_base:
                plane = client.createCollisionShape(pybullet.GEOM_PLANE)
                floor = client.createMultiBody(0.0, plane)
                client.changeDynamics(floor, -1, lateralFriction=FLOOR_FRICTION)
            body = client.loadURDF(
                str(urdf),
                self.root_pos_w.tolist(),
                _xyzw(self.root_quat_w),
                useFixedBase=self.fixed_base,
                flags=pybullet.URDF_USE_INERTIA_FROM_FILE,
            )
            self.clients.append(client)
            self.bodies.append(body)

    def _configure_links(self, pybullet: Any) -> None:
        """Link masses and armature from the MuJoCo model, foot friction, joint friction motors."""
        model = self.model
        c0, b0 = self.clients[0], self.bodies[0]
        by_name = {c0.getJointInfo(b0, j)[1].decode(): j for j in range(c0.getNumJoints(b0))}
        self.joint_ids = [by_name[n] for n in self.robot.joint_names]
        # The torso mass of a profile lives in the MuJoCo model; copy every link mass from it.
        link_masses = {c0.getJointInfo(b0, j)[12].decode(): j for j in range(c0.getNumJoints(b0))}
        for client, body in zip(self.clients, self.bodies):
            for name, link in link_masses.items():
                mj_body = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, name)
                if mj_body >= 0:
                    client.changeDynamics(body, link, mass=float(model.body_mass[mj_body]))
                else:  # a sensor frame without inertial data (PyBullet would give it 1 kg); MuJoCo fuses it
                    client.changeDynamics(body, link, mass=_MASSLESS_KG, localInertiaDiagonal=[_MASSLESS_KG * 1e-4] * 3)
                client.changeDynamics(body, link, lateralFriction=FLOOR_FRICTION)
            for link, arm in zip(self.joint_ids, self.robot.armature_kgm2):
                _add_armature(client, body, link, float(arm))
            # Disable the default velocity motors; dry friction is a zero-velocity motor of bounded force.
            client.setJointMotorControlArray(
                body,
                self.joint_ids,
                pybullet.VELOCITY_CONTROL,
                targetVelocities=[0.0] * len(self.joint_ids),
                forces=self.frictionloss_nm.tolist(),
            )
            client.changeDynamics(body, -1, lateralFriction=FLOOR_FRICTION)

    # --- the Batch interface -----------------------------------------------------------------
    def forward(self, ids: np.ndarray | None = None, stage: object = None) -> None:
        """Push the bound state of ``ids`` into PyBullet and refresh their kinematic outputs."""
        ids = np.arange(self.nsim) if ids is None else np.asarray(ids, dtype=int)
        for i in ids:
            self._push(int(i))
            self._queue[i] = deque([self._arrays["ctrl"][i].copy()] * self.delay_steps)
            self._mirror(int(i))

    def step(self, nstep: int = 1, stage: object = None) -> None:
        """``nstep`` physics steps of every simulation under the PD law toward the bound ``ctrl``.

        Raises :class:`mujoco.batch.SimulationError` listing the simulations whose state became non-finite
        (as MuJoCo's batch does; the others ran to completion)."""
        diverged = []
        for i in range(self.nsim):
            for _ in range(nstep):
                target = self._arrays["ctrl"][i].copy()
                if self.delay_steps:
                    self._queue[i].append(target)
                    target = self._queue[i].popleft()
                q, qd = self._joint_state(i)
                self.step_torque(i, np.clip(self.kp * (target - q) - self.kd * qd, -self.tau_max_nm, self.tau_max_nm))
            if not self.sync(i):
                diverged.append(i)
        if diverged:
            import mujoco.batch

            raise mujoco.batch.SimulationError(np.array(diverged), "PyBullet state became non-finite")

    def step_torque(self, i: int, tau_nm: np.ndarray) -> None:
        """One physics step of simulation ``i`` with joint torques ``tau_nm`` (D,) from the caller's own PD loop
        (the profile's viscous damping and dry friction act on top). Call :meth:`sync` before reading the state."""
        client, body = self.clients[i], self.bodies[i]
        _, qd = self._joint_state(i)
        client.setJointMotorControlArray(
            body, self.joint_ids, self._pybullet.TORQUE_CONTROL, forces=(tau_nm - self.damping_nms * qd).tolist()
        )
        client.stepSimulation()
        self._arrays["actuator_force"][i] = tau_nm

    def sync(self, i: int) -> bool:
        """Copy simulation ``i``'s PyBullet state into the bound arrays and their MuJoCo kinematics;
        False (and no kinematics) when that state is not finite."""
        if not self._pull(i):
            return False
        self._mirror(i)
        return True

    def _joint_state(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        states = self.clients[i].getJointStates(self.bodies[i], self.joint_ids)
        return np.array([s[0] for s in states]), np.array([s[1] for s in states])

    # --- state transfer ----------------------------------------------------------------------
    def _push(self, i: int) -> None:
        client, body = self.clients[i], self.bodies[i]
        qpos, qvel = self._arrays["qpos"][i], self._arrays["qvel"][i]
        for j, adr, vadr in zip(self.joint_ids, self.qpos_adr, self.qvel_adr):
            client.resetJointState(body, j, float(qpos[adr]), float(qvel[vadr]))
        if self.fixed_base:
            return
        # MuJoCo's free joint: pelvis origin and wxyz orientation, world linear and body angular velocity.
        # PyBullet's base: the inertial frame of the pelvis, world linear and angular velocity.
        pos, quat_xyzw = qpos[:3], _xyzw(qpos[3:7])
        com_b, com_quat = self._base_inertial[i]
        com_pos, com_orn = client.multiplyTransforms(pos.tolist(), quat_xyzw, com_b, com_quat)
        client.resetBasePositionAndOrientation(body, com_pos, com_orn)
        rot = np.array(client.getMatrixFromQuaternion(quat_xyzw)).reshape(3, 3)
        ang_w = rot @ qvel[3:6]
        lin_com = qvel[:3] + np.cross(ang_w, np.asarray(com_pos) - pos)
        client.resetBaseVelocity(body, lin_com.tolist(), ang_w.tolist())

    def _pull(self, i: int) -> bool:
        client, body = self.clients[i], self.bodies[i]
        qpos, qvel = self._arrays["qpos"][i], self._arrays["qvel"][i]
        qpos[self.qpos_adr], qvel[self.qvel_adr] = self._joint_state(i)
        if self.fixed_base:
            return bool(np.isfinite(qpos).all() and np.isfinite(qvel).all())
        com_pos, com_orn = client.getBasePositionAndOrientation(body)
        com_b, com_quat = self._base_inertial[i]
        inv_pos, inv_orn = client.invertTransform(com_b, com_quat)
        pos, orn = client.multiplyTransforms(com_pos, com_orn, inv_pos, inv_orn)
        lin_com, ang_w = client.getBaseVelocity(body)
        rot = np.array(client.getMatrixFromQuaternion(orn)).reshape(3, 3)
        qpos[:3] = pos
        qpos[3:7] = (orn[3], orn[0], orn[1], orn[2])
        qvel[:3] = np.asarray(lin_com) + np.cross(ang_w, np.asarray(pos) - np.asarray(com_pos))
        qvel[3:6] = rot.T @ np.asarray(ang_w)
        return bool(np.isfinite(qpos).all() and np.isfinite(qvel).all())

    def _mirror(self, i: int) -> None:
        mirror_kinematics(self.model, self.data[i], self._arrays, i)


MIRRORED = ("xpos", "xquat", "site_xpos", "cvel", "subtree_com")
"""The kinematic outputs of MuJoCo's batch that the mirror of a PyBullet state provides."""


def mirror_kinematics(model: mujoco.MjModel, data: mujoco.MjData, arrays: dict[str, np.ndarray], i: int) -> None:
    """MuJoCo kinematics of simulation ``i``'s PyBullet state (bound ``qpos``, ``qvel``, ``ctrl``), written into
    the bound outputs (:data:`MIRRORED`): what observations, rewards and metrics read."""
    data.qpos[:], data.qvel[:], data.ctrl[:] = arrays["qpos"][i], arrays["qvel"][i], arrays["ctrl"][i]
    mujoco.mj_kinematics(model, data)
    mujoco.mj_comPos(model, data)
    mujoco.mj_comVel(model, data)
    for key in MIRRORED:
        arrays[key][i] = getattr(data, key)


def _xyzw(quat_wxyz: np.ndarray) -> list[float]:
    w, x, y, z = (float(v) for v in quat_wxyz)
    return [x, y, z, w]
