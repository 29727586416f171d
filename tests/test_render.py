"""Offscreen rendering on the CPU: real pixels of real clips (the robot is in the frame, it moves,
side by side shows two robots, the skeleton and stance markers are drawn) and the encoded video."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner
from scipy import ndimage

from tests.conftest import asap_reference, smpl_clip

CLIP = "walk_level1_filter"
W, H = 160, 120


def _mask(img: np.ndarray, empty: np.ndarray, threshold: int = 40) -> np.ndarray:
    """Pixels that differ from the empty scene by more than `threshold` in some channel."""
    return np.abs(img.astype(int) - empty.astype(int)).max(-1) > threshold


@pytest.fixture(scope="module")
def walk_panel():
    from retarget.viz.render_clip import load_panels

    return load_panels(asap_reference(CLIP), source=smpl_clip(CLIP))[0]


@pytest.fixture(scope="module")
def plain_renderer(walk_panel):
    from dataclasses import replace

    from retarget.viz import MotionRenderer, RenderConfig

    panel = replace(walk_panel, skeleton_w=None, contacts=None)
    with MotionRenderer([panel], RenderConfig(width_px=W, height_px=H, show_text=False)) as renderer:
        yield renderer


def test_backend_is_headless():
    from retarget.viz.backend import select_backend

    assert select_backend() in ("egl", "osmesa")


def test_backend_rejects_a_windowed_choice(monkeypatch):
    from retarget.viz.backend import RenderBackendError, select_backend

    chosen = select_backend()
    monkeypatch.setenv("MUJOCO_GL", "glx")
    select_backend.cache_clear()
    try:
        with pytest.raises(RenderBackendError, match="valid choices: egl, osmesa"):
            select_backend()
    finally:
        monkeypatch.setenv("MUJOCO_GL", chosen)
        select_backend.cache_clear()
    assert select_backend() == chosen


def test_robot_occupies_the_middle_of_the_frame(plain_renderer):
    img = plain_renderer.render_frame(0)
    empty = plain_renderer.render_frame(0, show_robot=False)
    assert img.shape == (H, W, 3) and img.dtype == np.uint8
    mask = _mask(img, empty)
    # A 1.3 m robot 3 m away: a few percent of the image, centred by the tracking camera.
    assert 0.02 < mask.mean() < 0.4
    rows, cols = np.nonzero(mask)
    assert abs(cols.mean() - W / 2) < 0.15 * W
    assert 0.2 * H < rows.mean() < 0.8 * H
    assert rows.max() - rows.min() > 0.3 * H  # standing: taller than wide
    assert rows.max() - rows.min() > cols.max() - cols.min()


def test_frames_differ_as_the_motion_moves(plain_renderer):
    empty = plain_renderer.render_frame(0, show_robot=False)
    a = _mask(plain_renderer.render_frame(0), empty)
    b = _mask(plain_renderer.render_frame(45), empty)
    iou = (a & b).sum() / (a | b).sum()
    assert iou < 0.9  # the legs moved
    assert (plain_renderer.render_frame(0) == plain_renderer.render_frame(0)).all()  # deterministic


def test_side_by_side_shows_two_robots(walk_panel):
    from dataclasses import replace

    from retarget.viz import MotionRenderer, RenderConfig

    panel = replace(walk_panel, skeleton_w=None, contacts=None)
    with MotionRenderer([panel, panel], RenderConfig(width_px=2 * W, height_px=H, show_text=False)) as renderer:
        img, empty = renderer.render_frame(10), renderer.render_frame(10, show_robot=False)
    labels, count = ndimage.label(ndimage.binary_closing(_mask(img, empty), iterations=2))
    sizes = ndimage.sum_labels(np.ones_like(labels), labels, index=np.arange(1, count + 1))
    big = [i + 1 for i, s in enumerate(sizes) if s > 0.01 * W * H]
    assert len(big) == 2
    centres = sorted(ndimage.center_of_mass(labels > 0, labels, big), key=lambda c: c[1])
    assert centres[0][1] < W <= centres[1][1]  # one robot in each half
    assert abs((centres[1][1] - W) - centres[0][1]) < 3  # same motion, same place in its panel


def test_skeleton_and_stance_markers_are_drawn(walk_panel):
    from retarget.viz import MotionRenderer, RenderConfig

    assert walk_panel.contacts is not None and walk_panel.contacts.stance[0].all()  # the walk starts standing
    images = {}
    for contacts in (True, False):
        config = RenderConfig(width_px=240, height_px=180, show_text=False, show_contacts=contacts)
        with MotionRenderer([walk_panel], config) as renderer:
            images[contacts] = renderer.render_frame(0).astype(int)
    img = images[True]
    r, g, b = img[..., 0], img[..., 1], img[..., 2]
    orange = (r > 180) & (g > 80) & (g < 190) & (b < 110)
    assert orange.sum() > 50
    # The skeleton stands to the image's right of the robot (skeleton_offset_m > 0).
    assert np.nonzero(orange)[1].mean() > 0.6 * 240
    # Stance markers: what the contacts add is green, under both bodies' feet (low in the image).
    added = _mask(images[True], images[False], threshold=30)
    assert added.sum() > 40
    colour = img[added].mean(0)
    assert colour[1] > colour[0] + 30 and colour[1] > colour[2] + 30
    assert np.nonzero(added)[0].mean() > 0.5 * 180


def test_video_file_round_trip(tmp_path):
    from retarget.viz import RenderConfig, render_library_clip
    from retarget.viz.video import read_video_frames

    out = tmp_path / "walk.mp4"
    summary = render_library_clip(
        asap_reference(CLIP), out, config=RenderConfig(width_px=128, height_px=96), max_frames=6
    )
    frames, fps = read_video_frames(out)
    assert summary.frames == 6 and frames.shape == (6, 96, 128, 3) and fps == pytest.approx(30.0)
    assert frames.std() > 10 and np.abs(frames[0].astype(int) - frames[-1].astype(int)).max() > 50
    assert not list(tmp_path.glob(".*.tmp"))  # nothing half-written left


def test_animated_webp(tmp_path):
    from PIL import Image

    from retarget.viz import RenderConfig, render_library_clip

    out = tmp_path / "walk.webp"
    progress: list[tuple[int, int]] = []
    render_library_clip(
        asap_reference(CLIP),
        out,
        config=RenderConfig(width_px=96, height_px=72),
        max_frames=3,
        on_frame=lambda done, total: progress.append((done, total)),
    )
    with Image.open(out) as im:
        assert im.size == (96, 72) and im.n_frames == 3
    assert progress == [(0, 3), (1, 3), (2, 3), (3, 3)]  # before the first frame, then after each


def test_cli_render_side_by_side(tmp_path):
    from cli.main import main
    from retarget.viz.video import read_video_frames

    out = tmp_path / "cmp.mp4"
    result = CliRunner().invoke(
        main,
        [
            "render",
            str(asap_reference(CLIP)),
            "--compare",
            str(asap_reference(CLIP)),
            "--source",
            str(smpl_clip(CLIP)),
            "-o",
            str(out),
            "--width",
            "192",
            "--height",
            "96",
            "--frames",
            "2",
            "--camera",
            "side",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "2 frames" in result.output and "2 panel(s)" in result.output
    frames, _ = read_video_frames(out)
    assert frames.shape == (2, 96, 192, 3)


@pytest.mark.parametrize(
    "args, message",
    [
        (["missing.pkl"], "no such motion library"),
        ([str(asap_reference(CLIP)), "--clip", "nope"], "valid choices"),
        ([str(asap_reference(CLIP)), "--camera", "sideways"], "expected a preset"),
        ([str(asap_reference(CLIP)), "--width", "101"], "even number"),
    ],
)
def test_cli_render_bad_input(tmp_path, args, message):
    from cli.main import main

    out = tmp_path / "x.mp4"
    result = CliRunner().invoke(main, ["render", *args, "-o", str(out)])
    assert result.exit_code == 1, result.output
    assert message in result.output
    assert not out.exists()


def test_unknown_video_type(tmp_path):
    from retarget.errors import ConfigError
    from retarget.viz.video import write_video

    with pytest.raises(ConfigError, match="valid choices"):
        write_video(tmp_path / "x.avi", [np.zeros((8, 8, 3), np.uint8)], 30.0)


def test_still_png_and_output_rate(tmp_path):
    from PIL import Image

    from retarget.viz import MotionRenderer, RenderConfig, load_panels, render_library_clip

    out = tmp_path / "still.png"
    summary = render_library_clip(
        asap_reference(CLIP), out, config=RenderConfig(width_px=96, height_px=64), still_frame=5
    )
    with Image.open(out) as im:
        assert im.size == (96, 64) and summary.frames == 1
    # 152 frames at 30 Hz span 5.03 s: at 15 Hz that is 76 frames.
    with MotionRenderer(load_panels(asap_reference(CLIP)), RenderConfig(width_px=32, height_px=32, fps=15)) as r:
        assert r.num_frames == 76 and r.fps == 15
