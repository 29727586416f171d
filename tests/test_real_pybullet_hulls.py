"""PyBullet's G1 loaded from the hull copy of its URDF behaves as the one loaded from the STL meshes."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pybullet")

from pd_drop import drop_states

from robots.registry import load_robot_spec
from trainers.real import pybullet_hulls


def _drop_states(steps: int) -> np.ndarray:
    """(steps, nq + nv) states of the G1 released at 0.8 m under PD in PyBullet (it lands, stands, tips over)."""
    return drop_states("pybullet:combined", load_robot_spec("g1_23dof"), steps)


def test_hull_copy_gives_the_same_motion_through_landing_and_fall(monkeypatch, tmp_path):
    monkeypatch.setenv(pybullet_hulls.CACHE_ENV, str(tmp_path))
    hulls = _drop_states(80)  # 1.6 s: landing, standing and the fall onto the floor
    assert len(list(tmp_path.glob("pybullet_hulls_*/*_hull.stl"))) > 30
    monkeypatch.setattr(pybullet_hulls, "hull_urdf", lambda path: path)  # PyBullet reads the STL meshes
    meshes = _drop_states(80)
    assert meshes[-1, 2] < 0.4  # it did fall: contacts of many links took part
    np.testing.assert_array_equal(hulls, meshes)  # bit for bit: the same convex shapes


def test_hull_copy_is_made_once_and_has_fewer_vertices(monkeypatch, tmp_path):
    monkeypatch.setenv(pybullet_hulls.CACHE_ENV, str(tmp_path))
    urdf = load_robot_spec("g1_23dof").urdf_path
    first = pybullet_hulls.hull_urdf(urdf)
    stamp = first.stat().st_mtime_ns
    assert pybullet_hulls.hull_urdf(urdf) == first and first.stat().st_mtime_ns == stamp
    text = first.read_text()
    collision_meshes = pybullet_hulls._VISUAL.sub("", urdf.read_text()).count("<mesh")
    assert "<visual>" not in text and ".STL" not in text and text.count("_hull.stl") == collision_meshes > 20
    hull, mesh = (p.stat().st_size for p in (first.parent / "pelvis_hull.stl", urdf.parent / "meshes" / "pelvis.STL"))
    assert 84 + 50 * 4 <= hull < mesh / 5  # a closed solid, far smaller than the mesh
