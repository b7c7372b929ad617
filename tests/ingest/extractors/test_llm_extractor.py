"""LLMExtractor end to end through ChatOpenAI against a real local HTTP server with scripted replies."""

from __future__ import annotations

import json
import logging
import re
import time
from pathlib import Path
from typing import Any

import pytest

from stratagraph.ingest.extractors.base import (
    ChunkExtraction,
    ChunkInput,
    DocumentInput,
    ExtractedEntity,
    ExtractedFact,
    ExtractedRelation,
)
from stratagraph.ingest.extractors.llm import LLMExtraction, LLMExtractor, parse_reply, to_chunk_extraction
from stratagraph.llm import LLMCache, LLMUnavailable, MalformedReply, get_chat_model
from tests.scripted_llm import Reply, ScriptedChatServer, closed_port, user_text

TEXT1 = "Acme Corporation acquired Beta Labs for $30 million in March 2024. Jane Doe leads Beta Labs."
TEXT2 = "Beta Labs will open a second laboratory in Oslo."

REPLY1 = {
    "facts": [
        {
            "description": "Acme Corporation acquired Beta Labs for $30 million in March 2024.",
            "type": "acquire",
            "confidence": 9,
            "entities": ["Acme Corporation", "Beta Labs", "March 2024"],
            "attributes": [{"name": "period", "value": "Q1"}],
        },
        {
            "description": "Jane Doe leads Beta Labs.",
            "type": "Lead",
            "confidence": 12,
            "entities": ["Jane Doe", "beta labs"],
            "attributes": [],
        },
    ],
    "entities": [
        {"name": "Acme Corporation", "type": "org", "description": "A manufacturer.", "confidence": 95,
         "line_item": False},
        {"name": "Beta Labs", "type": "ORG", "description": "A research firm.", "confidence": 120, "line_item": False},
        {"name": "March 2024", "type": "DATE", "description": "A month.", "confidence": 100, "line_item": False},
    ],
    "relations": [{"subject": "Acme Corporation", "predicate": "acquired", "object": "Beta Labs", "confidence": 8}],
}

REPLY2 = {
    "facts": [
        {
            "description": "Beta Labs will open a second laboratory in Oslo.",
            "type": "open",
            "confidence": 7.5,
            "entities": ["Beta Labs", "Oslo"],
            "attributes": [],
        }
    ],
    "entities": [
        {"name": "Beta Labs", "type": "ORG", "description": "A research firm.", "confidence": 90, "line_item": False},
        {"name": "Oslo", "type": "LOCATION", "description": "Capital of Norway.", "confidence": 99, "line_item": False},
    ],
    "relations": [{"subject": "Beta Labs", "predicate": "expands_to", "object": "Oslo", "confidence": 6}],
}


def chunk(chunk_id: str, text: str, context: str = "") -> ChunkInput:
    return ChunkInput(
        chunk_id=chunk_id,
        text=text,
        context=context,
        section_id=f"sec-{chunk_id}",
        section_title="Acquisitions",
        heading_path=["Annual report", "Acquisitions"],
    )


def document(doc_id: str, *chunks: ChunkInput) -> DocumentInput:
    return DocumentInput(doc_id=doc_id, title=f"Report {doc_id}", chunks=list(chunks))


def text_of_chunk(body: dict[str, Any]) -> str:
    """The chunk text inside the user prompt of a recorded request."""
    return re.search(r"Text:\n<<<\n(.*?)\n>>>", user_text(body), re.DOTALL).group(1)  # type: ignore[union-attr]


def prompt_context(body: dict[str, Any]) -> tuple[str, str]:
    """The (previous facts, previous sentences) sections of the user prompt of a recorded request, each framed
    as data between ``<<<`` and ``>>>``."""
    found = re.search(
        r"from the previous passage[^\n]*:\n<<<\n(.*?)\n>>>\n\nSentences just before this passage[^\n]*:\n<<<\n(.*?)\n>>>\n\nText:",
        user_text(body),
        re.DOTALL,
    )
    assert found is not None
    return found.group(1), found.group(2)


def echo_reply(body: dict[str, Any]) -> Reply:
    """A deterministic, valid reply derived from the chunk text of the request."""
    text = text_of_chunk(body)
    return Reply.json(
        {
            "facts": [{"description": f"The passage states: {text}", "type": "state", "confidence": 8,
                       "entities": [text.split()[0]], "attributes": []}],
            "entities": [{"name": text.split()[0], "type": "THING", "description": "", "confidence": 80,
                          "line_item": False}],
            "relations": [],
        }  # fmt: skip
    )


