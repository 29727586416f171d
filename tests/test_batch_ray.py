"""`--executor ray` on a local Ray instance: same per-clip function, byte-identical outputs."""

from __future__ import annotations

import pytest
from test_batch_helpers import make_short_clips, output_bytes, without_times

from retarget.batch import BatchOptions, run_batch
from retarget.config import RetargetConfig

ray = pytest.importorskip("ray", reason="Ray is the optional extra 'ray' (pip install -e '.[ray]')")


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_ray_executor_matches_the_process_pool_byte_for_byte(local_ray, tmp_path):
    clips = make_short_clips(tmp_path / "src", 3, frames=10)
    clips.append(tmp_path / "src" / "broken.npz")
    clips[-1].write_bytes(b"not an npz")
    inline, on_ray = tmp_path / "inline", tmp_path / "ray"
    run_batch(clips, inline, RetargetConfig(), BatchOptions(executor="inline"))
    result = run_batch(clips, on_ray, RetargetConfig(), BatchOptions(executor="ray", workers=2))
    assert ray.is_initialized()  # the batch used the test's instance and left it running
    assert [r.ok for r in result.records] == [True, True, True, False]
    assert "broken.npz" in result.failed[0].error
    assert output_bytes(on_ray) == output_bytes(inline) and len(output_bytes(on_ray)) == 4
    assert without_times(on_ray / "manifest.json") == without_times(inline / "manifest.json")
