"""The batch report as one HTML page: inline CSS and JavaScript, previews as data URIs, so the
file opens from disk in any browser with no server; plots and videos are relative links."""

from __future__ import annotations

import base64
import html
import json
import math
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

# Fields of a summary row that get their own cell or none (the rest become metric columns).
_SPECIAL = {"clip", "status", "verdict", "error", "source", "source_sha256", "output", "output_sha256", "config_digest"}
# Verdict words by severity (a verdict may carry a reason: 'reject: floating').
_VERDICT_RANK = {
    "failed": 0,
    "error": 0,
    "fail": 1,
    "reject": 1,
    "rejected": 1,
    "bad": 1,
    "warn": 2,
    "warning": 2,
    "review": 2,
}
FINE_RANK = 3


def _rank(verdict: str) -> int:
    """0 failed to run, 1 rejected, 2 warned, 3 fine."""
    word = verdict.strip().lower().split(":")[0].split()[0] if verdict.strip() else ""
    return _VERDICT_RANK.get(word, FINE_RANK)


@dataclass(frozen=True)
class ClipEntry:
    """One table row: the summary row plus the files made for it."""

    row: dict[str, Any]
    """The clip's row from summary.json, nested dicts flattened to 'a.b' keys."""
    preview: bytes | None = None
    """Animated WebP (or PNG) shown in the row, embedded."""
    preview_mime: str = "image/webp"
    links: dict[str, str] = field(default_factory=dict)
    """Link text → path relative to the report (videos, plots)."""

    @property
    def clip(self) -> str:
        return str(self.row.get("clip", "?"))

    @property
    def verdict(self) -> str:
        """'failed' for a failed clip, else the worst stage verdict ('verdict' or 'verdicts.*'), else the status."""
        status = str(self.row.get("status") or "?")
        if _rank(status) < FINE_RANK:
            return status
        stage = [str(v) for k, v in self.row.items() if (k == "verdict" or k.startswith("verdicts.")) and v]
        return min(stage, key=_rank) if stage else status


