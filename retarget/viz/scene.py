"""The render variant of a robot's MuJoCo model: checker floor, sky, light, visual meshes only.

It is built from the same :func:`robots.mujoco_model.build_mujoco_spec` as the kinematic
model, so body names, joint order and qpos layout are identical and a motion's qpos can be
copied into it unchanged. Collision geoms (the URDF's collision meshes and spheres) are moved
to a hidden geom group: drawing the meshes twice doubled the frame time on llvmpipe.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import mujoco

from retarget.viz.mesh_lod import decimate_spec_meshes
from robots.mujoco_model import build_mujoco_spec
from robots.registry import load_robot_spec

COLLISION_GROUP = 3
"""Geom group of the robot's collision geoms; off in the default render options (groups 0-2 shown)."""
DECOR_GROUP = 2
"""Geom group of the floor."""


@dataclass(frozen=True)
class SceneConfig:
    """Look of the render scene."""

    checker_m: float = 0.5
    """Side of one floor checker square [m]; grid lines mark every square."""
    floor_rgb1: tuple[float, float, float] = (0.42, 0.45, 0.50)
    """Colour of the dark floor squares (RGB, 0-1)."""
    floor_rgb2: tuple[float, float, float] = (0.55, 0.59, 0.64)
    """Colour of the light floor squares (RGB, 0-1)."""
    grid_rgb: tuple[float, float, float] = (0.85, 0.85, 0.85)
    """Colour of the grid lines on the square edges (RGB, 0-1)."""
    sky_rgb: tuple[float, float, float] = (0.62, 0.72, 0.84)
    """Colour of the sky gradient's top (RGB, 0-1)."""
    shadows: bool = True
    """Cast the key light's shadow on the floor (about +5% frame time on llvmpipe)."""
    shadow_size_px: int = 2048
    """Shadow map resolution [px]."""
    mesh_cell_m: float | None = 0.006
    """Decimate the robot meshes by clustering vertices on a grid of this cell [m] (see
    :mod:`retarget.viz.mesh_lod`); None draws the full meshes."""
    robot_rgba: tuple[float, float, float, float] | None = None
    """Override the robot's mesh colour (RGBA, 0-1); None keeps the URDF materials."""


def _add_floor(spec: mujoco.MjSpec, cfg: SceneConfig) -> None:
    spec.add_texture(
        name="viz_grid",
        type=mujoco.mjtTexture.mjTEXTURE_2D,
        builtin=mujoco.mjtBuiltin.mjBUILTIN_CHECKER,
        rgb1=list(cfg.floor_rgb1),
        rgb2=list(cfg.floor_rgb2),
        mark=mujoco.mjtMark.mjMARK_EDGE,
        markrgb=list(cfg.grid_rgb),
        width=512,
        height=512,
    )
    material = spec.add_material(name="viz_grid", reflectance=0.0, texuniform=True)
    # A builtin checker texture holds 2×2 squares; with texuniform the plane repeats it
    # texrepeat times per metre.
    repeat = 1.0 / (2.0 * cfg.checker_m)
    material.texrepeat = [repeat, repeat]
    material.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = "viz_grid"
    spec.worldbody.add_geom(
        name="viz_floor",
        type=mujoco.mjtGeom.mjGEOM_PLANE,
        size=[0, 0, 0.05],
        material="viz_grid",
        group=DECOR_GROUP,
        contype=0,
        conaffinity=0,
    )


def _add_sky_and_light(spec: mujoco.MjSpec, cfg: SceneConfig) -> None:
    spec.add_texture(
        name="viz_sky",
        type=mujoco.mjtTexture.mjTEXTURE_SKYBOX,
        builtin=mujoco.mjtBuiltin.mjBUILTIN_GRADIENT,
        rgb1=list(cfg.sky_rgb),
        rgb2=[1.0, 1.0, 1.0],
        width=64,
        height=384,
    )
    # A directional key light from above-front; the headlight fills the shadowed side.
    spec.worldbody.add_light(
        name="viz_sun",
        type=mujoco.mjtLightType.mjLIGHT_DIRECTIONAL,
        pos=[0.0, 0.0, 6.0],
        dir=[0.3, 0.25, -1.0],
        diffuse=[0.65, 0.65, 0.65],
        specular=[0.1, 0.1, 0.1],
        castshadow=cfg.shadows,
    )
    spec.visual.headlight.ambient = [0.35, 0.35, 0.35]
    spec.visual.headlight.diffuse = [0.45, 0.45, 0.45]
    spec.visual.headlight.specular = [0.05, 0.05, 0.05]
    spec.visual.quality.shadowsize = cfg.shadow_size_px
    # Coarser spheres and capsules (MuJoCo's default is 28 slices × 16 stacks): the skeleton's
    # 47 primitives cost as much as the robot's meshes at the default tessellation.
    spec.visual.quality.numslices = 14
    spec.visual.quality.numstacks = 8


def build_render_spec(robot_name: str, config: SceneConfig = SceneConfig(), max_size_px=(1920, 1080)) -> mujoco.MjSpec:
    """The robot's MjSpec dressed for rendering; `max_size_px` (w, h) sizes the offscreen buffer."""
    spec = build_mujoco_spec(load_robot_spec(robot_name), with_floor=False)
    for geom in spec.geoms:
        if geom.contype != 0 or geom.conaffinity != 0:
            geom.group = COLLISION_GROUP
        elif config.robot_rgba is not None:
            geom.rgba = list(config.robot_rgba)
            geom.material = ""
    if config.mesh_cell_m is not None:
        decimate_spec_meshes(spec, config.mesh_cell_m)
    _add_floor(spec, config)
    _add_sky_and_light(spec, config)
    spec.visual.global_.offwidth = int(max_size_px[0])
    spec.visual.global_.offheight = int(max_size_px[1])
    return spec


@lru_cache(maxsize=8)
def build_render_model(
    robot_name: str, config: SceneConfig = SceneConfig(), max_size_px: tuple[int, int] = (1920, 1080)
) -> mujoco.MjModel:
    """Compiled render model (cached; treat as read-only)."""
    return build_render_spec(robot_name, config, max_size_px).compile()
