"""A copy of a robot's URDF for PyBullet whose collision meshes are their convex hulls, written once and reused.

PyBullet turns a (non-static) link's collision mesh into the convex hull of all its vertices. Loading the G1's
URDF therefore reads 19 MB of STL and builds about 40 hulls each time, 0.35-1 s of CPU per robot — and a
batch of 64 environments holds 64 robots in 64 worlds (measured: 67 s of a 78 s two-iteration fine-tuning).
Handing PyBullet the hull vertices themselves gives it the same convex shapes from a fraction of the data.
Visual meshes are dropped (nothing renders PyBullet's worlds). The copy lives in a folder named by the hash
of the URDF and its meshes, so an edited robot gets a new one.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from pathlib import Path

import numpy as np
from scipy.spatial import ConvexHull

from retarget.viz.mesh_lod import read_binary_stl

CACHE_ENV = "ASAP_RETARGET_CACHE"
"""Environment variable naming the folder for the hull copies (default: the system's temporary folder)."""
_VERSION = b"hull-stl-1"
"""Part of the cache key: a change of what this module writes gets a new folder."""
_MESH = re.compile(r'<mesh\s+filename="([^"]+)"\s*/>')
_VISUAL = re.compile(r"<visual>.*?</visual>", re.DOTALL)


def hull_urdf(urdf_path: Path) -> Path:
    """The hull copy of ``urdf_path`` (made on first use): same links, joints and inertias; every collision
    mesh replaced by an STL of its convex hull; no visual elements."""
    urdf_path = Path(urdf_path).resolve()
    text = urdf_path.read_text()
    meshes = sorted(set(_MESH.findall(text)))
    digest = hashlib.sha256(_VERSION + text.encode())
    for name in meshes:
        digest.update((urdf_path.parent / name).read_bytes())
    folder = Path(os.environ.get(CACHE_ENV, tempfile.gettempdir())) / f"pybullet_hulls_{digest.hexdigest()[:16]}"
    out = folder / urdf_path.name
    if out.is_file():
        return out
    folder.mkdir(parents=True, exist_ok=True)
    hulls = {name: _write_hull(urdf_path.parent / name, folder) for name in meshes}
    text = _VISUAL.sub("", text)
    text = _MESH.sub(lambda m: f'<mesh filename="{hulls[m.group(1)]}"/>', text)
    tmp = folder / f".{urdf_path.name}.{os.getpid()}.tmp"
    tmp.write_text(text)
    tmp.replace(out)  # written last and atomically: its presence means every hull is there
    return out


def _write_hull(mesh_path: Path, folder: Path) -> str:
    """A binary STL of the mesh's convex hull (STL again, so PyBullet builds its shape along the same path)."""
    verts, _ = read_binary_stl(mesh_path)
    triangles = verts[ConvexHull(verts).simplices].astype("<f4")  # (F, 3 corners, 3)
    record = np.dtype([("normal", "<f4", 3), ("corners", "<f4", (3, 3)), ("attr", "<u2")])
    data = np.zeros(len(triangles), dtype=record)
    data["corners"] = triangles
    path = folder / f"{mesh_path.stem}_hull.stl"
    tmp = folder / f".{path.name}.{os.getpid()}.tmp"
    tmp.write_bytes(b"convex hull".ljust(80, b" ") + np.uint32(len(data)).astype("<u4").tobytes() + data.tobytes())
    tmp.replace(path)
    return str(path)