def strip_quantities(extraction: ChunkExtraction) -> ChunkExtraction:
    """The extraction without parsed quantities (another module's concern, not asserted here)."""
    return extraction.model_copy(update={"facts": [f.model_copy(update={"quantities": []}) for f in extraction.facts]})


def strip_roles(fact: ExtractedFact) -> ExtractedFact:
    """The fact without its predicate and arguments (asserted on their own)."""
    return fact.model_copy(update={"predicate": "", "arguments": []})


def extractor_for(
    server: ScriptedChatServer, tmp_path: Path, cache: LLMCache | None = None, **settings: Any
) -> LLMExtractor:
    config = server.settings(tmp_path, **settings)
    model = get_chat_model(config)
    assert model is not None
    return LLMExtractor(model, config, cache)


# --------------------------------------------------------------------------------------------- (a)
def test_scripted_reply_becomes_exact_extraction_against_scripted_http_server(
    tmp_path: Path, chat_server: ScriptedChatServer
) -> None:
    chat_server.script.append(Reply.json(REPLY1))
    extractor = extractor_for(chat_server, tmp_path)
    assert extractor.name == "llm:scripted"
    [[result]] = extractor.extract([document("d1", chunk("c1", TEXT1))])

    assert result.chunk_id == "c1"
    assert result.entities == [
        ExtractedEntity(name="Acme Corporation", type="ORG", description="A manufacturer.", confidence=0.95,
                        start=0, end=16),
        ExtractedEntity(name="Beta Labs", type="ORG", description="A research firm.", confidence=1.0,
                        start=TEXT1.index("Beta Labs"), end=TEXT1.index("Beta Labs") + 9),
        ExtractedEntity(name="Jane Doe", type="THING", description="", confidence=1.0,
                        start=TEXT1.index("Jane Doe"), end=TEXT1.index("Jane Doe") + 8),
    ]  # fmt: skip
    facts = [strip_roles(strip_quantities(result).facts[i]) for i in range(2)]
    assert facts == [
        ExtractedFact(
            description="Acme Corporation acquired Beta Labs for $30 million in March 2024.",
            type="acquire",
            confidence=0.9,
            entities=["Acme Corporation", "Beta Labs"],
            attributes={"period": "Q1", "date": "March 2024"},
        ),
        ExtractedFact(
            description="Jane Doe leads Beta Labs.", type="lead", confidence=1.0, entities=["Jane Doe", "Beta Labs"]
        ),
    ]
    assert all(isinstance(f.quantities, list) for f in result.facts)
    # the descriptions are sentences of the chunk: their arguments come from spaCy's parse of it
    assert [f.predicate for f in result.facts] == ["acquire", "lead"]
    assert [[(a.role, a.text, a.prep, a.entity) for a in f.arguments] for f in result.facts] == [
        [("subject", "Acme Corporation", "", "Acme Corporation"), ("object", "Beta Labs", "", "Beta Labs"),
         ("oblique", "$30 million", "for", ""), ("oblique", "March 2024", "in", "")],
        [("subject", "Jane Doe", "", "Jane Doe"), ("object", "Beta Labs", "", "Beta Labs")],
    ]  # fmt: skip
    assert all(TEXT1[a.start : a.end] == a.text for f in result.facts for a in f.arguments)
    assert result.relations == [
        ExtractedRelation(subject="Acme Corporation", predicate="acquired", object="Beta Labs", confidence=0.8)
    ]

    [body] = chat_server.requests
    assert body["model"] == "scripted" and body["temperature"] == 0
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["name"] == "LLMExtraction"
    assert fmt["json_schema"]["strict"] is True
    prompt = user_text(body)
    assert "Report d1" in prompt and "Annual report > Acquisitions" in prompt and TEXT1 in prompt
    assert body["messages"][0]["role"] == "system" and '"facts"' in body["messages"][0]["content"]


