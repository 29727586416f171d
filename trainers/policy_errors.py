"""The error every policy reader raises (own checkpoints and rsl_rl's), in a module both import."""

from __future__ import annotations

from retarget.errors import AsapRetargetError


class PolicyFileError(AsapRetargetError):
    """A run folder or checkpoint that cannot be used."""
