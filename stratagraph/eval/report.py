"""``eval qa|retrieval --report DIR``: ``report.json`` (the whole report) and ``report.html``, a page readable
offline: a table per workflow (or strategy) and plots drawn here as inline SVG (no script, no CDN):

* qa: accuracy and p50 latency per workflow, accuracy and p50 latency per kind of question, and the
  ``--metrics`` means per workflow when there are any;
* retrieval: recall@k curves (one line per strategy), p50 latency per strategy, recall at the largest k per
  kind of question.

Every plot is an ``<svg class="plot" data-plot="NAME">``; bars are ``rect.bar``, curves ``polyline.line``.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["bar_chart", "line_chart", "render", "write_report"]

COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
W, H, LEFT, BOTTOM, TOP = 640, 300, 56, 70, 30


def _esc(v: Any) -> str:
    return html.escape(str(v), quote=True)


def _axis(top: float, unit: str) -> str:
    """The y axis with five ticks from 0 to ``top``."""
    out = [f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{H - BOTTOM}" stroke="#444"/>',
           f'<line x1="{LEFT}" y1="{H - BOTTOM}" x2="{W - 10}" y2="{H - BOTTOM}" stroke="#444"/>']  # fmt: skip
    for i in range(5):
        value = top * i / 4
        y = H - BOTTOM - (H - BOTTOM - TOP) * i / 4
        out.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="11">{value:.4g}</text>')
        out.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{W - 10}" y2="{y:.1f}" stroke="#eee"/>')
    out.append(f'<text x="12" y="{TOP - 10}" font-size="11">{_esc(unit)}</text>')
    return "".join(out)


def _legend(names: Sequence[str]) -> str:
    return "".join(f'<rect x="{LEFT + 110 * i}" y="{H - 18}" width="10" height="10" fill="{COLOURS[i % len(COLOURS)]}"/>'
                   f'<text x="{LEFT + 110 * i + 14}" y="{H - 9}" font-size="11">{_esc(n)}</text>'
                   for i, n in enumerate(names))  # fmt: skip


def _svg(name: str, title: str, body: str) -> str:
    return (f'<figure><figcaption>{_esc(title)}</figcaption><svg class="plot" data-plot="{_esc(name)}" '
            f'xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" role="img" '
            f'aria-label="{_esc(title)}">{body}</svg></figure>')  # fmt: skip


def bar_chart(name: str, title: str, groups: Sequence[str], series: dict[str, Sequence[float | None]], unit: str) -> str:
    """Grouped bars: one group per label in ``groups``, one bar per series (missing values drawn as none)."""
    values = [v for vs in series.values() for v in vs if v is not None]
    top = max(values, default=0) or 1.0
    span = (W - LEFT - 20) / max(len(groups), 1)
    width = span * 0.8 / max(len(series), 1)
    body = [_axis(top, unit)]
    for g, group in enumerate(groups):
        x0 = LEFT + 10 + g * span
        for s, (label, vs) in enumerate(series.items()):
            v = vs[g] if g < len(vs) else None
            if v is None:
                continue
            h = (H - BOTTOM - TOP) * v / top
            body.append(f'<rect class="bar" x="{x0 + s * width:.1f}" y="{H - BOTTOM - h:.1f}" width="{width * 0.9:.1f}" '
                        f'height="{max(h, 0.5):.1f}" fill="{COLOURS[s % len(COLOURS)]}"><title>{_esc(label)} '
                        f'{_esc(group)}: {v:.4g}</title></rect>')  # fmt: skip
        body.append(f'<text x="{x0 + span * 0.4:.1f}" y="{H - BOTTOM + 14}" text-anchor="middle" font-size="11">'
                    f'{_esc(str(group)[:16])}</text>')  # fmt: skip
    if len(series) > 1:
        body.append(_legend(list(series)))
    return _svg(name, title, "".join(body))


def line_chart(name: str, title: str, xs: Sequence[int], series: dict[str, Sequence[float]], unit: str) -> str:
    """One polyline per series over the x values ``xs`` (recall@k curves)."""
    top = max((v for vs in series.values() for v in vs), default=0) or 1.0
    lo, hi = min(xs, default=0), max(xs, default=1)

    def x(v: float) -> float:
        return LEFT + 20 + (W - LEFT - 50) * ((v - lo) / (hi - lo) if hi > lo else 0.5)

    body = [_axis(top, unit)]
    body += [f'<text x="{x(k):.1f}" y="{H - BOTTOM + 14}" text-anchor="middle" font-size="11">k={k}</text>' for k in xs]
    for s, (label, vs) in enumerate(series.items()):
        points = " ".join(f"{x(k):.1f},{H - BOTTOM - (H - BOTTOM - TOP) * v / top:.1f}" for k, v in zip(xs, vs, strict=False))
        colour = COLOURS[s % len(COLOURS)]
        body.append(f'<polyline class="line" points="{points}" fill="none" stroke="{colour}" stroke-width="2">'
                    f'<title>{_esc(label)}</title></polyline>')  # fmt: skip
    body.append(_legend(list(series)))
    return _svg(name, title, "".join(body))


def _table(head: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    cells = "".join(f"<th>{_esc(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{_esc('' if v is None else v)}</td>" for v in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{cells}</tr></thead><tbody>{body}</tbody></table>"


def _scalar_table(name: str, row: dict[str, Any]) -> str:
    flat = {k: v for k, v in row.items() if not isinstance(v, dict) or k in ("answer_kinds",)}
    flat |= {f"metrics.{k}": v for k, v in row.get("metrics", {}).items()}
    return f"<h3>{_esc(name)}</h3>" + _table(["metric", "value"], [[k, json.dumps(v) if isinstance(v, dict) else v] for k, v in flat.items()])


def _kinds(results: dict[str, Any]) -> list[str]:
    return sorted({k for row in results.values() for k in row.get("kinds", {})})


def _per_kind(results: dict[str, Any], kinds: Sequence[str], metric: str) -> dict[str, list[float | None]]:
    return {name: [row.get("kinds", {}).get(k, {}).get(metric) for k in kinds] for name, row in results.items()}


def _qa_plots(results: dict[str, Any]) -> list[str]:
    names = list(results)
    plots = [bar_chart("accuracy", "Accuracy per workflow", names, {"accuracy": [r["accuracy"] for r in results.values()]}, "%"),
             bar_chart("latency", "p50 latency per workflow", names, {"p50_ms": [r["p50_ms"] for r in results.values()]}, "ms")]  # fmt: skip
    kinds = _kinds(results)
    if kinds:
        plots.append(bar_chart("accuracy_by_kind", "Accuracy per kind of question", kinds, _per_kind(results, kinds, "accuracy"), "%"))
        plots.append(bar_chart("latency_by_kind", "p50 latency per kind of question", kinds, _per_kind(results, kinds, "p50_ms"), "ms"))
    metrics = sorted({m for r in results.values() for m, v in r.get("metrics", {}).items()
                      if isinstance(v, float) and not m.startswith("judge_")})  # fmt: skip
    if metrics:
        plots.append(bar_chart("metrics", "Answer metrics per workflow (0-1)", metrics,
                               {n: [r.get("metrics", {}).get(m) for m in metrics] for n, r in results.items()}, "score"))  # fmt: skip
    return plots


def _retrieval_plots(results: dict[str, Any]) -> list[str]:
    first = next(iter(results.values()), {})
    ks = sorted(int(c.split("@")[1]) for c in first if c.startswith("recall@"))
    plots = [line_chart("recall_at_k", "recall@k per strategy", ks,
                        {n: [r.get(f"recall@{k}", 0.0) for k in ks] for n, r in results.items()}, "%"),
             bar_chart("latency", "p50 latency per strategy", list(results), {"p50_ms": [r["p50_ms"] for r in results.values()]}, "ms")]  # fmt: skip
    if any(c.startswith("chunk_recall@") for c in first):
        plots.append(line_chart("chunk_recall_at_k", "chunk recall@k per strategy", ks,
                                {n: [r.get(f"chunk_recall@{k}", 0.0) for k in ks] for n, r in results.items()}, "%"))  # fmt: skip
    kinds = _kinds(results)
    if kinds and ks:
        plots.append(bar_chart("recall_by_kind", f"recall@{ks[-1]} per kind of question", kinds,
                               _per_kind(results, kinds, f"recall@{ks[-1]}"), "%"))  # fmt: skip
    return plots


STYLE = ("body{font-family:system-ui,sans-serif;margin:2em;max-width:1100px}table{border-collapse:collapse;margin:.5em 0}"
         "td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}td:first-child,th:first-child{text-align:left}"
         "figure{display:inline-block;margin:1em}figcaption{font-weight:600}")  # fmt: skip


def render(report: dict[str, Any], kind: str) -> str:
    """The HTML page of an ``eval qa`` (``kind="qa"``) or ``eval retrieval`` report."""
    results = report.get("results", {})
    plots = _qa_plots(results) if kind == "qa" else _retrieval_plots(results)
    tables = "".join(_scalar_table(name, row) for name, row in results.items())
    title = f"stratagraph eval {kind}: {report.get('dataset', '')} ({report.get('questions', 0)} questions)"
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{_esc(title)}</title>'
            f"<style>{STYLE}</style></head><body><h1>{_esc(title)}</h1><h2>Plots</h2>{''.join(plots)}"
            f"<h2>Per {'workflow' if kind == 'qa' else 'strategy'}</h2>{tables}</body></html>")  # fmt: skip


def write_report(report: dict[str, Any], kind: str, folder: Path) -> Path:
    """``folder/report.json`` and ``folder/report.html``; returns the HTML's path."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "report.json").write_text(json.dumps(report, ensure_ascii=False, indent=1, default=str), encoding="utf-8")
    page = folder / "report.html"
    page.write_text(render(report, kind), encoding="utf-8")
    return page
