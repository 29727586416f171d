"""Shape-aware SMPL skeleton from the licensed SMPL / SMPL-H / SMPL-X body model files.

The built-in :func:`retarget.skeleton.neutral_skeleton` is SMPL's mean shape (betas = 0).
With the body model (``--body-model DIR``) the rest joints follow the clip's ``betas``:

    v_shaped = v_template + shapedirs · betas        (V, 3) [m], y-up, zero pose
    J        = J_regressor · v_shaped                (J, 3) [m]

This is exactly what smplx's ``lbs`` computes before posing, and at zero pose it is the
model's joint output. We evaluate it from the loaded model's buffers rather than calling
``model(...)``: the forward pass also builds vertex keypoints, hand PCA poses and face
landmarks that the 24 SMPL joints never need. Because SMPL joints move rigidly with the
kinematic chain, :func:`retarget.skeleton.smpl_forward_kinematics` on this skeleton
reproduces smplx's posed joints (tested in ``tests/test_body_model.py``).

The model files are licensed and never shipped; smplx and torch are optional
(``pip install -e '.[body-model]'``) and imported only here, lazily.
"""

from __future__ import annotations

import contextlib
import io
import warnings
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from retarget.errors import BodyModelError
from retarget.skeleton import Skeleton, neutral_skeleton

MODEL_TYPES = ("smpl", "smplh", "smplx")
GENDERS = ("neutral", "male", "female")

_DISPLAY = {"smpl": "SMPL", "smplh": "SMPL-H", "smplx": "SMPL-X"}
_DOWNLOAD_URLS = {
    "smpl": "https://smpl.is.tue.mpg.de",
    "smplh": "https://mano.is.tue.mpg.de",
    "smplx": "https://smpl-x.is.tue.mpg.de",
}
# File extensions smplx can read per model type, in the order we look for them.
# smplx's SMPL loader always unpickles, so SMPL must be a .pkl.
_EXTENSIONS = {"smpl": ("pkl",), "smplh": ("pkl", "npz"), "smplx": ("npz", "pkl")}

# Rows of the model's joint output that become the 24 SMPL joints. The 22 body joints
# (pelvis..right_wrist) come first in all three models. SMPL-H/X replace SMPL's single
# hand joint (L_Hand/R_Hand, 22/23) with finger chains; the base of the middle finger is
# the closest stand-in. Indices from smplx/joint_names.py (checked by name at run time):
#   SMPL-H (SMPLH_JOINT_NAMES): left_middle1 = 25, right_middle1 = 40
#   SMPL-X (JOINT_NAMES, which has jaw/eyes at 22-24): left_middle1 = 28, right_middle1 = 43
_BODY = list(range(22))
_JOINT_INDEX = {
    "smpl": list(range(24)),
    "smplh": _BODY + [25, 40],
    "smplx": _BODY + [28, 43],
}


def candidate_model_files(model_dir: str | Path, model_type: str, gender: str) -> list[Path]:
    """Where the model file may be, first match wins.

    smplx's own layout is ``DIR/<model_type>/<TYPE>_<GENDER>.<ext>`` (``smplx.create`` joins
    ``model_type`` onto a folder); we also accept ``DIR`` being that subfolder itself.
    """
    stem = f"{model_type.upper()}_{gender.upper()}"
    folders = (Path(model_dir) / model_type, Path(model_dir))
    return [folder / f"{stem}.{ext}" for folder in folders for ext in _EXTENSIONS[model_type]]


def _download_hint(model_type: str, expected: Path) -> str:
    return (
        f"Download {_DISPLAY[model_type]} from {_DOWNLOAD_URLS[model_type]} (register and accept "
        f"its licence) and save the model file, renamed if needed, as {expected}."
    )


def _import_smplx() -> tuple[Any, Any]:
    try:
        import smplx
        import torch
    except ImportError as exc:
        raise BodyModelError(
            f"--body-model needs the optional packages smplx and torch ({exc}); "
            "install them with: pip install -e '.[body-model]'"
        ) from exc
    return smplx, torch


@lru_cache(maxsize=8)
def _load_model(model_file: str, model_type: str, gender: str, num_betas: int) -> Any:
    """The smplx module for one file (cached: loading a real model takes ~1 s)."""
    smplx, torch = _import_smplx()
    ext = Path(model_file).suffix.lstrip(".")
    try:
        # smplx prints a warning for 10-beta models on stdout; keep the CLI's output clean.
        with contextlib.redirect_stdout(io.StringIO()):
            return smplx.create(
                model_path=model_file,
                model_type=model_type,
                gender=gender,
                num_betas=num_betas,
                ext=ext,
                dtype=torch.float64,
            )
    except Exception as exc:  # smplx raises Assertion/Value/OS/Unpickling/Key errors alike
        hint = _download_hint(model_type, Path(model_file))
        if isinstance(exc, ModuleNotFoundError) and exc.name == "chumpy":
            hint = (
                "The file stores chumpy objects (the original SMPL .pkl does); convert it "
                "with smplx's tools/clean_ch.py, or pip install chumpy."
            )
        raise BodyModelError(
            f"{model_file}: not a readable {_DISPLAY[model_type]} model ({type(exc).__name__}: {exc}). {hint}"
        ) from exc


