"""``--sequence-ik KEY=VALUE`` overrides of :class:`retarget.ik.sequence.SequenceIkConfig` for the benches.

Values are Python literals (``leg_from_hip_roll=0.5``, ``contact_heading_hold_weight=None``); unknown keys are
refused with the list of fields, so a typo cannot silently bench the default.
"""

from __future__ import annotations

import ast
import dataclasses

from retarget.ik.sequence import SequenceIkConfig


def sequence_ik_from_args(pairs: list[str] | None) -> SequenceIkConfig:
    """The default config with each ``KEY=VALUE`` of `pairs` applied."""
    fields = {f.name for f in dataclasses.fields(SequenceIkConfig)}
    overrides = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or key not in fields:
            raise SystemExit(f"--sequence-ik expects KEY=VALUE with KEY one of {', '.join(sorted(fields))}: {pair!r}")
        overrides[key] = ast.literal_eval(value)
    return dataclasses.replace(SequenceIkConfig(), **overrides)
