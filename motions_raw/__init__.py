"""Sample SMPL clips bundled so `asap-retarget batch` runs with no arguments (see README.md here)."""
