"""Physics filter: keep only motions the G1 can perform, trim what can be saved, say why.

`filter_result(result, seq, config)` is the batch stage; `filter_clip(path)` reads, retargets
and filters one file. See :mod:`retarget.filter.api` for the order of work.
"""

from retarget.filter.api import filter_clip, filter_result, filter_sequence
from retarget.filter.config import DynamicConfig, FilterConfig, KinematicConfig, ReplayConfig
from retarget.filter.verdict import KEEP, REJECT, TRIM, CheckResult, Repair, Verdict

__all__ = [
    "KEEP",
    "REJECT",
    "TRIM",
    "CheckResult",
    "DynamicConfig",
    "FilterConfig",
    "KinematicConfig",
    "Repair",
    "ReplayConfig",
    "Verdict",
    "filter_clip",
    "filter_result",
    "filter_sequence",
]
