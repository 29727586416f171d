"""Where the robot's collision geometry is, frame by frame: soles, lowest point, self-contacts.

One MuJoCo pass per clip (``mj_kinematics`` + ``mj_collision``) gives the body positions,
the sole points, the lowest point of every collision geom (exact for spheres and for the
convex hulls of meshes) and the deepest contact between two robot geoms. The floor takes
no part in the collision pass; MuJoCo already skips geom pairs on the same rigid body and
on parent-child bodies, which are always touching at the joint.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from functools import cache

import mujoco
import numpy as np
from scipy.spatial import ConvexHull

from robots.mujoco_model import build_mujoco_model
from robots.registry import RobotSpec, load_robot_spec

HULL_GRID_M = 0.005
"""Grid the mesh vertices are snapped to before finding the lowest point candidates [m]."""


@dataclass(frozen=True)
class _Geometry:
    """Robot facts the per-frame pass needs (built once per robot)."""

    model: mujoco.MjModel
    """A copy of the robot model in which the floor does not collide."""
    foot_body_ids: tuple[int, int]
    sole_points_b: np.ndarray
    """(2, P, 3) sole points in each foot frame [m]."""
    low_geom: np.ndarray
    """(N,) geom index of each candidate lowest point."""
    low_point_g: np.ndarray
    """(N, 3) candidate lowest points in their geom frame (mesh hull vertices, sphere centres)."""
    low_radius: np.ndarray
    """(N,) radius to subtract from each candidate's height (spheres; 0 for vertices)."""


@cache
def robot_geometry_model(robot_name: str) -> _Geometry:
    robot = load_robot_spec(robot_name)
    model = copy.deepcopy(build_mujoco_model(robot))
    floor = model.geom("floor").id
    model.geom_contype[floor] = 0
    model.geom_conaffinity[floor] = 0
    geoms, points, radii = [], [], []
    for g in range(model.ngeom):
        if g == floor or not (model.geom_contype[g] or model.geom_conaffinity[g]):
            continue
        if model.geom_type[g] == mujoco.mjtGeom.mjGEOM_MESH:
            mesh = model.geom_dataid[g]
            adr, num = model.mesh_vertadr[mesh], model.mesh_vertnum[mesh]
            verts = model.mesh_vert[adr : adr + num].astype(np.float64)
            # Snap to a HULL_GRID_M grid before taking the hull: the finely tessellated curved
            # parts have thousands of hull vertices; snapping moves each by < 4 mm and leaves ~100.
            snapped = np.unique(np.round(verts / HULL_GRID_M) * HULL_GRID_M, axis=0)
            hull = snapped[ConvexHull(snapped).vertices] if len(snapped) >= 4 else snapped
            geoms += [g] * len(hull)
            points.append(hull)
            radii += [0.0] * len(hull)
        else:
            # Spheres exactly; other primitives by their bounding sphere (never the lowest point of a G1).
            geoms.append(g)
            points.append(np.zeros((1, 3)))
            radii.append(float(model.geom_rbound[g]))
    feet = tuple(model.body(link).id for link in robot.foot_links)
    return _Geometry(
        model=model,
        foot_body_ids=feet,
        sole_points_b=np.stack([robot.sole_points_b(link) for link in robot.foot_links]),
        low_geom=np.array(geoms),
        low_point_g=np.concatenate(points),
        low_radius=np.array(radii),
    )


@dataclass(frozen=True)
class RobotGeometry:
    """Per-frame geometry of a robot motion (world frame, before any re-grounding)."""

    body_pos_w: np.ndarray
    """(T, B) [m] positions of all bodies (world body excluded)."""
    sole_w: np.ndarray
    """(T, 2, P, 3) [m] sole points of the (left, right) feet."""
    lowest_m: np.ndarray
    """(T,) [m] height of the lowest point of any collision geom."""
    self_depth_m: np.ndarray
    """(T,) [m] deepest interpenetration of two robot geoms (0 when none)."""
    self_pair: tuple[str, ...]
    """(T,) names 'bodyA/bodyB' of the deepest self-contact per frame ('' when none)."""

    def shifted(self, dz_m: float) -> RobotGeometry:
        """The same geometry moved vertically by `dz_m` (re-grounding)."""
        up = np.array([0.0, 0.0, dz_m])
        return RobotGeometry(
            self.body_pos_w + up, self.sole_w + up, self.lowest_m + dz_m, self.self_depth_m, self.self_pair
        )


def compute_robot_geometry(qpos: np.ndarray, robot: RobotSpec | str = "g1_23dof") -> RobotGeometry:
    """Run the per-frame MuJoCo pass over (T, nq) configurations."""
    geo = robot_geometry_model(robot if isinstance(robot, str) else robot.name)
    model = geo.model
    data = mujoco.MjData(model)
    num = len(qpos)
    body_pos = np.empty((num, model.nbody - 1, 3))
    foot_pos = np.empty((num, 2, 3))
    foot_rot = np.empty((num, 2, 3, 3))
    geom_z = np.empty((num, model.ngeom))
    geom_zrow = np.empty((num, model.ngeom, 3))
    depth = np.zeros(num)
    pairs = [""] * num
    feet = list(geo.foot_body_ids)
    for t in range(num):
        data.qpos[:] = qpos[t]
        mujoco.mj_kinematics(model, data)
        mujoco.mj_collision(model, data)
        body_pos[t] = data.xpos[1:]
        foot_pos[t] = data.xpos[feet]
        foot_rot[t] = data.xmat[feet].reshape(2, 3, 3)
        geom_z[t] = data.geom_xpos[:, 2]
        geom_zrow[t] = data.geom_xmat[:, 6:9]  # third row of each geom rotation: world z of its axes
        if data.ncon:
            dist = data.contact.dist[: data.ncon]
            k = int(np.argmin(dist))
            if dist[k] < 0:
                depth[t] = -dist[k]
                c = data.contact[k]
                pairs[t] = (
                    f"{model.body(model.geom_bodyid[c.geom1]).name}/{model.body(model.geom_bodyid[c.geom2]).name}"
                )
    sole_w = foot_pos[:, :, None, :] + np.einsum("tfij,fpj->tfpi", foot_rot, geo.sole_points_b)
    lowest = np.full(num, np.inf)
    for g in np.unique(geo.low_geom):  # per geom: a (T, 3) @ (3, n) product, no (T, N, 3) temporary
        sel = geo.low_geom == g
        low = geom_z[:, g, None] + geom_zrow[:, g] @ geo.low_point_g[sel].T - geo.low_radius[sel]
        lowest = np.minimum(lowest, low.min(axis=1))
    return RobotGeometry(body_pos, sole_w, lowest, depth, tuple(pairs))
