"""Per-clip plots, the foot figures behind them, and the pieces of the renderer that need no GL."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import asap_reference

CLIP = "walk_level1_filter"


@pytest.fixture(scope="module")
def walk():
    from retarget.viz.motion_input import load_robot_motion

    return load_robot_motion(asap_reference(CLIP))


def _png_stats(path):
    from PIL import Image

    with Image.open(path) as im:
        assert im.format == "PNG"
        arr = np.asarray(im.convert("RGB")).astype(int)
    ink = (arr.min(-1) < 200).mean()  # share of non-white pixels
    return im.size, ink


def test_clip_plots_are_real_pngs(tmp_path, walk):
    from retarget.viz.motion_input import human_contacts
    from retarget.viz.plots import write_clip_plots

    series = {"root height [m]": walk.root_pos_w[:, 2], "hip pitch [rad]": walk.dof_pos[:, [0, 6]]}
    paths = write_clip_plots(walk, "g1_23dof", tmp_path, human_contacts(walk, None), series)
    assert set(paths) == {"joints", "foot_height", "foot_tilt", "series"}
    # Figure size [in] × 80 dpi: 23 joints on a 4-column grid of 2-inch rows.
    expected = {"joints": (1280, 960), "foot_height": (960, 480), "foot_tilt": (960, 480), "series": (960, 400)}
    for name, path in paths.items():
        size, ink = _png_stats(path)
        assert size == expected[name], name
        assert 0.02 < ink < 0.6, name  # drawn on, not blank, not a solid block
    assert oct(paths["joints"].stat().st_mode & 0o777) == "0o644" or paths["joints"].stat().st_mode & 0o044


def test_foot_plot_without_contacts(tmp_path):
    from retarget.viz.foot_track import FootTrack
    from retarget.viz.plots import plot_foot_heights

    t = np.linspace(0, 2 * np.pi, 60)
    track = FootTrack(sole_height_m=np.stack([0.05 * np.sin(t), 0.05 * np.cos(t)], 1), tilt_deg=np.zeros((60, 2)))
    size, ink = _png_stats(plot_foot_heights(track, 30.0, None, tmp_path / "h.png"))
    assert size == (960, 480) and ink > 0.02


def test_foot_track_shifts_and_tilts_exactly():
    from retarget.viz.foot_track import track_feet
    from robots.mujoco_model import build_mujoco_model

    model = build_mujoco_model("g1_23dof")
    qpos = np.tile(model.qpos0, (3, 1))
    qpos[1, 2] += 0.1  # lift the whole robot by 10 cm
    angle = np.radians(10.0)  # roll the whole robot by 10° about x
    qpos[2, 3:7] = [np.cos(angle / 2), np.sin(angle / 2), 0.0, 0.0]
    track = track_feet(model, "g1_23dof", qpos)
    np.testing.assert_allclose(track.sole_height_m[1] - track.sole_height_m[0], 0.1, atol=1e-12)
    np.testing.assert_allclose(track.tilt_deg[0], 0.0, atol=1e-6)  # at q = 0 the soles are flat
    np.testing.assert_allclose(track.tilt_deg[2], 10.0, atol=1e-6)


def test_foot_track_on_the_official_retarget(walk):
    from retarget.viz.foot_track import track_feet
    from retarget.viz.motion_input import human_contacts, motion_qpos
    from robots.mujoco_model import build_mujoco_model

    model = build_mujoco_model("g1_23dof")
    track = track_feet(model, "g1_23dof", motion_qpos(walk, "g1_23dof", model))
    assert track.sole_height_m.shape == (walk.num_frames, 2)
    # ASAP's walk: the feet reach the floor within a few cm and swing up to about 0.1 m.
    assert -0.05 < track.sole_height_m.min() < 0.01
    assert 0.05 < track.sole_height_m.max() < 0.2
    # Independent expectation: pinocchio's forward kinematics of the file's own fields (root_rot xyzw, dof), with
    # no MuJoCo and none of the viewer's conversion code; tilt = angle between the foot's z axis and the world's.
    import pinocchio as pin

    from retarget.asap_pkl import read_motion_library
    from robots.pinocchio_model import build_pinocchio_model
    from robots.registry import load_robot_spec

    (raw,) = read_motion_library(asap_reference(CLIP)).values()
    pin_model = build_pinocchio_model("g1_23dof")
    pin_data = pin_model.createData()
    feet = [pin_model.getFrameId(link) for link in load_robot_spec("g1_23dof").foot_links]
    expected = np.empty((walk.num_frames, 2))
    for t in range(walk.num_frames):
        q = np.concatenate([raw["root_trans_offset"][t], raw["root_rot"][t], raw["dof"][t]]).astype(np.float64)
        q[3:7] /= np.linalg.norm(q[3:7])
        pin.framesForwardKinematics(pin_model, pin_data, q)
        expected[t] = [np.degrees(np.arccos(np.clip(pin_data.oMf[f].rotation[2, 2], -1, 1))) for f in feet]
    np.testing.assert_allclose(track.tilt_deg, expected, atol=1e-3)  # float32 storage, two FK libraries
    # In human stance ASAP's feet are far from flat (a median 10.9° over all 39 clips, data README).
    stance = human_contacts(walk, None).stance
    assert 5.0 < np.median(track.tilt_deg[stance]) < 20.0
    assert np.isfinite(track.tilt_deg).all() and track.tilt_deg.max() < 90


def test_stl_reader_and_decimation_keep_the_shape():
    from retarget.viz.mesh_lod import cluster_decimate, read_binary_stl
    from robots.registry import load_robot_spec

    path = load_robot_spec("g1_23dof").urdf_path.parent / "meshes" / "torso_link.STL"
    verts, faces = read_binary_stl(path)
    assert faces.max() < len(verts) and len(faces) > 10000
    cell = 0.006
    small_v, small_f = cluster_decimate(verts, faces, cell)
    assert len(small_f) < 0.5 * len(faces) and small_f.max() < len(small_v)
    # Cluster means stay inside their cells: the bounding box moves by less than one cell.
    np.testing.assert_allclose(small_v.min(0), verts.min(0), atol=cell)
    np.testing.assert_allclose(small_v.max(0), verts.max(0), atol=cell)
    # A tiny cell keeps every triangle but the source's own degenerate or repeated ones.
    _, same_f = cluster_decimate(verts, faces, 1e-7)
    proper = faces[(faces[:, 0] != faces[:, 1]) & (faces[:, 1] != faces[:, 2]) & (faces[:, 0] != faces[:, 2])]
    assert len(same_f) == len(np.unique(np.sort(proper, axis=1), axis=0))


def test_corrupt_stl_is_reported(tmp_path):
    from retarget.errors import MotionFileError
    from retarget.viz.mesh_lod import read_binary_stl

    bad = tmp_path / "bad.stl"
    bad.write_bytes(b"\0" * 80 + np.uint32(5).tobytes() + b"\0" * 10)
    with pytest.raises(MotionFileError, match="bad.stl"):
        read_binary_stl(bad)


def test_camera_presets_and_heading():
    from retarget.errors import ConfigError
    from retarget.viz.camera import heading_deg, parse_camera, smooth_path

    yaw = np.radians(30.0)
    assert heading_deg(np.array([np.cos(yaw / 2), 0, 0, np.sin(yaw / 2)])) == pytest.approx(30.0)
    cam = parse_camera("20,-10,4.5")
    assert (cam.azimuth_deg, cam.elevation_deg, cam.distance_m) == (20.0, -10.0, 4.5)
    assert parse_camera("side").preset == "side"
    with pytest.raises(ConfigError, match="valid choices|expected a preset"):
        parse_camera("sideways")
    # The moving average keeps a straight constant-speed path (away from the ends) unchanged.
    path = np.stack([np.arange(60) * 0.01, np.zeros(60), np.zeros(60)], axis=1)
    np.testing.assert_allclose(smooth_path(path, 30.0, 0.5)[10:-10], path[10:-10, :2], atol=1e-12)


def test_clip_choice_in_a_library(tmp_path):
    from retarget.asap_pkl import read_motion_library, write_motion_library
    from retarget.errors import MotionFileError
    from retarget.viz.motion_input import load_robot_motion

    clips = read_motion_library(asap_reference(CLIP))
    clips.update(read_motion_library(asap_reference("CR7_level1_filter")))
    lib = write_motion_library(tmp_path / "two.pkl", clips)
    with pytest.raises(MotionFileError, match="choose one with --clip"):
        load_robot_motion(lib)
    motion = load_robot_motion(lib, "video_CR7_level1_filter_amass")  # ASAP's prefix may be left out
    assert motion.name.endswith("CR7_level1_filter_amass") and motion.dof_pos.shape[1] == 23
