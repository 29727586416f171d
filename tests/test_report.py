"""`asap-retarget report`: the HTML page for a batch folder, checked in headless Chromium."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from tests.conftest import asap_reference, smpl_clip

CLIPS = ("walk_level1_filter", "CR7_level1_filter", "squat_level1_filter")
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")


def _make_batch(out: Path) -> Path:
    """A batch output folder in the batch's own manifest layout, holding the official retargets."""
    from retarget.batch.library import write_manifest
    from retarget.batch.record import ClipRecord

    (out / "clips").mkdir(parents=True)
    records = []
    for i, name in enumerate(CLIPS):
        clip = f"video_{name}_amass"
        shutil.copy(asap_reference(name), out / "clips" / f"{clip}.pkl")
        records.append(
            ClipRecord(
                clip=clip,
                source=str(smpl_clip(name)),
                status="ok",
                output=f"clips/{clip}.pkl",
                frames=150,
                fps=30.0,
                metrics={"mean_match_error_mm": [20.0, 35.0, 25.0][i], "max_match_error_mm": 60.0},
                verdicts={"filter": "reject: floating" if name.startswith("squat") else "pass"},
            )
        )
    records.append(
        ClipRecord(clip="broken", source="raw/broken.npz", status="failed", error="raw/broken.npz: no 'poses'")
    )
    write_manifest(out, records, {"config": {"robot": "g1_23dof"}, "config_digest": "d1"})
    return out


@pytest.fixture(scope="module")
def batch_report(tmp_path_factory):
    from cli.main import main

    out = _make_batch(tmp_path_factory.mktemp("batch"))
    result = CliRunner().invoke(main, ["report", str(out), "--preview-frames", "3"])
    assert result.exit_code == 0, result.output
    assert "4 clips, 3 previews" in result.output
    return out


def test_report_files(batch_report):
    html = (batch_report / "report.html").read_text()
    assert html.count("<tr class=") == 4
    assert "data:image/webp;base64," in html and "<script>" in html
    for name in CLIPS:
        assets = batch_report / "report_files" / f"video_{name}_amass"
        assert {p.name for p in assets.iterdir()} >= {"preview.webp", "joints.png", "foot_height.png", "foot_tilt.png"}
        assert f'href="report_files/video_{name}_amass/joints.png"' in html
    # Worst first: the failed clip, the rejected one, then by mean match error (35 > 25 > 20).
    order = [line.split('data-clip="')[1].split('"')[0] for line in html.splitlines() if 'data-clip="' in line]
    assert order == [
        "broken",
        "video_squat_level1_filter_amass",
        "video_CR7_level1_filter_amass",
        "video_walk_level1_filter_amass",
    ]


def test_report_reuses_fresh_files(batch_report):
    from retarget.viz.report import ReportConfig, build_report

    preview = batch_report / "report_files" / "video_walk_level1_filter_amass" / "preview.webp"
    before = preview.stat().st_mtime_ns
    summary = build_report(batch_report, ReportConfig(preview_frames=3))
    assert preview.stat().st_mtime_ns == before and summary.previews == 3 and not summary.problems


def test_old_summary_layout_and_unknown_fields(tmp_path):
    """A flat summary.json (the first batch layout) with fields the report has never seen."""
    from retarget.viz.report import ReportConfig, build_report

    rows = [
        {"clip": "a", "status": "ok", "output": None, "new_score": 3.5, "extra": {"nested": 1}, "tags": [1, 2]},
        {"clip": "b", "status": "ok", "output": None, "new_score": 7.0, "verdict": "warn: jitter"},
    ]
    (tmp_path / "summary.json").write_text(json.dumps({"clips": rows, "totals": {"clips": 2}}))
    summary = build_report(tmp_path, ReportConfig(preview_frames=0, plots=False, sort_metric="new_score"))
    html = summary.html.read_text()
    assert summary.clips == 2 and "extra.nested" in html and "1, 2" in html
    assert html.index('data-clip="b"') < html.index('data-clip="a"')  # warned first


@pytest.mark.parametrize(
    "content, message",
    [(None, "not a batch output folder"), ("{not json", "not valid JSON"), ('{"clips": 3}', "'clips' list")],
)
def test_bad_batch_folder(tmp_path, content, message):
    from cli.main import main

    if content is not None:
        (tmp_path / "manifest.json").write_text(content)
    result = CliRunner().invoke(main, ["report", str(tmp_path)])
    assert result.exit_code == 1 and message in result.output
    assert not (tmp_path / "report.html").exists()


