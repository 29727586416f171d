"""``provenance.json`` of a loop run: per stage, the artefact, its inputs and their sha256 hashes.

A stage is *complete* when its record names the same inputs (paths, hashes, parameters) as the
current run would use and its artefact still exists with the recorded hash; a complete stage is
skipped. The file is rewritten atomically after every stage, so an interrupted loop leaves the
records of the stages that finished and nothing half-written.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from retarget.asap_pkl import atomic_write
from retarget.batch.record import file_sha256


def file_ref(path: str | Path) -> dict:
    """{"path", "sha256"} of an existing file."""
    return {"path": str(Path(path).resolve()), "sha256": file_sha256(Path(path))}


class Provenance:
    """The stage records of one run folder."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.stages: dict[str, dict] = json.loads(self.path.read_text())["stages"] if self.path.exists() else {}

    def is_complete(self, stage: str, inputs: dict) -> bool:
        rec = self.stages.get(stage)
        if rec is None or rec.get("inputs") != inputs:
            return False
        art = Path(rec["artefact"]["path"])
        return art.is_file() and file_sha256(art) == rec["artefact"]["sha256"]

    def record(self, stage: str, artefact: str | Path, inputs: dict, seconds: float, **extra) -> None:
        self.stages[stage] = {
            "artefact": file_ref(artefact),
            "inputs": inputs,
            "seconds": round(seconds, 2),
            "finished_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            **extra,
        }
        payload = json.dumps({"format": "asap-retarget-loop-provenance/1", "stages": self.stages}, indent=2)
        atomic_write(self.path, lambda tmp: tmp.write_text(payload))