# --------------------------------------------------------------------------------------------- (b)
def test_second_chunk_prompt_carries_first_chunks_facts_against_scripted_http_server(
    tmp_path: Path, chat_server: ScriptedChatServer
) -> None:
    chat_server.script.extend([Reply.json(REPLY1), Reply.json(REPLY2), Reply.json(REPLY2)])
    extractor = extractor_for(chat_server, tmp_path, llm_concurrency=1)
    docs = [
        document("d1", chunk("c1", TEXT1), chunk("c2", TEXT2, context="Jane Doe leads Beta Labs.")),
        document("d2", chunk("c3", TEXT2)),
    ]
    results = extractor.extract(docs)
    assert [[c.chunk_id for c in r] for r in results] == [["c1", "c2"], ["c3"]]

    first, second, other_doc = (prompt_context(b) for b in chat_server.requests)
    assert first == ("(none)", "(none)")
    assert second == ("\n".join(f"- {f['description']}" for f in REPLY1["facts"]), "Jane Doe leads Beta Labs.")
    assert other_doc == ("(none)", "(none)")  # carry-over stays inside one document


# --------------------------------------------------------------------------------------------- (c)
def test_rerun_with_same_cache_file_sends_no_requests_against_scripted_http_server(
    tmp_path: Path, chat_server: ScriptedChatServer
) -> None:
    chat_server.responder = echo_reply
    docs = [
        document("d1", chunk("c1", TEXT1), chunk("c2", TEXT2)),
        document("d2", chunk("c3", "Oslo hosts the Nobel Peace Prize ceremony."), chunk("c4", "   ")),
    ]
    settings = chat_server.settings(tmp_path)
    first_cache = LLMCache(settings.llm_cache_path)
    first = extractor_for(chat_server, tmp_path, cache=first_cache).extract(docs)
    first_cache.close()
    assert len(chat_server.requests) == 3  # the blank chunk c4 is never sent
    assert first[1][1] == ChunkExtraction(chunk_id="c4")

    again = LLMExtractor.from_settings(settings)  # the store's cache file, as the pipeline builds it
    try:
        second = again.extract(docs)
        assert len(chat_server.requests) == 3 and again.requests == 0
        assert again.cache is not None and (again.cache.hits, again.cache.misses) == (3, 0)
        assert second == first
    finally:
        again.close()


# --------------------------------------------------------------------------------------------- (d)
def test_malformed_reply_is_asked_once_more_against_scripted_http_server(
    tmp_path: Path, chat_server: ScriptedChatServer
) -> None:
    chat_server.script.extend([Reply(content="Sure! Here are the facts you asked for."), Reply.json(REPLY2)])
    [[result]] = extractor_for(chat_server, tmp_path).extract([document("d1", chunk("c2", TEXT2))])
    assert len(chat_server.requests) == 2
    assert [f.description for f in result.facts] == [REPLY2["facts"][0]["description"]]
    first, retry = chat_server.requests
    assert retry["messages"][: len(first["messages"])] == first["messages"]
    note = retry["messages"][-1]
    assert note["role"] == "user" and "could not be used" in note["content"] and "no JSON object" in note["content"]


def test_malformed_twice_gives_that_chunk_an_empty_extraction_against_scripted_http_server(
    tmp_path: Path, chat_server: ScriptedChatServer, caplog: pytest.LogCaptureFixture
) -> None:
    chat_server.script.extend(
        [
            Reply(content='```json\n{"facts": [{"description": 5}]}\n```'),  # JSON, wrong shape
            Reply(content='{"facts": [ {"description": "cut off'),  # not valid JSON
            Reply.json(REPLY2),
        ]
    )
    cache = LLMCache(tmp_path / "cache.sqlite")
    extractor = extractor_for(chat_server, tmp_path, cache=cache)
    with caplog.at_level(logging.WARNING, logger="stratagraph.ingest.extractors.llm"):
        [[bad, good]] = extractor.extract([document("d1", chunk("c-bad", TEXT1), chunk("c-good", TEXT2))])
    assert len(chat_server.requests) == 3
    assert bad == ChunkExtraction(chunk_id="c-bad")
    assert [e.name for e in good.entities] == ["Beta Labs", "Oslo"] and len(good.facts) == 1
    assert any("c-bad" in r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)
    assert len(cache) == 1  # only the usable reply is cached: a re-run asks again for c-bad
    cache.close()


