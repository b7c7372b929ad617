"""``stratagraph serve`` driven in a real headless Chromium (Debian's ``chromium``, through Playwright's
driver), as a person uses it: ask, follow a citation to its highlighted quote, open the evidence graph, start
a second thread and switch back, browse a document's heading tree and entities. Screenshots are kept in
``artefacts/screenshots/`` (or ``$STRATAGRAPH_TEST_ARTEFACTS``)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.processes import running

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
#: skipped without Chromium, except in CI (CI=true), where .ci/system-packages installs it
pytestmark = pytest.mark.skipif(CHROMIUM is None and os.environ.get("CI") != "true", reason="apt-get install chromium")

ARTEFACTS = Path(os.environ.get("STRATAGRAPH_TEST_ARTEFACTS") or REPO / "artefacts") / "screenshots"
BUDGET_Q = "How much more does the Police Department request than the Fire Department?"
EARNINGS_Q = "What was Northwind Robotics' revenue in the second quarter of 2024?"


def test_conversation_citation_graph_threads_and_documents_in_chromium(page_store: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    with running(page_store, "serve") as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1500, "height": 900})
        elsewhere: list[str] = []
        page.on("request", lambda r: None if r.url.startswith(base) else elsewhere.append(r.url))
        page.goto(base + "/")
        expect(page.locator("body")).to_have_attribute("data-ready", "true")
        expect(page.locator("#counts")).to_contain_text("8 Document")

        # ask: the reply streams in, with its trace and citations
        page.fill("#message", BUDGET_Q)
        page.click("#send")
        first = page.locator(".turn").nth(0)
        expect(first.locator(".answer")).to_have_text("$2,805 thousand", timeout=120_000)
        expect(first.locator(".computed")).to_contain_text("18,585 - 15,780")
        assert first.locator("details.trace li").count() >= 3
        assert first.locator(".cite").count() >= 2
        page.screenshot(path=str(ARTEFACTS / "1-conversation.png"))

        # follow a citation: the passage opens with the quote highlighted
        cite = first.locator(".cite").first
        cite.click()
        mark = page.locator("#passage-text mark")
        expect(mark).to_be_visible()
        quote = mark.inner_text()
        assert quote and quote in page.locator("#passage-text").inner_text()
        expect(page.locator("#passage-id")).to_have_text(cite.get_attribute("data-chunk"))
        expect(page.locator("#passage-section")).to_contain_text("Police Department")
        page.screenshot(path=str(ARTEFACTS / "2-citation.png"))

        # the evidence graph: the cited chunks, their entities and facts, the workflow's path
        first.locator(".show-graph").click()
        svg = page.locator("#graph-svg")
        expect(svg).to_be_visible()
        assert svg.locator("g[data-kind=Chunk] circle.cited").count() >= 2
        assert svg.locator("g[data-kind=Entity]").count() >= 2
        assert svg.locator("g[data-kind=Fact]").count() >= 1
        assert svg.locator("g[data-kind=Step]").count() >= 3 and svg.locator("line.path").count() >= 3
        assert svg.locator("line[data-type=MENTIONS]").count() >= 2
        page.screenshot(path=str(ARTEFACTS / "3-evidence-graph.png"))

        # a second thread, then back to the first: its turn comes back from the store with its citations
        page.click("#new-thread")
        expect(page.locator(".turn")).to_have_count(0)
        page.fill("#message", EARNINGS_Q)
        page.click("#send")
        expect(page.locator(".turn .answer").first).to_have_text("$142.6 million", timeout=120_000)
        threads = page.locator("#thread-list li")
        expect(threads).to_have_count(2)
        page.locator("#thread-list li", has_text="How much more does the Police").click()
        expect(page.locator(".turn .question")).to_have_text([BUDGET_Q])
        expect(page.locator(".turn .answer")).to_have_text(["$2,805 thousand"])
        assert page.locator(".turn .cite").count() >= 2
        page.screenshot(path=str(ARTEFACTS / "4-threads.png"))

        # the documents: heading tree and entities; a paragraph opens its passage
        page.click("#tab-docs")
        page.locator("#document-list li", has_text="City of Riverton").click()
        expect(page.locator("#tree")).to_contain_text("1.1.1 Police Department")
        expect(page.locator("#entities li").first).to_be_visible()
        page.locator("#tree li[data-section$='::s1.1.1'] .chunks button").first.click()
        expect(page.locator("#passage-text")).to_contain_text("Police Department")
        page.screenshot(path=str(ARTEFACTS / "5-documents.png"))
        browser.close()
    assert elsewhere == []  # nothing fetched from anywhere but the server
