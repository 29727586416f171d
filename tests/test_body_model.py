"""retarget.body_model on synthetic SMPL / SMPL-H / SMPL-X files (the real ones are licensed).

Each synthetic model is built so that its betas = 0 rest joints are the neutral skeleton's:
every joint owns a cluster of vertices whose mean is the joint, and J_regressor averages the
cluster. Random shape/pose blend shapes make betas change bone lengths and let us check
that our FK reproduces smplx's own forward pass.
"""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("smplx")

import smplx
import smplx.body_models
import torch
from conftest import smpl_clip

from retarget import body_model
from retarget.body_model import skeleton_from_body_model
from retarget.errors import AsapRetargetError, BodyModelError
from retarget.skeleton import neutral_skeleton, smpl_forward_kinematics

CLIP = smpl_clip("walk_level1_filter")
VERTS_PER_JOINT = 6
EXT = {"smpl": "pkl", "smplh": "pkl", "smplx": "npz"}
URL = {"smpl": "smpl.is.tue.mpg.de", "smplh": "mano.is.tue.mpg.de", "smplx": "smpl-x.is.tue.mpg.de"}
# Joint rows standing in for SMPL's L_Hand / R_Hand (left_middle1 / right_middle1).
HAND_ROWS = {"smpl": (22, 23), "smplh": (25, 40), "smplx": (28, 43)}


