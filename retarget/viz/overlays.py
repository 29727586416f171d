"""Extra geometry drawn into a MuJoCo scene: the human skeleton and stance markers.

These are scene "user geoms" (``mjv_initGeom`` / ``mjv_connector`` after ``mjv_updateScene``),
so they cost no model compilation and are not part of any physics.
"""

from __future__ import annotations

import mujoco
import numpy as np

SKELETON_RGBA = np.array([0.95, 0.55, 0.15, 1.0], dtype=np.float32)
JOINT_RGBA = np.array([0.98, 0.85, 0.35, 1.0], dtype=np.float32)
STANCE_RGBA = np.array([0.10, 0.85, 0.25, 0.9], dtype=np.float32)
BONE_RADIUS_M = 0.022
JOINT_RADIUS_M = 0.032
STANCE_DISC_RADIUS_M = 0.10
_IDENTITY = np.eye(3).flatten()


def _next_geom(scene: mujoco.MjvScene):
    if scene.ngeom >= scene.maxgeom:
        return None  # a full scene drops decorations rather than failing a long render
    geom = scene.geoms[scene.ngeom]
    scene.ngeom += 1
    return geom


def add_sphere(scene: mujoco.MjvScene, pos_w: np.ndarray, radius_m: float, rgba: np.ndarray) -> None:
    geom = _next_geom(scene)
    if geom is not None:
        size = np.array([radius_m, radius_m, radius_m])
        mujoco.mjv_initGeom(geom, mujoco.mjtGeom.mjGEOM_SPHERE, size, np.asarray(pos_w, float), _IDENTITY, rgba)


def add_capsule(scene: mujoco.MjvScene, a_w: np.ndarray, b_w: np.ndarray, radius_m: float, rgba: np.ndarray) -> None:
    geom = _next_geom(scene)
    if geom is not None:
        mujoco.mjv_initGeom(geom, mujoco.mjtGeom.mjGEOM_CAPSULE, np.zeros(3), np.zeros(3), _IDENTITY, rgba)
        mujoco.mjv_connector(
            geom, mujoco.mjtGeom.mjGEOM_CAPSULE, radius_m, np.asarray(a_w, float), np.asarray(b_w, float)
        )


def add_disc(scene: mujoco.MjvScene, centre_xy: np.ndarray, radius_m: float, rgba: np.ndarray) -> None:
    """A flat disc lying on the floor (z = 0), slightly raised to avoid z-fighting."""
    geom = _next_geom(scene)
    if geom is not None:
        pos = np.array([centre_xy[0], centre_xy[1], 0.003])
        size = np.array([radius_m, radius_m, 0.002])
        mujoco.mjv_initGeom(geom, mujoco.mjtGeom.mjGEOM_CYLINDER, size, pos, _IDENTITY, rgba)
        geom.size[:] = size  # mjv_initGeom (MuJoCo 4.0) does not keep an uneven size; set it again


def add_skeleton(
    scene: mujoco.MjvScene,
    joints_w: np.ndarray,
    parents: np.ndarray,
    stance: np.ndarray | None = None,
    foot_joints: tuple[tuple[int, int], tuple[int, int]] = ((7, 10), (8, 11)),
) -> None:
    """SMPL bones as capsules and joints as spheres; a foot in stance gets green joints and a disc."""
    for j in range(1, len(parents)):
        add_capsule(scene, joints_w[parents[j]], joints_w[j], BONE_RADIUS_M, SKELETON_RGBA)
    stance_joints: set[int] = set()
    if stance is not None:
        for foot, on in enumerate(stance):
            if on:
                stance_joints.update(foot_joints[foot])
                add_disc(scene, joints_w[list(foot_joints[foot])].mean(0)[:2], 0.08, STANCE_RGBA)
    for j, pos in enumerate(joints_w):
        add_sphere(scene, pos, JOINT_RADIUS_M, STANCE_RGBA if j in stance_joints else JOINT_RGBA)


def add_stance_markers(scene: mujoco.MjvScene, feet_pos_w: np.ndarray, stance: np.ndarray) -> None:
    """A green disc on the floor under each robot foot whose human counterpart is in stance."""
    for foot, on in enumerate(stance):
        if on:
            add_disc(scene, feet_pos_w[foot][:2], STANCE_DISC_RADIUS_M, STANCE_RGBA)
