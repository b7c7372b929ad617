"""A synthetic store of a given number of facts, deterministic by seed, written through the store's write path.

    .venv/bin/python benchmarks/synth.py --facts 20000 --store /tmp/synth-20k [--seed 0] [--graph sqlite]

The text is not fluent, the shapes are the real stores' (2wiki-101: ~6k passages, ~19k facts, ~33k entities):

* documents (one per ``facts / 12``) of 1-3 sections of 1-3 chunks each (``HAS_SECTION``, ``HAS_CHUNK``,
  ``NEXT``), about 3 facts per chunk;
* entities drawn from a Zipf (power-law, exponent 0.75) popularity over ``3 * facts`` names, so a few are hubs
  in hundreds to thousands of facts and most (about two thirds) in one; each n-ary fact (arity 2 or 3) joins its entities
  (``IN_FACT``) and is ``SUPPORTED_BY`` its chunk, which ``MENTIONS`` them (weight: the count); a binary fact is
  also a ``RELATED`` triple;
* document ``i`` is the page of entity ``i`` (its title is the name: ``DESCRIBED_BY``), so the hubs have pages;
* ``CITES`` document -> document (1-2 per document, power-law targets) and ``SIMILAR`` chunk -> chunk (2 per
  chunk, to other documents);
* chunk vectors and the vectors of the entities that have a page (the ``facts / 12`` most popular, which the
  question linker finds by name): random unit vectors (deterministic by seed) in the embedder's dimension, so
  dense search costs what it costs without embedding a million texts; the other entities have none, which
  keeps building 200k facts within 10 minutes on 2 cores (Chroma's inserts were most of the time).

Documents are written in batches with ``GraphStore.replace_documents`` (vectors first, as the ingest does), then
the cross-document links with ``GraphStore.write_batch``, as ``ingest/linking.py`` writes them. Prints one JSON
line: counts, seconds, facts written per second.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
from collections import Counter  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

SYLLABLES = ["ka", "lo", "mi", "ren", "dor", "sa", "vel", "tu", "ni", "bra", "quo", "zem", "fi", "gal", "hen", "ost"]
PREDICATES = ["founded", "directed", "married", "born_in", "located_in", "member_of", "wrote", "succeeded"]
TYPES = ["PERSON", "ORG", "GPE", "WORK_OF_ART", "EVENT"]
DIM = 384  # all-MiniLM-L6-v2
BATCH_DOCS = 500
ENTITY_EXPONENT = 0.75  # over 3 * facts names: ~1.2 entities per fact, the largest hub in ~2-3% of the facts
READY = "synth.json"


def name(i: int) -> str:
    """A deterministic two-word name for entity ``i`` (distinct for distinct ``i``)."""
    words, n = [], (i * 2654435761) % 16**6  # odd multiplier: a bijection of 0..16**6-1 that scatters neighbours
    for _ in range(2):
        word = ""
        for _ in range(3):
            word += SYLLABLES[n % len(SYLLABLES)]
            n //= len(SYLLABLES)
        words.append(word.capitalize())
    return f"{words[0]} {words[1]}" + (f" {i // 16**6}" if i >= 16**6 else "")


@dataclass
class Plan:
    """What one seed and size draw: per chunk its facts; per fact its entities and predicate."""

    facts: int
    seed: int
    docs: int = 0
    chunk_ids: list[str] = field(default_factory=list)
    chunk_doc: list[int] = field(default_factory=list)
    chunk_facts: list[list[int]] = field(default_factory=list)
    fact_entities: list[list[int]] = field(default_factory=list)
    fact_predicate: list[int] = field(default_factory=list)
    sections: list[tuple[int, str, str]] = field(default_factory=list)  # (doc, section id, parent id)
    chunk_section: list[str] = field(default_factory=list)


def zipf(rng: np.random.Generator, n: int, size: int, exponent: float = 1.1) -> np.ndarray:
    weights = 1.0 / np.arange(1, n + 1) ** exponent
    cdf = np.cumsum(weights / weights.sum())
    return np.minimum(np.searchsorted(cdf, rng.random(size)), n - 1)


def doc_id(d: int) -> str:
    return f"synth/d{d:07d}.md"


def draw(facts: int, seed: int) -> Plan:
    rng = np.random.default_rng(seed)
    plan = Plan(facts, seed, docs=max(1, facts // 12))
    for d in range(plan.docs):
        for s in range(int(rng.integers(1, 4))):
            sid = f"{doc_id(d)}::s{s}"
            plan.sections.append((d, sid, doc_id(d)))
            for c in range(int(rng.integers(1, 4))):
                plan.chunk_ids.append(f"{doc_id(d)}#{s + 1}#{c}")
                plan.chunk_doc.append(d)
                plan.chunk_section.append(sid)
    where = rng.integers(0, len(plan.chunk_ids), size=facts)
    plan.chunk_facts = [[] for _ in plan.chunk_ids]
    for f, c in enumerate(where):
        plan.chunk_facts[int(c)].append(f)
    arity = np.where(rng.random(facts) < 0.7, 2, 3)
    picks = zipf(rng, 3 * facts, int(arity.sum()), ENTITY_EXPONENT)
    at = 0
    for a in arity:
        ents = list(dict.fromkeys(int(e) for e in picks[at : at + a]))
        plan.fact_entities.append(ents if len(ents) > 1 else [ents[0], (ents[0] + 1) % (3 * facts)])
        at += a
    plan.fact_predicate = [int(p) for p in rng.integers(0, len(PREDICATES), size=facts)]
    return plan


def unit_vectors(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.standard_normal((n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def ent_id(e: int) -> str:
    return f"ent:{name(e).lower()}"


def document_version(plan: Plan, d: int, chunks: list[int]):  # noqa: ANN201
    """The nodes and edges of document ``d`` (structure, text, knowledge), as the ingest would write them."""
    from stratagraph.graph_store import DocumentVersion
    from stratagraph.schema import Edge, EdgeType, Node, NodeLabel

    did, docs = doc_id(d), [doc_id(d)]
    nodes = [Node(id=did, label=NodeLabel.DOCUMENT, doc_ids=docs,
                  props={"title": name(d), "source": did, "format": "md", "content_hash": f"synth-{plan.seed}-{d}", "metadata": {}})]  # fmt: skip
    edges: list[Edge] = []
    secs = [(sid, parent) for dd, sid, parent in plan.sections if dd == d]
    for order, (sid, parent) in enumerate(secs):
        nodes.append(Node(id=sid, label=NodeLabel.SECTION, doc_ids=docs,
                          props={"doc_id": did, "title": f"Part {order + 1}", "level": 1, "order": order}))  # fmt: skip
        edges.append(Edge(type=EdgeType.HAS_SECTION, src=parent, dst=sid, doc_ids=docs))
    entities: dict[int, None] = {}
    for prev, c in zip([None, *chunks], chunks, strict=False):
        cid = plan.chunk_ids[c]
        mentions: Counter[int] = Counter()
        sentences = []
        for f in plan.chunk_facts[c]:
            ents = plan.fact_entities[f]
            pred = PREDICATES[plan.fact_predicate[f]]
            text = f"{name(ents[0])} {pred.replace('_', ' ')} {' and '.join(name(e) for e in ents[1:])}."
            sentences.append(text)
            fid = f"fact:synth-{plan.seed}-{f}"
            nodes.append(Node(id=fid, label=NodeLabel.FACT, doc_ids=docs, props={"description": text, "type": pred, "confidence": 0.9}))
            edges.append(Edge(type=EdgeType.SUPPORTED_BY, src=fid, dst=cid, doc_ids=docs))
            for e in ents:
                edges.append(Edge(type=EdgeType.IN_FACT, src=ent_id(e), dst=fid, key=str(ents.index(e)), doc_ids=docs))
                mentions[e] += 1
                entities[e] = None
            if len(ents) == 2:
                edges.append(Edge(type=EdgeType.RELATED, src=ent_id(ents[0]), dst=ent_id(ents[1]), key=pred, doc_ids=docs))
        sid = plan.chunk_section[c]
        nodes.append(Node(id=cid, label=NodeLabel.CHUNK, doc_ids=docs,
                          props={"doc_id": did, "section_id": sid, "text": " ".join(sentences) or f"About {name(d)}.",
                                 "heading_path": [name(d)]}))  # fmt: skip
        edges.append(Edge(type=EdgeType.HAS_CHUNK, src=sid, dst=cid, doc_ids=docs))
        if prev is not None:
            edges.append(Edge(type=EdgeType.NEXT, src=plan.chunk_ids[prev], dst=cid, doc_ids=docs))
        edges += [Edge(type=EdgeType.MENTIONS, src=cid, dst=ent_id(e), weight=float(n), doc_ids=docs) for e, n in sorted(mentions.items())]
    nodes += [Node(id=ent_id(e), label=NodeLabel.ENTITY, doc_ids=docs, props={"name": name(e), "type": TYPES[e % len(TYPES)]})
              for e in entities]  # fmt: skip
    return DocumentVersion(doc_id=did, nodes=nodes, edges=edges), list(entities)


def write(plan: Plan, graph, vectors) -> tuple[int, dict[str, float]]:  # noqa: ANN001
    """Every document in batches (vectors, then the graph versions), then the links; returns how many links
    and the seconds spent writing vectors and graph."""
    rng = np.random.default_rng(plan.seed + 1)
    by_doc: dict[int, list[int]] = {}
    for c, d in enumerate(plan.chunk_doc):
        by_doc.setdefault(d, []).append(c)
    seen: set[int] = set()
    timer = {"vectors_s": 0.0, "graph_s": 0.0}
    for start in range(0, plan.docs, BATCH_DOCS):
        versions, new_ents = [], []
        for d in range(start, min(start + BATCH_DOCS, plan.docs)):
            version, ents = document_version(plan, d, by_doc.get(d, []))
            versions.append(version)
            new_ents += [e for e in ents if e not in seen]
            seen.update(ents)
        t0 = time.perf_counter()
        chunk_ids = [n.id for v in versions for n in v.nodes if "#" in n.id]
        vectors.upsert("chunks", chunk_ids, None, [{"doc_id": c.split("#")[0]} for c in chunk_ids], embeddings=unit_vectors(rng, len(chunk_ids)))
        new_ents = sorted(e for e in set(new_ents) if e < plan.docs)  # the paged (most popular) entities only
        if new_ents:
            vectors.upsert("entities", [name(e).lower() for e in new_ents], None,
                           [{"entity_id": ent_id(e), "name": name(e)} for e in new_ents], embeddings=unit_vectors(rng, len(new_ents)))  # fmt: skip
        t1 = time.perf_counter()
        graph.replace_documents(versions)
        timer["vectors_s"] += t1 - t0
        timer["graph_s"] += time.perf_counter() - t1
    t2 = time.perf_counter()
    links = write_links(plan, graph, np.random.default_rng(plan.seed + 2), seen)
    timer["graph_s"] += time.perf_counter() - t2
    return links, {k: round(v, 1) for k, v in timer.items()}


def write_links(plan: Plan, graph, rng: np.random.Generator, entities: set[int]) -> int:  # noqa: ANN001
    """DESCRIBED_BY (entity d -> document d, for the entities written), CITES and SIMILAR, in batches."""
    from stratagraph.schema import Edge, EdgeType

    links = [Edge(type=EdgeType.DESCRIBED_BY, src=ent_id(d), dst=doc_id(d), doc_ids=[doc_id(d)]) for d in range(plan.docs) if d in entities]
    targets = zipf(rng, plan.docs, 2 * plan.docs)
    for d in range(plan.docs):
        for t in {int(x) for x in targets[2 * d : 2 * d + 1 + int(d % 2)]} - {d}:
            links.append(Edge(type=EdgeType.CITES, src=doc_id(d), dst=doc_id(t), doc_ids=[doc_id(d)]))
    n = len(plan.chunk_ids)
    others = rng.integers(0, n, size=(n, 2))
    scores = rng.uniform(0.55, 0.9, size=(n, 2))
    for c in range(n):
        for o, s in zip(others[c], scores[c], strict=True):
            if plan.chunk_doc[int(o)] != plan.chunk_doc[c]:
                links.append(Edge(type=EdgeType.SIMILAR, src=plan.chunk_ids[c], dst=plan.chunk_ids[int(o)], weight=round(float(s), 4),
                                  doc_ids=[doc_id(plan.chunk_doc[c])]))  # fmt: skip
    for start in range(0, len(links), 20_000):
        graph.write_batch(edges=links[start : start + 20_000])
    return len(links)


def build(facts: int, home: Path, seed: int = 0, graph_backend: str = "sqlite") -> dict:
    """The store of ``facts`` facts under ``home`` (reused when ``home/synth.json`` says it is complete)."""
    from stratagraph.config import Settings
    from stratagraph.services import Services

    marker = home / READY
    if marker.is_file():
        return json.loads(marker.read_text(encoding="utf-8"))
    started = time.perf_counter()
    plan = draw(facts, seed)
    svc = Services(Settings(home=home, graph=graph_backend))
    try:
        links, timer = write(plan, svc.graph, svc.vectors)
        counts = svc.graph.counts()
    finally:
        svc.close()
    seconds = time.perf_counter() - started
    size = sum(p.stat().st_size for p in home.rglob("*") if p.is_file())
    info = {"facts": facts, "seed": seed, "nodes": counts.nodes, "edges": counts.edges, "links": links, **timer,
            "seconds": round(seconds, 1), "facts_per_s": round(facts / seconds), "store_mb": round(size / 2**20, 1)}  # fmt: skip
    marker.write_text(json.dumps(info), encoding="utf-8")
    return info


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, required=True)
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--graph", default="sqlite")
    args = parser.parse_args()
    print(json.dumps(build(args.facts, args.store, args.seed, args.graph)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
