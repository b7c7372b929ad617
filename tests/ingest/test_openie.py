"""Importing HippoRAG's OpenIE output (stratagraph.ingest.openie) onto ingested documents, on the embedded
SQLite store and on a Bolt server: matching, n-ary facts with roles, resolution with the extractor's entities,
idempotence, --replace, deletion and re-ingest without orphans, and malformed files."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from stratagraph import Settings, StrataGraph
from stratagraph.ingest.openie import OpenIEError, read_openie
from stratagraph.schema import NodeLabel
from tests.conftest import canonical, cli_json, run_cli
from tests.graph_store.bolt import TEST_RETRY_SECONDS, bolt_target

DATA = Path(__file__).parent / "data"
CORPUS = DATA / "openie_corpus.jsonl"
SAMPLE = DATA / "openie_sample.json"
SOURCE = "openie:gpt-3.5"


@pytest.fixture(params=["sqlite", "bolt"])
def settings(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Settings]:
    home = tmp_path / "home"
    fields = {"json_title_field": "title", "json_text_field": "text", "extract_processes": 1}
    if request.param == "sqlite":
        yield Settings(home=home, **fields)
        return
    target, key = bolt_target(), str(tmp_path)
    yield Settings(
        home=home,
        graph="neo4j",
        neo4j_uri=target.uri,
        neo4j_user=target.user,
        neo4j_password=target.password,
        neo4j_database=target.database_for(key),
        neo4j_max_retry_time=TEST_RETRY_SECONDS,
        **fields,
    )
    target.drop(key)


def ingested(settings: Settings, tmp_path: Path, corpus: Path = CORPUS) -> StrataGraph:
    folder = tmp_path / "docs"
    folder.mkdir(exist_ok=True)
    shutil.copy(corpus, folder / "corpus.jsonl")
    sg = StrataGraph(settings)
    assert sg.ingest([folder / "corpus.jsonl"], base=folder).failed == 0
    return sg


def doc_of(sg: StrataGraph, title: str) -> str:
    return next(d.id for d in sg.graph.nodes_by_label(NodeLabel.DOCUMENT) if d.props["title"] == title)


def no_orphans(export: dict) -> None:
    ids = {n["id"] for n in export["nodes"]}
    assert all(e["src"] in ids and e["dst"] in ids for e in export["edges"])
    assert all(n["doc_ids"] for n in export["nodes"]) and all(e["doc_ids"] for e in export["edges"])


def fact_rows(sg: StrataGraph) -> set[str]:
    return set(sg.vectors.ids("facts"))


def test_import_puts_llm_facts_beside_the_extractors(settings: Settings, tmp_path: Path) -> None:
    with ingested(settings, tmp_path) as sg:
        spacy_facts = {n.id for n in sg.graph.nodes_by_label(NodeLabel.FACT)}
        report = sg.import_openie(SAMPLE)
        assert (report.passages, report.matched, report.documents, report.skipped_triples) == (5, 4, 4, 1)
        assert report.unmatched == [{"index": 3, "title": "Aldo Ferrant", "reason": "no stored document has this title"}]
        assert report.facts == 10 and report.removed_facts == 0
        facts = sg.graph.nodes_by_label(NodeLabel.FACT)
        imported = {n.props["description"]: n for n in facts if n.props.get("source") == SOURCE}
        assert len(imported) == 10
        assert spacy_facts <= {n.id for n in facts}  # "both": the extractor's facts stay
        mira = doc_of(sg, "Mira Tolland")
        born = imported["Mira Tolland born in Calder Bay"]
        assert born.doc_ids == [mira]
        assert born.props["predicate"] == "born in" and born.props["roles"] == {"subject": "Mira Tolland", "object": "Calder Bay"}
        chunk = sg.graph.get_node(born.props["chunk_ids"][0])
        assert chunk is not None and chunk.props["doc_id"] == mira
        text = chunk.props["text"]
        assert [(a["role"], a["text"]) for a in born.props["arguments"]] == [("subject", "Mira Tolland"), ("object", "Calder Bay")]
        assert all(text[a["start"] : a["end"]] == a["text"] for a in born.props["arguments"])
        # the subject and the object are the extractor's entities, resolved to the same nodes
        members = sorted(e.src for e in sg.graph.get_edges(dst=born.id, types=["IN_FACT"]))
        names = {n.id: n.props["name"] for n in sg.graph.get_nodes(members)}
        assert sorted(names.values()) == ["Calder Bay", "Mira Tolland"]
        person = next(i for i, n in names.items() if n == "Mira Tolland")
        part = sg.graph.get_node(person).props["by_doc"][mira]
        assert part["openie_names"] == {"Mira Tolland": 1} and part["names"]["Mira Tolland"] >= 2  # spaCy's + the import's
        assert [e.dst for e in sg.graph.get_edges(src=born.id, types=["SUPPORTED_BY"])] == [chunk.id]
        mentions = [e for e in sg.graph.get_edges(src=chunk.id, dst=person, types=["MENTIONS"])]
        assert sorted(e.key for e in mentions) == ["", "openie"]
        related = [e for e in sg.graph.get_edges(src=person, types=["RELATED"]) if e.props.get("source") == SOURCE]
        assert {e.props["predicate"] for e in related} >= {"born in", "studied at"}
        # one entity across documents: the score's writer in Quiet Harbour is the composer of her own page
        harbour = imported["Quiet Harbour score written by Mira Tolland"]
        assert person in {e.src for e in sg.graph.get_edges(dst=harbour.id, types=["IN_FACT"])}
        assert set(fact_rows(sg)) >= {n.id for n in imported.values()}
        no_orphans(sg.export())


def test_importing_twice_changes_nothing_and_replace_leaves_the_llm_graph_alone(settings: Settings, tmp_path: Path) -> None:
    with ingested(settings, tmp_path) as sg:
        sg.import_openie(SAMPLE)
        once, rows = canonical(sg.export()), fact_rows(sg)
        assert sg.import_openie(SAMPLE).facts == 10
        assert canonical(sg.export()) == once and fact_rows(sg) == rows

        # an entity only the extractor found in Quiet Harbour has its own page, another document of the file
        harbour, marlow = doc_of(sg, "Quiet Harbour"), doc_of(sg, "Ines Marlow")
        page = [e for e in sg.graph.get_edges(dst=marlow, types=["DESCRIBED_BY"])]
        assert [(n.props["name"], n.doc_ids) for n in sg.graph.get_nodes([e.src for e in page])] == [("Ines Marlow", [harbour])]

        report = sg.import_openie(SAMPLE, replace=True)
        assert report.removed_facts > 10  # the extractor's facts and the first import's
        assert not sg.graph.get_nodes([e.src for e in page])  # gone with its edge to the other document's page
        export = sg.export()
        no_orphans(export)
        facts = [n for n in export["nodes"] if n["label"] == "Fact"]
        assert facts and all(n["props"].get("source") == SOURCE for n in facts)
        knowledge = [e for e in export["edges"] if e["type"] in ("MENTIONS", "IN_FACT", "SUPPORTED_BY", "RELATED")]
        assert knowledge and all(e["props"].get("source") == SOURCE for e in knowledge)
        for n in export["nodes"]:
            if n["label"] == "Entity":
                for part in n["props"]["by_doc"].values():
                    assert part["names"] == part["openie_names"]  # nothing of spaCy's left
        assert fact_rows(sg) == {n["id"] for n in facts}
        replaced = canonical(export)
        sg.import_openie(SAMPLE, replace=True)
        assert canonical(sg.export()) == replaced


def test_delete_and_reingest_remove_the_import_without_orphans(settings: Settings, tmp_path: Path) -> None:
    with ingested(settings, tmp_path) as sg:
        sg.import_openie(SAMPLE)
        harbour = doc_of(sg, "Quiet Harbour")
        sg.delete(harbour)
        export = sg.export()
        no_orphans(export)
        assert not [n for n in export["nodes"] if harbour in n["doc_ids"]]
        assert not [e for e in export["edges"] if harbour in e["doc_ids"]]
        names = {n["props"]["name"] for n in export["nodes"] if n["label"] == "Entity"}
        assert "Ines Marlow" not in names and "Mira Tolland" in names
        assert not sg.vectors.ids("facts", {"doc_id": harbour})

        # a changed document replaces its old version, the import with it
        changed = tmp_path / "changed.jsonl"
        lines = CORPUS.read_text(encoding="utf-8").splitlines()
        lines[0] = json.dumps({"title": "Mira Tolland", "text": "Mira Tolland was a Dunmorish pianist."})
        changed.write_text("\n".join(lines) + "\n", encoding="utf-8")
        shutil.copy(changed, tmp_path / "docs" / "corpus.jsonl")
        assert sg.ingest([tmp_path / "docs" / "corpus.jsonl"], base=tmp_path / "docs").failed == 0
        mira = doc_of(sg, "Mira Tolland")
        facts = sg.graph.nodes_by_label(NodeLabel.FACT, mira)
        assert facts and not [n for n in facts if n.props.get("source")]
        assert not [i for i in sg.vectors.ids("facts", {"doc_id": mira}) if i.startswith("fact:openie:")]
        no_orphans(sg.export())
        # the ingest brought Quiet Harbour back; the import now finds Mira Tolland's text changed
        report = sg.import_openie(SAMPLE)
        assert {(u["title"], u["reason"]) for u in report.unmatched} == {
            ("Mira Tolland", "a document has this title but another text"),
            ("Aldo Ferrant", "no stored document has this title"),
        }


BAD = {
    "not json": "{nope",
    "no docs": json.dumps({"passages": []}),
    "passage not an object": json.dumps({"docs": ["Mira Tolland"]}),
    "no title": json.dumps({"docs": [{"text": "x", "extracted_entities": [], "extracted_triples": []}]}),
    "entities not strings": json.dumps({"docs": [{"title": "a", "text": "b", "extracted_entities": [1]}]}),
    "triples not lists": json.dumps({"docs": [{"title": "a", "text": "b", "extracted_triples": "a b c"}]}),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_malformed_files_are_refused_naming_the_file(case: str, tmp_path: Path) -> None:
    path = tmp_path / f"{case.replace(' ', '_')}.json"
    path.write_text(BAD[case], encoding="utf-8")
    with pytest.raises(OpenIEError) as info:
        read_openie(path)
    assert str(path) in str(info.value)


def test_passage_field_alone_gives_title_and_text(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    item = {"passage": "Calder Bay\nA port city.", "extracted_entities": ["Calder Bay"],
            "extracted_triples": [["Calder Bay", "is", "port city"], ["x", "y"], ["a", "", "b"]]}  # fmt: skip
    path.write_text(json.dumps([item]), encoding="utf-8")
    passages, skipped = read_openie(path)
    assert (passages[0].title, passages[0].text, passages[0].triples, skipped) == (
        "Calder Bay", "A port city.", [("Calder Bay", "is", "port city")], 2,
    )


def test_cli_import_is_idempotent_and_a_bad_file_leaves_the_store(tmp_path: Path) -> None:
    store = tmp_path / "store"
    docs = tmp_path / "docs"
    docs.mkdir()
    shutil.copy(CORPUS, docs / "corpus.jsonl")
    code, _, err = cli_json("--store", str(store), "ingest", str(docs / "corpus.jsonl"), "--base", str(docs),
                            "--title-field", "title", "--text-field", "text")  # fmt: skip
    assert code == 0, err
    code, report, err = cli_json("--store", str(store), "import", "openie", str(SAMPLE))
    assert code == 1 and report["matched"] == 4 and report["facts"] == 10  # one passage matched nothing
    assert "Aldo Ferrant" in err
    first = run_cli("--store", str(store), "export", "--json").stdout
    assert cli_json("--store", str(store), "import", "openie", str(SAMPLE))[1]["facts"] == 10
    assert run_cli("--store", str(store), "export", "--json").stdout == first
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"docs": [{"title": "Calder Bay", "text": "x", "extracted_triples": [1]}]}), encoding="utf-8")
    code, out, err = cli_json("--store", str(store), "import", "openie", str(bad))
    assert code == 1 and str(bad) in out["error"] and "extracted_triples" in out["error"]
    assert run_cli("--store", str(store), "export", "--json").stdout == first


def test_eval_runs_each_graph_in_a_store_of_its_own(tmp_path: Path) -> None:
    from stratagraph.eval.datasets import DatasetError, load_dataset
    from stratagraph.eval.retrieval import READY_MARKER, ensure_store, evaluate

    folder = tmp_path / "tiny"
    folder.mkdir()
    shutil.copy(CORPUS, folder / "corpus.jsonl")
    questions = [{"id": "q1", "question": "Where was the composer of Quiet Harbour's score born?", "answers": ["Calder Bay"],
                  "gold_titles": ["Quiet Harbour", "Mira Tolland"]}]  # fmt: skip
    (folder / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions), encoding="utf-8")
    settings = Settings(home=tmp_path / "store", extract_processes=1)
    dataset = load_dataset(str(folder))
    with pytest.raises(DatasetError, match="no OpenIE file"):
        ensure_store(dataset, settings, graph="openie")
    shutil.copy(SAMPLE, folder / "openie_gpt35.json")
    homes = {g: Path(ensure_store(dataset, settings, graph=g).home) for g in ("extractor", "openie", "both")}
    assert len(set(homes.values())) == 3 and all((h / READY_MARKER).is_file() for h in homes.values())
    sources = {}
    for graph, home in homes.items():
        with StrataGraph(Settings(home=home)) as sg:
            sources[graph] = {n.props.get("source") for n in sg.graph.nodes_by_label(NodeLabel.FACT)}
    assert sources == {"extractor": {None}, "openie": {SOURCE}, "both": {None, SOURCE}}
    marker = json.loads((homes["openie"] / READY_MARKER).read_text(encoding="utf-8"))
    assert marker["graph"] == "openie" and marker["import"]["facts"] == 10
    written = (homes["openie"] / READY_MARKER).stat().st_mtime_ns
    report = evaluate(str(folder), ["ppr"], [2], settings, graph="openie")
    assert report["questions"] == 1 and set(report["results"]) == {"ppr"}
    assert (homes["openie"] / READY_MARKER).stat().st_mtime_ns == written  # the store is reused, not imported again
