"""Reading small `.npz` logs with required keys, without unpickling, errors naming the file."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from retarget.errors import MotionFileError


def read_npz(path: str | Path, what: str, required_keys: tuple[str, ...]) -> dict[str, np.ndarray]:
    """All arrays of an `.npz` file that must hold `required_keys`; `what` names it in errors ("robot log")."""
    path = Path(path)
    if not path.exists():
        raise MotionFileError(path, "file does not exist")
    try:
        with np.load(path, allow_pickle=False) as npz:
            data = {k: npz[k] for k in npz.files}
    except (OSError, ValueError, EOFError) as exc:
        raise MotionFileError(path, f"not a readable .npz {what} ({exc})") from exc
    missing = [k for k in required_keys if k not in data]
    if missing:
        raise MotionFileError(path, f"{what} is missing keys {missing}; expected {list(required_keys)}")
    return data
