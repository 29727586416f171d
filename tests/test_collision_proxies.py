"""The collision proxy spheres against the G1 meshes they stand for, and a real clip's hand past the hip."""

from __future__ import annotations

import mujoco
import numpy as np
from scipy.spatial import ConvexHull

from tests.conftest import smpl_clip

THIGH = "right_hip_yaw_link"
CONTACT_B = np.array([0.040, 0.025, -0.025])
"""Where the right hand's mesh met the thigh's top front in most colliding frames of step_forward_back_level3
(thigh link frame, MuJoCo's contact point)."""


def _mesh_vertices(model: mujoco.MjModel, body: str) -> np.ndarray:
    """(V, 3) vertices of `body`'s colliding mesh geoms in the body frame."""
    out = []
    for g in np.flatnonzero(model.geom_bodyid == model.body(body).id):
        if model.geom_type[g] != mujoco.mjtGeom.mjGEOM_MESH or not (model.geom_contype[g] or model.geom_conaffinity[g]):
            continue
        m = model.geom_dataid[g]
        verts = model.mesh_vert[model.mesh_vertadr[m] : model.mesh_vertadr[m] + model.mesh_vertnum[m]]
        rot = np.zeros(9)
        mujoco.mju_quat2Mat(rot, model.geom_quat[g])
        out.append(verts @ rot.reshape(3, 3).T + model.geom_pos[g])
    return np.concatenate(out)


def _thigh_spheres(g1) -> list[tuple[np.ndarray, float]]:
    return [(np.array(p.center_b), p.radius_m) for p in g1.collision_proxies if p.body == THIGH]


def test_thigh_front_sphere_stays_inside_the_thigh_mesh(g1, g1_mj_model):
    """A sphere bulging out of the thigh's front would push hands resting on it off the human's pose (the
    thigh's first sphere bulges 15 mm, at its sides and back)."""
    hull = ConvexHull(_mesh_vertices(g1_mj_model, THIGH))
    front = [(c, r) for c, r in _thigh_spheres(g1) if c[0] > 0.0]
    assert len(front) == 1
    for centre, radius in front:
        # Signed distance of the sphere's farthest point outside each face plane (n . x + d <= 0 inside).
        bulge_m = float((hull.equations[:, :3] @ centre + hull.equations[:, 3] + radius).max())
        assert bulge_m < 0.0015, (centre, radius, bulge_m)


def test_thigh_top_front_is_covered(g1):
    """The mesh point the hand sank into lies 4.9 mm outside the thigh's spheres (11.7 mm without the front
    one): a hand sphere kept clear of them (2 mm tolerance, the hand mesh covered to 3.4 mm) no longer
    leaves room for 1 cm of mesh overlap there."""
    gap_m = min(np.linalg.norm(CONTACT_B - c) - r for c, r in _thigh_spheres(g1))
    assert gap_m < 0.006


def test_hand_past_the_hip_in_step_forward_back_level3(g1):
    """The clip's right hand swings past the right hip: with its spheres kept clear of the thigh's only, the
    hand mesh sank 10-12 mm into the thigh's top front corner in 20 of 152 frames (13 %, over the 1 cm
    collision threshold); the thigh's front sphere keeps it to a few frames, as shallow."""
    from retarget.metrics.replay import replay_motion
    from retarget.pipeline import retarget_file

    motion = retarget_file(smpl_clip("step_forward_back_level3_filter")).motion
    depth_m = replay_motion(g1, motion).self_contact_depth_m
    assert len(depth_m) == 152
    assert int((depth_m > 0.01).sum()) <= 8
    assert float(depth_m.max()) < 0.0125
