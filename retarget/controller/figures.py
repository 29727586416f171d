"""The controller's figures of a verdict as tables show them: tracked fraction, Empjpe, falls.

One source for the filter table, the batch manifest (and so `summary` and `report`) and the batch's
per-clip table, so the same three figures carry the same names everywhere.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from retarget.controller.verdict import CHECK_NAME
from retarget.filter.verdict import Verdict

FIGURES: tuple[str, ...] = ("tracked_fraction", "empjpe_mm", "eg_mpjpe_mm", "falls")
"""Figures of the controller check copied into tables and manifests (units in the names)."""
METRIC_PREFIX = "controller."
"""Prefix of those figures in a batch manifest's metrics."""


def controller_figures(verdict: Verdict) -> dict[str, float] | None:
    """The controller check's :data:`FIGURES` of `verdict`, None when the controller layer did not run."""
    check = next((c for c in verdict.checks if c.name == CHECK_NAME), None)
    if check is None:
        return None
    return {name: float(check.figures[name]) for name in FIGURES}


def controller_metrics(verdict: Verdict) -> dict[str, float]:
    """:func:`controller_figures` under :data:`METRIC_PREFIX` (empty when the layer did not run)."""
    figures = controller_figures(verdict) or {}
    return {METRIC_PREFIX + name: value for name, value in figures.items()}


CELL_HEADER = "controller: tracked · Empjpe · falls"
"""Header of the one-cell summary a table gives the controller's figures."""


def controller_cell(figures: Mapping[str, float] | None) -> str:
    """``95 % · 27 mm · 1 fall`` from :func:`controller_figures` ("-" for None: the layer did not run)."""
    if figures is None:
        return "-"
    empjpe_mm = figures["empjpe_mm"]
    empjpe = f"{empjpe_mm:.0f} mm" if math.isfinite(empjpe_mm) else "-"
    n = int(figures["falls"])
    return f"{figures['tracked_fraction'] * 100:.0f} % · {empjpe} · {n} fall{'' if n == 1 else 's'}"


def metrics_figures(metrics: Mapping[str, float]) -> dict[str, float] | None:
    """:func:`controller_figures` read back from a manifest's metrics (None when the controller did not run)."""
    if not all(METRIC_PREFIX + name in metrics for name in FIGURES):
        return None
    return {name: metrics[METRIC_PREFIX + name] for name in FIGURES}
