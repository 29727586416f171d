"""Offscreen MuJoCo rendering into a numpy image, one or more panels per image.

A thin layer over ``mjr_render``: one GL context and one ``MjrContext`` per renderer, each
panel drawn into its own viewport of the same offscreen buffer, then one ``mjr_readPixels``.
We do not use ``mujoco.Renderer`` because it takes its GL back-end from ``MUJOCO_GL`` as it
was when ``mujoco`` was first imported (see :mod:`retarget.viz.backend`).
"""

from __future__ import annotations

from collections.abc import Callable

import mujoco
import numpy as np

from retarget.errors import ConfigError
from retarget.viz.backend import create_gl_context

SceneHook = Callable[[mujoco.MjvScene], None]


class OffscreenRenderer:
    """Renders MjData states of one model into (height, width, 3) uint8 images."""

    def __init__(self, model: mujoco.MjModel, width_px: int, height_px: int, max_extra_geoms: int = 400):
        if width_px > model.vis.global_.offwidth or height_px > model.vis.global_.offheight:
            raise ConfigError(
                f"image {width_px}x{height_px} exceeds the model's offscreen buffer "
                f"{model.vis.global_.offwidth}x{model.vis.global_.offheight}"
            )
        self.model = model
        self.width_px, self.height_px = int(width_px), int(height_px)
        self._gl = create_gl_context(self.width_px, self.height_px)
        # Text about 2.5% of the image height: MuJoCo's 100% font is 16 px tall.
        font = mujoco.mjtFontScale.mjFONTSCALE_100 if height_px < 720 else mujoco.mjtFontScale.mjFONTSCALE_150
        self._con = mujoco.MjrContext(model, font)
        mujoco.mjr_setBuffer(mujoco.mjtFramebuffer.mjFB_OFFSCREEN, self._con)
        self.scene = mujoco.MjvScene(model, maxgeom=model.ngeom + max_extra_geoms)
        self.option = mujoco.MjvOption()
        self.option.sitegroup[:] = 0  # the IK match sites are for solvers, not for viewers
        self._perturb = mujoco.MjvPerturb()
        self._rgb = np.empty((self.height_px, self.width_px, 3), dtype=np.uint8)

    def panel_viewports(self, count: int) -> list[mujoco.MjrRect]:
        """`count` side-by-side viewports of equal width filling the image."""
        width = self.width_px // count
        return [mujoco.MjrRect(i * width, 0, width, self.height_px) for i in range(count)]

    def draw(
        self,
        data: mujoco.MjData,
        camera: mujoco.MjvCamera,
        viewport: mujoco.MjrRect,
        hook: SceneHook | None = None,
        text: tuple[str, str] | None = None,
        label: str | None = None,
        show_robot: bool = True,
    ) -> None:
        """Draw one panel: the model in `data` seen by `camera`, user geoms from `hook`, and text."""
        self.option.geomgroup[1] = int(show_robot)  # robot visual meshes are in group 1
        mujoco.mjv_updateScene(
            self.model, data, self.option, self._perturb, camera, mujoco.mjtCatBit.mjCAT_ALL, self.scene
        )
        if hook is not None:
            hook(self.scene)
        mujoco.mjr_render(viewport, self.scene, self._con)
        if text is not None:
            mujoco.mjr_overlay(
                mujoco.mjtFont.mjFONT_NORMAL, mujoco.mjtGridPos.mjGRID_TOPLEFT, viewport, text[0], text[1], self._con
            )
        if label:
            mujoco.mjr_overlay(
                mujoco.mjtFont.mjFONT_NORMAL, mujoco.mjtGridPos.mjGRID_BOTTOMLEFT, viewport, label, "", self._con
            )

    def read(self) -> np.ndarray:
        """The whole image drawn so far, top row first (a new array)."""
        full = mujoco.MjrRect(0, 0, self.width_px, self.height_px)
        mujoco.mjr_readPixels(self._rgb, None, full, self._con)
        return np.flipud(self._rgb).copy()

    def close(self) -> None:
        if self._gl is not None:
            self._con.free()
            self._gl.free()
            self._gl = None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