def test_parse_reply_finds_the_object_and_reports_why_it_fails() -> None:
    fenced = "<think>plan the answer {maybe}</think>Here you go:\n```json\n" + json.dumps(REPLY2) + "\n```\nDone."
    assert parse_reply(fenced).facts[0].description == REPLY2["facts"][0]["description"]
    loose = parse_reply('{"facts": [{"description": "X rose.", "entities": [{"name": "X"}], '
                        '"attributes": {"date": "2020"}, "confidence": null}]}')  # fmt: skip
    assert loose.facts[0].entities == ["X"] and loose.facts[0].attributes[0].value == "2020"
    for text, reason in [("", "empty"), ("no json here", "no JSON object"), ("[1, 2]", "no JSON object"),
                         ('{"facts": 3}', "does not match the schema"), ('{"facts": [', "not closed")]:  # fmt: skip
        with pytest.raises(MalformedReply, match=reason):
            parse_reply(text)


# --------------------------------------------------------------------------------------------- (e)
def test_429_then_good_reply_is_exactly_two_requests_against_scripted_http_server(
    tmp_path: Path, chat_server: ScriptedChatServer
) -> None:
    chat_server.script.extend([Reply.error(429, "rate limited", **{"Retry-After": "0"}), Reply.json(REPLY2)])
    [[result]] = extractor_for(chat_server, tmp_path, request_retries=2).extract([document("d1", chunk("c2", TEXT2))])
    assert len(chat_server.requests) == 2
    assert [f.description for f in result.facts] == [REPLY2["facts"][0]["description"]]


def test_persistent_503_is_llm_unavailable_after_the_clients_retries_only_against_scripted_http_server(
    tmp_path: Path, chat_server: ScriptedChatServer
) -> None:
    chat_server.responder = lambda body: Reply.error(503, "overloaded", **{"Retry-After": "0"})
    extractor = extractor_for(chat_server, tmp_path, request_retries=1)
    with pytest.raises(LLMUnavailable, match="503"):
        extractor.extract([document("d1", chunk("c1", TEXT1), chunk("c2", TEXT2))])
    assert len(chat_server.requests) == 2  # one try + the client's one retry; the extractor adds none
    assert extractor.requests == 2  # every request sent is counted, retries included


#: per server mode: requests for the first chunk (the probe down the ladder), the rung it settles on
MODE_PROBES = {
    "openai": (1, "json_schema"),
    "vllm_old": (2, "json_object"),
    "llama_cpp": (2, "json_object"),
    "ollama": (2, "json_object"),
    "plain": (3, "prompt"),
}


