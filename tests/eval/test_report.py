"""``--report DIR``: report.json and report.html from real ``eval qa`` / ``eval retrieval`` runs on a generated
set of the examples store; the page opened in headless Chromium (Debian's ``chromium`` through Playwright, as
``tests/web/``) with every plot rendered, and nothing fetched from elsewhere. Screenshots go to the test's tmp
dir and to ``artefacts/screenshots/`` (or ``$STRATAGRAPH_TEST_ARTEFACTS``)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from stratagraph import Settings
from stratagraph.eval.generate import generate, write_questions
from stratagraph.eval.report import bar_chart, line_chart, write_report
from stratagraph.services import Services
from tests.conftest import REPO

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARTEFACTS = Path(os.environ.get("STRATAGRAPH_TEST_ARTEFACTS") or REPO / "artefacts") / "screenshots"


@pytest.fixture(scope="module")
def reports(examples_home: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    from stratagraph.eval.qa import evaluate_qa
    from stratagraph.eval.retrieval import evaluate

    out = tmp_path_factory.mktemp("eval-report")
    svc = Services(Settings(home=examples_home))
    try:
        write_questions(generate(svc.graph, n=18, seed=1), out / "gen")
    finally:
        svc.close()
    settings = Settings(home=examples_home)
    qa = evaluate_qa(str(out / "gen"), ["kag", "first_sentence"], settings, metrics=["gold_recall", "citation_validity"])
    retrieval = evaluate(str(out / "gen"), ["vector", "lexical", "rrf"], [1, 3, 5], settings)
    return write_report(qa, "qa", out / "qa"), write_report(retrieval, "retrieval", out / "retrieval")


def test_report_json_is_the_whole_report(reports: tuple[Path, Path]) -> None:
    qa = json.loads((reports[0].parent / "report.json").read_text(encoding="utf-8"))
    assert set(qa["results"]) == {"kag", "first_sentence"}
    assert len(qa["results"]["kag"]["answers"]) == 18
    assert "gold_recall" in qa["results"]["kag"]["metrics"]
    page = reports[0].read_text(encoding="utf-8")
    assert "<script" not in page and "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")


def test_svg_builders_scale_bars_and_curves() -> None:
    svg = bar_chart("b", "t", ["x", "y"], {"s": [50.0, 100.0]}, "%")
    assert svg.count('class="bar"') == 2 and 'height="200.0"' in svg and 'height="100.0"' in svg  # the tallest bar spans the axis
    assert bar_chart("b", "t", ["x"], {"s": [None]}, "%").count('class="bar"') == 0
    line = line_chart("l", "t", [1, 5], {"a": [10.0, 20.0], "b": [5.0, 5.0]}, "%")
    assert line.count("<polyline") == 2 and "k=5" in line


@pytest.mark.skipif(CHROMIUM is None and os.environ.get("CI") != "true", reason="apt-get install chromium")
def test_report_plots_render_in_chromium(reports: tuple[Path, Path], tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        elsewhere: list[str] = []
        page.on("request", lambda r: None if r.url.startswith("file://") else elsewhere.append(r.url))
        for page_path, wanted in ((reports[0], {"accuracy", "latency", "accuracy_by_kind", "latency_by_kind", "metrics"}),
                                  (reports[1], {"recall_at_k", "latency", "chunk_recall_at_k", "recall_by_kind"})):  # fmt: skip
            page.goto(page_path.as_uri())
            plots = page.evaluate("""() => [...document.querySelectorAll('svg.plot')].map(s => {
                const box = s.getBoundingClientRect();
                const marks = [...s.querySelectorAll('rect.bar, polyline.line')].map(m => m.getBBox());
                return {name: s.dataset.plot, width: box.width, height: box.height,
                        marks: marks.length, drawn: marks.filter(b => b.width > 0 || b.height > 0).length};
            })""")
            assert {p["name"] for p in plots} == wanted
            for plot in plots:
                assert plot["width"] > 300 and plot["height"] > 200, plot
                assert plot["marks"] > 0 and plot["drawn"] == plot["marks"], plot
            shot = tmp_path / f"report-{page_path.parent.name}.png"
            page.screenshot(path=str(shot), full_page=True)
            shutil.copy(shot, ARTEFACTS / shot.name)
            assert shot.stat().st_size > 10_000
        browser.close()
    assert elsewhere == []