def test_unknown_sort_metric(batch_report):
    from cli.main import main

    result = CliRunner().invoke(main, ["report", str(batch_report), "--sort-by", "nope", "--no-plots"])
    assert result.exit_code == 1 and "mean_match_error_mm" in result.output


def _browser(tmp_path):
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        if os.environ.get("CI"):
            pytest.fail("Chromium missing in CI: scripts/install_system_deps.sh should have installed it")
        pytest.skip("Debian's chromium and chromium-driver are not installed (scripts/install_system_deps.sh)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        "--window-size=1400,900",
        f"--user-data-dir={tmp_path / 'profile'}",
    ):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)


def test_report_in_headless_chromium(batch_report, tmp_path):
    from PIL import Image
    from selenium.webdriver.common.by import By

    driver = _browser(tmp_path)
    try:
        driver.get((batch_report / "report.html").resolve().as_uri())
        rows = driver.find_elements(By.CSS_SELECTOR, "#clips tbody tr")
        assert len(rows) == 4
        assert rows[0].get_attribute("data-clip") == "broken"
        first_cells = [c.text for c in rows[1].find_elements(By.TAG_NAME, "td")]
        assert "video_squat_level1_filter_amass" in first_cells and "reject: floating" in first_cells
        # Every embedded preview decoded (animated WebP, 240 px wide).
        sizes = driver.execute_script("return Array.from(document.images).map(i => [i.complete, i.naturalWidth])")
        assert sizes == [[True, 240]] * 3
        # Sorting: click 'clip' → alphabetical; click the match error column twice → largest first.
        driver.find_element(By.XPATH, "//th[text()='clip']").click()
        names = [r.get_attribute("data-clip") for r in driver.find_elements(By.CSS_SELECTOR, "#clips tbody tr")]
        assert names == sorted(names)
        header = driver.find_element(By.XPATH, "//th[normalize-space(.)='mean_match_error_mm']")
        header.click()
        header.click()
        names = [r.get_attribute("data-clip") for r in driver.find_elements(By.CSS_SELECTOR, "#clips tbody tr")]
        assert names[0] == "video_CR7_level1_filter_amass" and names[-1] == "broken"
        # The plot links resolve on disk relative to the page.
        href = driver.find_element(By.LINK_TEXT, "joints").get_attribute("href")
        assert href.startswith("file://") and Path(href[len("file://") :]).is_file()
        # Read at 1,280 px: every clip's file links are on screen without scrolling sideways.
        driver.set_window_size(1280, 900)
        right = driver.execute_script(
            "return Math.max(...Array.from(document.querySelectorAll('td.files a'))"
            ".map(a => a.getBoundingClientRect().right))"
        )
        width = driver.execute_script("return document.documentElement.clientWidth")
        assert 0 < right <= width <= 1280, (right, width)
        shot = tmp_path / "report.png"
        assert driver.save_screenshot(str(shot))
    finally:
        driver.quit()
    with Image.open(shot) as im:
        pixels = np.asarray(im.convert("RGB"))
    assert im.size[0] >= 1000 and pixels.std() > 20  # a page, not a blank canvas


def test_report_progress_names_each_clip_before_its_work(tmp_path):
    from retarget.viz.report import ReportConfig, build_report

    out = _make_batch(tmp_path / "batch")
    calls: list[tuple[int, int, str]] = []
    build_report(out, ReportConfig(preview_frames=0, plots=False), on_clip=lambda *a: calls.append(a))
    assert [c[:2] for c in calls] == [(0, 4), (1, 4), (2, 4), (3, 4), (4, 4)]
    assert {c[2] for c in calls[:4]} == {*(f"video_{n}_amass" for n in CLIPS), "broken"}


def test_report_header_rounds_figures_and_leaves_out_empty_ones():
    from retarget.viz.report_html import meta_line

    line = meta_line(
        {
            "seconds": 3.7319906560000504,
            "stages": [],
            "clips": 4,
            "robot": "g1_23dof",
            "note": None,
            "frames": 12345.678,
        }
    )
    assert line == "seconds: 3.73 · clips: 4 · robot: g1_23dof · frames: 12346"


def test_a_corrupt_clip_file_is_listed_not_fatal(tmp_path):
    from retarget.viz.report import ReportConfig, build_report

    (tmp_path / "bad.pkl").write_bytes(b"\x80\x04 not a pickle")
    rows = [{"clip": "bad", "status": "ok", "output": "bad.pkl"}]
    (tmp_path / "manifest.json").write_text(json.dumps({"clips": rows}))
    summary = build_report(tmp_path, ReportConfig(preview_frames=2, plots=False))
    assert len(summary.problems) == 1 and "bad.pkl" in summary.problems[0]
    assert 'data-clip="bad"' in summary.html.read_text()
