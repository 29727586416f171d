"""Where the benchmarks find the 39 video-derived SMPL clips and the official ASAP retargets of the same clips.

Both sets ship in the repository (``tests/fixtures/smpl_video``, ``tests/fixtures/asap_reference``; provenance in
``tests/fixtures/PROVENANCE.md``: LeCAR-Lab/ASAP @ 91df82c, MIT). ``ASAP_RETARGET_DATA=DIR`` points the scripts at
another folder with the same two sub-folders.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA_ROOT = Path(os.environ.get("ASAP_RETARGET_DATA", REPO / "tests" / "fixtures"))
SMPL_DIR = DATA_ROOT / "smpl_video"
"""39 AMASS-layout ``.npz`` clips (TRAM video reconstructions), 30 Hz."""
ASAP_REFERENCE_DIR = DATA_ROOT / "asap_reference"
"""ASAP's own G1 23-dof retargets of the same clips (one-clip ``.pkl`` libraries)."""