def flatten(row: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """{'a': {'b': 1}} → {'a.b': 1}; lists become short strings."""
    out: dict[str, Any] = {}
    for key, value in row.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(flatten(value, f"{name}."))
        elif isinstance(value, (list, tuple)):
            out[name] = ", ".join(map(str, value[:8])) + (" …" if len(value) > 8 else "")
        else:
            out[name] = value
    return out


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def badness_key(entry: ClipEntry, metric: str | None) -> tuple:
    """Sort key, worst first: failed, then warned, then the largest `metric`."""
    rank = _rank(entry.verdict)
    value = entry.row.get(metric) if metric else None
    score = (
        float(value) if isinstance(value, (int, float)) and _is_number(value) and math.isfinite(value) else -math.inf
    )
    return (rank, -score, entry.clip)


def metric_columns(entries: list[ClipEntry], first: str | None = None) -> list[str]:
    """Scalar fields with a value in some row: `first`, then the controller's figures (what a training job
    asks first: does the simulated G1 perform it), the other metrics.*, verdicts.*, the rest."""
    seen: dict[str, None] = {}
    for entry in entries:
        for key, value in entry.row.items():
            if key in _SPECIAL or not isinstance(value, (int, float, str, bool)) or value == "":
                continue
            seen.setdefault(key, None)
    group = {"metrics.controller.": 0, "metrics.": 1, "verdicts.": 2}
    order = sorted(seen, key=lambda k: (k != first, next((g for p, g in group.items() if k.startswith(p)), 3)))
    return order


def _header(key: str) -> str:
    for prefix, suffix in (("metrics.", ""), ("verdicts.", " verdict")):
        if key.startswith(prefix):
            return key[len(prefix) :] + suffix
    return key


def _header_html(key: str) -> str:
    """The header, allowed to wrap after each underscore, so twenty metric columns fit a laptop screen."""
    return "_<wbr>".join(html.escape(part) for part in _header(key).split("_"))


def _meta_value(value: Any) -> str:
    """A header figure as a person reads it: 3.73, not 3.7319906560000504."""
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1000 else f"{value:.0f}"
    return json.dumps(value) if isinstance(value, (dict, list)) else str(value)


def meta_line(meta: dict[str, Any]) -> str:
    """The page header's ``key: value`` pairs, empty ones (``stages: []``) left out."""
    shown = {k: v for k, v in meta.items() if v not in (None, "", [], {})}
    return " · ".join(f"{html.escape(str(k))}: {html.escape(_meta_value(v))}" for k, v in shown.items())


def _cell(value: Any) -> str:
    if _is_number(value):
        if isinstance(value, float) and not math.isfinite(value):
            return '<td class="num" data-v="">–</td>'
        text = f"{value:.4g}" if isinstance(value, float) else str(value)
        return f'<td class="num" data-v="{value!r}">{text}</td>'
    text = "" if value is None else str(value)
    return f'<td data-v="{html.escape(text, quote=True)}">{html.escape(text)}</td>'


def _preview_cell(entry: ClipEntry) -> str:
    if entry.preview is None:
        return '<td class="pv">—</td>'
    data = base64.b64encode(entry.preview).decode("ascii")
    return (
        f'<td class="pv"><img alt="preview of {html.escape(entry.clip)}" '
        f'src="data:{entry.preview_mime};base64,{data}"></td>'
    )


_CSS = """
body{font:14px system-ui,sans-serif;margin:1.2em;color:#222}
h1{font-size:1.4em;margin:0 0 .3em} .meta{color:#555;margin-bottom:1em}
table{border-collapse:collapse} th,td{border:1px solid #ccc;padding:3px 6px;vertical-align:middle}
th{background:#eef;cursor:pointer;position:sticky;top:0;max-width:8em;font-size:12px}
td.files{white-space:nowrap}
th.asc::after{content:" ▲"} th.desc::after{content:" ▼"}
td.num{text-align:right;font-variant-numeric:tabular-nums} td.pv img{height:120px;display:block}
tr.v-bad td.verdict{background:#fbb} tr.v-warn td.verdict{background:#fe9} tr.v-ok td.verdict{background:#cfc}
td.err{max-width:20em;font-size:12px;color:#a00;white-space:pre-wrap;overflow-wrap:anywhere}
"""

_JS = """
function sortBy(th){
  const table=th.closest('table'), body=table.tBodies[0], col=th.cellIndex;
  const asc=!th.classList.contains('asc');
  table.querySelectorAll('th').forEach(h=>h.classList.remove('asc','desc'));
  th.classList.add(asc?'asc':'desc');
  const rows=Array.from(body.rows), num=th.dataset.type==='num';
  const key=r=>{const v=r.cells[col].dataset.v; \
if(num){const x=parseFloat(v); return isNaN(x)?-Infinity:x;} return v||'';};
  rows.sort((a,b)=>{const x=key(a),y=key(b); const c=num?(x-y):String(x).localeCompare(String(y)); return asc?c:-c;});
  rows.forEach(r=>body.appendChild(r));
}
document.querySelectorAll('th.sortable').forEach(th=>th.addEventListener('click',()=>sortBy(th)));
"""


def render_report_html(entries: list[ClipEntry], title: str, meta: dict[str, Any], worst_metric: str | None) -> str:
    """The whole page; `entries` are shown worst first (see :func:`badness_key`)."""
    entries = sorted(entries, key=lambda e: badness_key(e, worst_metric))
    columns = metric_columns(entries, worst_metric)
    numeric = {c for c in columns if all(_is_number(e.row.get(c)) or e.row.get(c) is None for e in entries)}
    head = [
        '<th class="sortable" data-type="num">rank</th>',
        "<th>preview</th>",
        '<th class="sortable">clip</th>',
        '<th class="sortable">verdict</th>',
        "<th>files</th>",
    ]
    head += [
        f'<th class="sortable" data-type="{"num" if c in numeric else "text"}" title="{html.escape(c, quote=True)}">'
        f"{_header_html(c)}</th>"
        for c in columns
    ]
    head += ['<th class="sortable">error</th>']
    body = []
    for rank, entry in enumerate(entries, start=1):
        verdict = entry.verdict
        css = {0: "v-bad", 1: "v-bad", 2: "v-warn"}.get(badness_key(entry, None)[0], "v-ok")
        links = " ".join(
            f'<a href="{html.escape(quote(p), quote=True)}">{html.escape(t)}</a>' for t, p in entry.links.items()
        )
        cells = [f'<td class="num" data-v="{rank}">{rank}</td>', _preview_cell(entry), _cell(entry.clip)]
        cells.append(f'<td class="verdict" data-v="{html.escape(verdict)}">{html.escape(verdict)}</td>')
        cells.append(f'<td class="files">{links}</td>')  # before the metrics: on screen at 1,280 px
        cells += [_cell(entry.row.get(c)) for c in columns]
        error = str(entry.row.get("error") or "")
        cells.append(f'<td class="err" data-v="{html.escape(error, quote=True)}">{html.escape(error)}</td>')
        body.append(f'<tr class="{css}" data-clip="{html.escape(entry.clip, quote=True)}">' + "".join(cells) + "</tr>")
    meta_html = meta_line(meta)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>"
        f'<h1>{html.escape(title)}</h1><div class="meta">{meta_html}</div>'
        f"<p>Worst clips first (failed, rejected, warned, then by {html.escape(_header(worst_metric or 'name'))}, "
        "largest first); "
        "click a column header to sort.</p>"
        f'<table id="clips"><thead><tr>{"".join(head)}</tr></thead><tbody>\n'
        + "\n".join(body)
        + f"\n</tbody></table><script>{_JS}</script></body></html>\n"
    )