def _tree(model_type: str, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(parents, rest joints) of the full joint set; SMPL's 24 joints at neutral positions."""
    neutral = neutral_skeleton()
    rest24 = neutral.rest_joints()
    if model_type == "smpl":
        return neutral.parents.copy(), rest24
    parents, rest = list(neutral.parents[:22]), list(rest24[:22])
    if model_type == "smplx":  # jaw, left eye, right eye hang off the head (15)
        parents += [15, 15, 15]
        rest += [rest24[15] + rng.normal(0, 0.03, 3) for _ in range(3)]
    for wrist, hand in ((20, 22), (21, 23)):  # index, middle, pinky, ring, thumb; 3 joints each
        for finger in range(5):
            base = len(parents)
            parents += [wrist, base, base + 1]
            first = rest24[hand] if finger == 1 else rest24[hand] + rng.normal(0, 0.02, 3)
            rest += [first, first + [0.03, 0, 0], first + [0.06, 0, 0]]
    return np.array(parents), np.array(rest)


def write_model(folder: Path, model_type: str = "smpl", gender: str = "neutral", seed: int = 0) -> Path:
    """Write a small synthetic model file with the layout smplx's loaders read."""
    rng = np.random.default_rng(seed)
    parents, rest = _tree(model_type, rng)
    nj = len(parents)
    nv = nj * VERTS_PER_JOINT
    noise = rng.normal(0, 0.02, (nj, VERTS_PER_JOINT, 3))
    noise -= noise.mean(axis=1, keepdims=True)  # cluster mean == joint exactly
    v_template = (rest[:, None, :] + noise).reshape(nv, 3)
    owner = np.repeat(np.arange(nj), VERTS_PER_JOINT)
    j_regressor = np.zeros((nj, nv))
    j_regressor[owner, np.arange(nv)] = 1.0 / VERTS_PER_JOINT
    num_shape = 20 if model_type == "smplx" else 10  # SMPL-X: 10 shape + 10 expression dirs
    data = {
        "v_template": v_template,
        "shapedirs": rng.normal(0, 0.01, (nv, 3, num_shape)),
        "posedirs": rng.normal(0, 0.01, (nv, 3, (nj - 1) * 9)),
        "J_regressor": j_regressor,
        "weights": np.eye(nj)[owner],
        "kintree_table": np.stack([np.where(parents < 0, 4294967295, parents), np.arange(nj)]),
        "f": rng.integers(0, nv, (2 * nv, 3)).astype(np.int64),
    }
    if model_type != "smpl":
        data |= {
            "hands_componentsl": np.eye(45),
            "hands_componentsr": np.eye(45),
            "hands_meanl": np.zeros(45),
            "hands_meanr": np.zeros(45),
        }
    if model_type == "smplx":
        data |= {"lmk_faces_idx": np.zeros(1, np.int64), "lmk_bary_coords": np.full((1, 3), 1 / 3)}
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{model_type.upper()}_{gender.upper()}.{EXT[model_type]}"
    if EXT[model_type] == "npz":
        np.savez(path, **data)
    else:
        with open(path, "wb") as fh:
            pickle.dump(data, fh)
    return path


@pytest.fixture(autouse=True)
def _fresh_cache():
    body_model._load_model.cache_clear()
    yield
    body_model._load_model.cache_clear()


@pytest.mark.parametrize("model_type", ["smpl", "smplh", "smplx"])
def test_zero_betas_give_the_neutral_skeleton(tmp_path: Path, model_type: str) -> None:
    write_model(tmp_path / model_type, model_type)
    skel = skeleton_from_body_model(tmp_path, model_type, "neutral", np.zeros(10))
    np.testing.assert_array_equal(skel.parents, neutral_skeleton().parents)
    np.testing.assert_allclose(skel.offsets, neutral_skeleton().offsets, atol=1e-6)


def test_subfolder_itself_is_accepted(tmp_path: Path) -> None:
    write_model(tmp_path / "smpl", "smpl", "female")
    skel = skeleton_from_body_model(tmp_path / "smpl", "smpl", "female", np.zeros(10))
    np.testing.assert_allclose(skel.offsets, neutral_skeleton().offsets, atol=1e-6)


@pytest.mark.parametrize("model_type", ["smpl", "smplh", "smplx"])
def test_fk_on_shaped_skeleton_matches_smplx(tmp_path: Path, model_type: str, monkeypatch) -> None:
    path = write_model(tmp_path / model_type, model_type, "male", seed=3)
    betas = np.random.default_rng(1).normal(0, 2.0, 10)
    skel = skeleton_from_body_model(tmp_path, model_type, "male", betas)
    assert np.abs(skel.offsets - neutral_skeleton().offsets).max() > 1e-3

    clip = np.load(CLIP)
    pose = clip["poses"][:20].reshape(-1, 24, 3)
    trans = clip["trans"][:20]
    ours, _ = smpl_forward_kinematics(pose, trans, skel)

    # smplx's forward also picks extra keypoints at fixed vertex ids of the real meshes
    # (up to ~10k); point them at vertex 0 of our small mesh.
    vertex_ids = smplx.body_models.VERTEX_IDS
    for key in ("smplh", "smplx"):
        monkeypatch.setitem(vertex_ids, key, dict.fromkeys(vertex_ids[key], 0))
    ref_model = smplx.create(
        str(path),
        model_type=model_type,
        gender="male",
        num_betas=10,
        ext=EXT[model_type],
        batch_size=len(pose),
    )
    num_body = 23 if model_type == "smpl" else 21
    t = lambda a: torch.as_tensor(np.asarray(a), dtype=torch.float32)
    with torch.no_grad():
        out = ref_model(
            global_orient=t(pose[:, 0]),
            body_pose=t(pose[:, 1 : 1 + num_body].reshape(len(pose), -1)),
            betas=t(np.tile(betas, (len(pose), 1))),
            transl=t(trans),
        )
    ref = out.joints.numpy()[:, list(range(22)) + list(HAND_ROWS[model_type])]
    np.testing.assert_allclose(ours, ref, atol=1e-5)
    # smplx's transl convention is ours: the pelvis sits at transl + J0 (J0 not rotated).
    np.testing.assert_allclose(ref[:, 0], trans + skel.offsets[0], atol=1e-5)


def test_extra_nonzero_betas_warn(tmp_path: Path) -> None:
    write_model(tmp_path / "smpl")
    betas = np.r_[np.zeros(10), 0.5 * np.ones(6)]
    with pytest.warns(UserWarning, match="supports 10 betas"):
        skel = skeleton_from_body_model(tmp_path, "smpl", "neutral", betas)
    np.testing.assert_allclose(skel.offsets, neutral_skeleton().offsets, atol=1e-6)


def _error(*args) -> str:
    with pytest.raises(BodyModelError) as info:
        skeleton_from_body_model(*args)
    assert isinstance(info.value, AsapRetargetError)
    return str(info.value)


def test_missing_folder(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    msg = _error(missing, "smpl", "neutral", np.zeros(10))
    assert str(missing / "smpl" / "SMPL_NEUTRAL.pkl") in msg and URL["smpl"] in msg


@pytest.mark.parametrize("model_type", ["smpl", "smplh", "smplx"])
def test_folder_without_model_file(tmp_path: Path, model_type: str) -> None:
    write_model(tmp_path / model_type, model_type, "male")  # wrong gender: no fallback
    msg = _error(tmp_path, model_type, "female", np.zeros(10))
    expected = tmp_path / model_type / f"{model_type.upper()}_FEMALE.{EXT[model_type]}"
    assert str(expected) in msg and str(tmp_path / expected.name) in msg and URL[model_type] in msg


@pytest.mark.parametrize(
    "content",
    [b"not a pickle at all", pickle.dumps({"v_template": np.zeros((3, 3))}), b""],
    ids=["garbage", "missing-keys", "empty"],
)
def test_corrupt_model_file(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "smpl" / "SMPL_NEUTRAL.pkl"
    path.parent.mkdir()
    path.write_bytes(content)
    msg = _error(tmp_path, "smpl", "neutral", np.zeros(10))
    assert str(path) in msg and URL["smpl"] in msg


def test_corrupt_npz(tmp_path: Path) -> None:
    path = tmp_path / "smplx" / "SMPLX_NEUTRAL.npz"
    path.parent.mkdir()
    path.write_bytes(b"PK\x03\x04 truncated zip")
    msg = _error(tmp_path, "smplx", "neutral", np.zeros(10))
    assert str(path) in msg and URL["smplx"] in msg


def test_bad_arguments(tmp_path: Path) -> None:
    assert "model type" in _error(tmp_path, "mano", "neutral", np.zeros(10))
    assert "gender" in _error(tmp_path, "smpl", "other", np.zeros(10))
    assert "NaN" in _error(tmp_path, "smpl", "neutral", np.full(10, np.nan))


def test_without_smplx_installed(tmp_path: Path, monkeypatch) -> None:
    write_model(tmp_path / "smpl")
    monkeypatch.setitem(sys.modules, "smplx", None)  # makes `import smplx` raise ImportError
    msg = _error(tmp_path, "smpl", "neutral", np.zeros(10))
    assert "pip install -e '.[body-model]'" in msg


def test_package_imports_without_smplx() -> None:
    code = "import sys; sys.modules['smplx'] = sys.modules['torch'] = None; import retarget.body_model"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).resolve().parents[1])