def skeleton_from_body_model(model_dir: str | Path, model_type: str, gender: str, betas: np.ndarray) -> Skeleton:
    """The 24-joint SMPL skeleton of a body shape.

    Args:
        model_dir: folder holding ``<model_type>/<TYPE>_<GENDER>.<ext>`` (or the files
            directly), e.g. ``DIR/smpl/SMPL_NEUTRAL.pkl``.
        model_type: 'smpl', 'smplh' or 'smplx'.
        gender: 'neutral', 'male' or 'female'. No fallback: a missing gendered file is an
            error, since the genders have different skeletons.
        betas: (B,) shape coefficients. Betas beyond what the model supports (10 for most
            files, as smplx caps them) are dropped with a warning if non-zero.

    Returns:
        Skeleton with offsets [m] in SMPL's native y-up frame; row 0 is the shaped J0.

    Raises:
        BodyModelError: bad type/gender/betas, missing folder or file, unreadable file, or
            smplx/torch not installed.
    """
    if model_type not in MODEL_TYPES:
        raise BodyModelError(f"unknown body model type {model_type!r}; expected one of {MODEL_TYPES}")
    if gender not in GENDERS:
        raise BodyModelError(f"unknown body model gender {gender!r}; expected one of {GENDERS}")
    betas = np.asarray(betas, dtype=np.float64).reshape(-1)
    if betas.size == 0:
        betas = np.zeros(1)
    if not np.all(np.isfinite(betas)):
        raise BodyModelError(f"betas contain NaN or infinite values: {betas}")

    model_dir = Path(model_dir)
    candidates = candidate_model_files(model_dir, model_type, gender)
    if not model_dir.is_dir():
        raise BodyModelError(
            f"body model folder {model_dir} does not exist or is not a folder; expected "
            f"{candidates[0]}. {_download_hint(model_type, candidates[0])}"
        )
    model_file = next((c for c in candidates if c.is_file()), None)
    if model_file is None:
        raise BodyModelError(
            f"no {gender} {_DISPLAY[model_type]} model in {model_dir}: expected one of "
            f"{', '.join(map(str, candidates))}. {_download_hint(model_type, candidates[0])}"
        )

    model = _load_model(str(model_file.resolve()), model_type, gender, int(betas.size))
    _, torch = _import_smplx()
    from smplx.lbs import blend_shapes, vertices2joints

    num_used = int(model.shapedirs.shape[-1])
    if np.any(betas[num_used:] != 0):
        warnings.warn(
            f"{model_file} supports {num_used} betas; ignoring the other {betas.size - num_used}",
            stacklevel=2,
        )
    try:
        with torch.no_grad():
            b = torch.as_tensor(betas[None, :num_used], dtype=model.v_template.dtype)
            v_shaped = model.v_template[None] + blend_shapes(b, model.shapedirs)
            joints = vertices2joints(model.J_regressor, v_shaped)[0].numpy()
    except Exception as exc:  # inconsistent array shapes inside the file
        raise BodyModelError(f"{model_file}: inconsistent model arrays ({exc})") from exc

    index = _check_joint_index(model_type)
    if joints.shape[0] <= max(index) or not np.all(np.isfinite(joints)):
        raise BodyModelError(
            f"{model_file}: regresses {joints.shape[0]} joints (finite: "
            f"{bool(np.all(np.isfinite(joints)))}); a {_DISPLAY[model_type]} model needs "
            f"{max(index) + 1} finite joints"
        )
    return Skeleton.from_rest_joints(joints[index].astype(np.float64), neutral_skeleton().parents)


def _check_joint_index(model_type: str) -> list[int]:
    """`_JOINT_INDEX[model_type]`, verified against smplx's joint name tables."""
    from smplx.joint_names import JOINT_NAMES, SMPLH_JOINT_NAMES

    index = _JOINT_INDEX[model_type]
    names = {"smplh": SMPLH_JOINT_NAMES, "smplx": JOINT_NAMES}.get(model_type)
    if names is not None and (
        [names[i] for i in index[20:]] != ["left_wrist", "right_wrist", "left_middle1", "right_middle1"]
    ):
        found = [names[i] for i in index[20:]]
        raise BodyModelError(f"installed smplx orders {model_type} joints differently: {found}")
    return index