@pytest.mark.parametrize("mode", sorted(MODE_PROBES))
def test_every_server_mode_ends_in_the_exact_extraction_with_one_probe_per_store_against_scripted_http_server(
    tmp_path: Path, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from stratagraph import llm
    from tests.scripted_llm import SERVER_MODES

    server = ScriptedChatServer(mode).start()
    try:
        server.responder = lambda body: Reply.json(REPLY2)
        cache = LLMCache(tmp_path / "llm_cache.sqlite")
        extractor = extractor_for(server, tmp_path, cache, request_retries=2)
        doc = document("d1", chunk("c1", TEXT2), chunk("c2", TEXT2 + " Again."))
        [[one, two]] = extractor.extract([doc])
        expected = to_chunk_extraction(LLMExtraction.model_validate(REPLY2), chunk("c1", TEXT2))
        assert one == expected and len(two.facts) == 1
        probes, rung = MODE_PROBES[mode]
        # no retry of a deterministic rejection (request_retries=2 would have tripled each one)
        assert len(server.requests) == probes + 1 == extractor.requests
        kinds = [(b.get("response_format") or {}).get("type") for b in server.requests]
        ladder = {"json_schema": ["json_schema"], "json_object": ["json_schema", "json_object"],
                  "prompt": ["json_schema", "json_object", None]}[rung]  # fmt: skip
        assert kinds == [*ladder, ladder[-1]]
        system = server.requests[-1]["messages"][0]["content"]
        assert ('"facts"' in system and "validate against this JSON schema" in system) == (rung != "json_schema")
        assert cache.output_mode(server.base_url, "scripted") == rung
        assert extractor.outcomes["first_try"] == 2
        # a new process (no memory of this endpoint) on the same store sends no probe
        monkeypatch.setattr(llm, "_MODES", {})
        again = extractor_for(server, tmp_path, LLMCache(tmp_path / "llm_cache.sqlite"), request_retries=2)
        before = len(server.requests)
        again.extract([document("d2", chunk("c3", TEXT2 + " A third time."))])
        assert len(server.requests) - before == 1 == again.requests
        assert SERVER_MODES[mode].name == mode
    finally:
        server.close()


def test_probe_is_remembered_in_the_store_across_processes_against_scripted_http_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from stratagraph import llm

    server = ScriptedChatServer("llama_cpp").start()
    try:
        server.responder = echo_reply
        extractor_for(server, tmp_path, LLMCache(tmp_path / "c.sqlite")).extract([document("d1", chunk("c1", TEXT1))])
        assert len(server.requests) == 2
        monkeypatch.setattr(llm, "_MODES", {})  # what a new process starts with
        extractor_for(server, tmp_path, LLMCache(tmp_path / "c.sqlite")).extract([document("d2", chunk("c2", TEXT2))])
        assert len(server.requests) == 3
        assert (server.requests[-1].get("response_format") or {}).get("type") == "json_object"
    finally:
        server.close()


def test_concurrent_documents_probe_a_new_endpoint_once_against_scripted_http_server(tmp_path: Path) -> None:
    server = ScriptedChatServer("llama_cpp").start()
    try:
        server.responder = echo_reply
        server.delay = 0.05
        docs = [document(f"d{i}", chunk(f"c{i}", f"Document {i} text.")) for i in range(4)]
        extractor = extractor_for(server, tmp_path, llm_concurrency=4)
        results = extractor.extract(docs)
        assert all(len(r[0].facts) == 1 for r in results)
        kinds = [(b.get("response_format") or {}).get("type") for b in server.requests]
        assert kinds.count("json_schema") == 1 and len(kinds) == 5
    finally:
        server.close()


def test_messy_json_from_a_small_model_is_read_without_a_correction_against_scripted_http_server(
    tmp_path: Path,
) -> None:
    messy = (
        "{'facts': [{'description': 'Beta Labs will open a second laboratory in Oslo.', 'type': 'open',"
        " 'confidence': '7.5', 'entities': ['Beta Labs', 'Oslo'],},],"
        " 'entities': [{'name': 'Beta Labs', 'type': 'ORG'}, {'name': 'Oslo', 'type': 'LOCATION', 'confidence': '99'}],"
        " /* no relations */ 'relations': []}"
    )
    server = ScriptedChatServer("plain").start()
    try:
        server.responder = lambda body: Reply(content=messy)
        extractor = extractor_for(server, tmp_path)
        [[result]] = extractor.extract([document("d1", chunk("c1", TEXT2))])
        assert [f.description for f in result.facts] == ["Beta Labs will open a second laboratory in Oslo."]
        assert result.facts[0].confidence == 0.75 and {e.name for e in result.entities} == {"Beta Labs", "Oslo"}
        assert extractor.outcomes == {"first_try": 1, "corrected": 0, "empty": 0, "cached": 0, "too_long": 0}
    finally:
        server.close()


def test_deterministic_400_fails_at_once_with_the_servers_message_against_scripted_http_server(
    tmp_path: Path, chat_server: ScriptedChatServer
) -> None:
    chat_server.responder = lambda body: Reply.error(400, "max_tokens must be at most 4096")
    with pytest.raises(LLMUnavailable, match="rejected the request .HTTP 400.: max_tokens must be at most 4096"):
        extractor_for(chat_server, tmp_path, request_retries=3).extract([document("d1", chunk("c1", TEXT1))])
    assert len(chat_server.requests) == 1


def test_500_with_a_validation_body_is_not_retried_against_scripted_http_server(
    tmp_path: Path, chat_server: ScriptedChatServer
) -> None:
    body = "1 validation error:\n  {'type': 'missing', 'loc': ('body', 'messages'), 'msg': 'Field required'}"
    chat_server.responder = lambda b: Reply(status=500, content=body, server_error=True)
    with pytest.raises(LLMUnavailable, match="HTTP 500, not retried.*Field required"):
        extractor_for(chat_server, tmp_path, request_retries=3).extract([document("d1", chunk("c1", TEXT1))])
    assert len(chat_server.requests) == 1


def test_time_out_names_the_setting_that_raises_it_against_scripted_http_server(
    tmp_path: Path, chat_server: ScriptedChatServer
) -> None:
    chat_server.delay = 1.5
    chat_server.responder = echo_reply
    with pytest.raises(LLMUnavailable, match=r"did not answer within 0.5 s.*STRATAGRAPH_REQUEST_TIMEOUT"):
        extractor_for(chat_server, tmp_path, request_retries=0, request_timeout=0.5).extract(
            [document("d1", chunk("c1", TEXT1))]
        )


def test_refused_connection_raises_llm_unavailable_quickly(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    from stratagraph.config import Settings

    settings = Settings(home=tmp_path, llm_model="scripted", openai_base_url=url, request_retries=1,
                        request_timeout=2, llm_concurrency=2)  # fmt: skip
    model = get_chat_model(settings)
    assert model is not None
    extractor = LLMExtractor(model, settings)
    docs = [document(f"d{i}", chunk(f"c{i}a", TEXT1), chunk(f"c{i}b", TEXT2)) for i in range(3)]
    started = time.monotonic()
    with pytest.raises(LLMUnavailable) as info:
        extractor.extract(docs)
    assert time.monotonic() - started < 6
    message = str(info.value)
    assert "\n" not in message and url in message and "unreachable" in message


# --------------------------------------------------------------------------------------------- (g)
def test_concurrency_setting_bounds_requests_in_flight_against_scripted_http_server(
    tmp_path: Path, chat_server: ScriptedChatServer
) -> None:
    chat_server.responder = echo_reply
    chat_server.delay = 0.2
    extractor = extractor_for(chat_server, tmp_path, llm_concurrency=2)
    docs = [document(f"d{i}", chunk(f"c{i}", f"Document{i} states something.")) for i in range(4)]
    results = extractor.extract(docs)
    assert len(chat_server.requests) == 4
    assert chat_server.max_in_flight == 2
    assert [[c.chunk_id for c in r] for r in results] == [[f"c{i}"] for i in range(4)]
    assert [r[0].entities[0].name for r in results] == [f"Document{i}" for i in range(4)]


# --------------------------------------------------------------------------------------------- normalising
def test_reply_normalisation_dates_numbers_pronouns_and_missing_entities() -> None:
    from stratagraph.ingest.extractors.llm import LLMExtraction, to_chunk_extraction

    parsed = LLMExtraction.model_validate(
        {
            "facts": [
                {"description": "  We   hired 1,200 staff at Main Street in 2019. ", "type": "hire staff",
                 "confidence": -3, "entities": ["We", "1,200", "2019", "Main Street", "it", "main street"],
                 "attributes": [{"name": "Fiscal Year", "value": "FY2019"}, {"name": "", "value": "x"}]},
                {"description": "   ", "entities": ["Ghost"]},
            ],
            "entities": [
                {"name": "We", "type": "org", "confidence": 50},
                {"name": "2019", "type": "Date", "confidence": 100},
                {"name": "1,200", "type": "QUANTITY", "confidence": 100},
                {"name": "it", "type": "THING", "confidence": 100},
                {"name": "Main Street", "type": "location", "description": "", "confidence": 40},
                {"name": "MAIN STREET", "type": "ROAD", "description": "A street.", "confidence": 80,
                 "line_item": True},
            ],
            "relations": [
                {"subject": "We", "predicate": "located on", "object": "Main Street", "confidence": 30},
                {"subject": "We", "predicate": "located on", "object": "Main Street", "confidence": 5},
                {"subject": "We", "predicate": "founded_in", "object": "2019"},
                {"subject": "Acme", "predicate": "founded_in", "object": "2019"},  # adds no "Acme" entity
                {"subject": "Main Street", "predicate": "is", "object": "main street"},
                {"subject": "Personnel", "predicate": "", "object": "We"},
                {"subject": "Payroll", "predicate": "pays", "object": "We", "confidence": 4},
            ],
        }  # fmt: skip
    )
    text = "We hired 1,200 staff at Main Street in 2019."
    out = to_chunk_extraction(parsed, chunk("cx", text))
    assert [(e.name, e.type, e.description, e.confidence, e.line_item, e.coref, e.start) for e in out.entities] == [
        ("We", "ORG", "", 0.5, False, True, 0),
        ("Main Street", "LOCATION", "A street.", 0.8, True, False, text.index("Main Street")),
        ("Payroll", "THING", "", 0.4, False, False, None),
    ]
    [fact] = out.facts
    assert fact.description == "We hired 1,200 staff at Main Street in 2019."
    assert (fact.type, fact.confidence, fact.entities) == ("hire_staff", 0.0, ["We", "Main Street"])
    assert fact.attributes == {"fiscal_year": "FY2019", "date": "2019"}
    assert [(r.subject, r.predicate, r.object, r.confidence) for r in out.relations] == [
        ("We", "located_on", "Main Street", 1.0),
        ("Payroll", "pays", "We", 0.4),
    ]
