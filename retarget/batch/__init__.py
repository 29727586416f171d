"""Retarget a folder of clips into per-clip files, a combined library and a manifest (:func:`run_batch`).

The driver lives in :mod:`retarget.batch.run`; the per-clip function every executor runs in
:mod:`retarget.batch.clip`, its extra stages in :mod:`retarget.batch.stages`; the executors in
:mod:`retarget.batch.pool` (process pool, inline) and :mod:`retarget.batch.ray`; the per-clip records in
:mod:`retarget.batch.record`; the combined library and manifest in :mod:`retarget.batch.library`; other
consumer dialects in :mod:`retarget.batch.export`; source discovery in :mod:`retarget.batch.sources`; the
summary of a finished batch in :mod:`retarget.batch.summary`.

The driver's names are re-exported lazily, so importing one submodule (e.g. :mod:`retarget.batch.record` for
:func:`~retarget.batch.record.file_sha256`) does not load the retargeting code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from robots.lazy_exports import lazy_exports

__all__ = [
    "COMBINED_LIBRARY_NAME",
    "CONFIG_JSON",
    "EXECUTORS",
    "EXIT_SOME_FAILED",
    "MANIFEST_JSON",
    "BatchError",
    "BatchEvent",
    "BatchOptions",
    "BatchResult",
    "ClipRecord",
    "available_cores",
    "clip_names",
    "find_clips",
    "process_clip",
    "run_batch",
]
__getattr__, __dir__ = lazy_exports(__name__, dict.fromkeys(__all__, "retarget.batch.run"))

if TYPE_CHECKING:
    from retarget.batch.run import (
        COMBINED_LIBRARY_NAME,
        CONFIG_JSON,
        EXECUTORS,
        EXIT_SOME_FAILED,
        MANIFEST_JSON,
        BatchError,
        BatchEvent,
        BatchOptions,
        BatchResult,
        ClipRecord,
        available_cores,
        clip_names,
        find_clips,
        process_clip,
        run_batch,
    )
