"""Lighter meshes for rendering: vertex-clustering decimation of the robot's STL meshes.

The G1's visual meshes hold about 190k triangles. With no GPU every triangle goes through
Mesa's llvmpipe twice per frame (shadow map and colour pass), which dominated the frame time
(about 90 ms of a 130 ms frame at 640×480 without shadows, 220 of 280 with). Snapping
vertices to a grid of `cell_m` and dropping the triangles that collapse keeps the silhouette
to within one cell — at a 3.6 m camera distance one 640×480 pixel spans about 6 mm, so a
4 mm cell is below a pixel.
"""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np

from retarget.errors import MotionFileError


def read_binary_stl(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """Vertices (V, 3) and triangles (F, 3) of a binary STL, identical corners merged."""
    path = Path(path)
    raw = path.read_bytes()
    if len(raw) < 84:
        raise MotionFileError(path, "is not a binary STL (shorter than its 84-byte header)")
    count = int(np.frombuffer(raw, dtype="<u4", count=1, offset=80)[0])
    if len(raw) != 84 + 50 * count:
        raise MotionFileError(
            path, f"is not a binary STL: {count} triangles need {84 + 50 * count} bytes, found {len(raw)}"
        )
    record = np.dtype([("normal", "<f4", 3), ("corners", "<f4", (3, 3)), ("attr", "<u2")])
    corners = np.frombuffer(raw, dtype=record, count=count, offset=84)["corners"].reshape(-1, 3)
    verts, inverse = np.unique(corners, axis=0, return_inverse=True)
    return verts.astype(np.float64), inverse.reshape(-1, 3)


def cluster_decimate(verts: np.ndarray, faces: np.ndarray, cell_m: float) -> tuple[np.ndarray, np.ndarray]:
    """Merge the vertices in each `cell_m` grid cell into their mean; drop collapsed and repeated triangles."""
    keys = np.floor(verts / cell_m).astype(np.int64)
    _, cluster = np.unique(keys, axis=0, return_inverse=True)
    cluster = cluster.reshape(-1)
    counts = np.bincount(cluster)
    merged = np.zeros((len(counts), 3))
    np.add.at(merged, cluster, verts)
    merged /= counts[:, None]
    tri = cluster[faces]
    keep = (tri[:, 0] != tri[:, 1]) & (tri[:, 1] != tri[:, 2]) & (tri[:, 0] != tri[:, 2])
    tri = tri[keep]
    # The same triangle may survive twice (once per winding); keep the first of each vertex set.
    _, first = np.unique(np.sort(tri, axis=1), axis=0, return_index=True)
    tri = tri[np.sort(first)]
    used = np.unique(tri)
    remap = np.full(len(merged), -1, dtype=np.int64)
    remap[used] = np.arange(len(used))
    return merged[used], remap[tri]


def decimate_spec_meshes(spec: mujoco.MjSpec, cell_m: float) -> None:
    """Replace every STL mesh of `spec` by its decimated vertices and faces (in place)."""
    mesh_dir = Path(spec.meshdir)
    for mesh in spec.meshes:
        if not mesh.file.lower().endswith(".stl"):
            continue
        verts, faces = read_binary_stl(mesh_dir / mesh.file)
        small_v, small_f = cluster_decimate(verts, faces, cell_m)
        if len(small_f) < 4:  # a tiny part would vanish: keep it whole
            small_v, small_f = verts, faces
        mesh.file = ""
        mesh.uservert = small_v.astype(np.float32).reshape(-1).tolist()
        mesh.userface = small_f.astype(np.int32).reshape(-1).tolist()
