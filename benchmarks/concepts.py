"""Issue 24: the concept layer's coverage, a sample to judge by hand, IS_A depth, and its ingest cost.

    .venv/bin/python benchmarks/concepts.py coverage examples benchmarks/data/encyclopedia/docs ... [--sample 50]
    .venv/bin/python benchmarks/concepts.py timing [--corpus ../shared/data/2wiki-101/corpus.jsonl] [--limit 2000] [--rounds 2]
    .venv/bin/python benchmarks/concepts.py components [--corpus ...] [--limit 1000] [--rounds 3]

``coverage`` ingests each corpus (a folder or a JSONL file) into a fresh store with the concept layer on and
prints, per corpus: entities, the share with a BELONGS_TO (all, and named entities without the line items
of tables), concepts, IS_A edges and depth (the longest IS_A chain above a concept; mean and max), SYNONYM
edges; then per corpus a seeded sample of ``--sample`` BELONGS_TO edges with text around a mention of the
entity, and of the entity SYNONYM edges, for judging by hand.

``timing`` ingests the same corpus into fresh stores with ``STRATAGRAPH_CONCEPT_LAYER`` off and on, in
alternating fresh subprocesses (off, on, off, on, ...), timing only the ``ingest`` call after the spaCy
model and the embedder are loaded, with one extraction process so that the process's CPU time (user +
system, every thread) covers all the work: on a shared machine the CPU time is the steadier measure. Prints
each run and the medians' overhead, wall-clock and CPU.

``components`` measures the layer's own CPU cost in one process on passages parsed once (the extractor's
rules without and with the kind rules, then synonym fusion and concept records per passage, best of
``--rounds``): the part of the ingest the layer adds, free of the noise between two whole ingests.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = REPO.parent / "shared" / "data" / "2wiki-101" / "corpus.jsonl"


def _limited(corpus: Path, limit: int | None, workdir: Path) -> Path:
    if not limit or corpus.is_dir():
        return corpus
    out = workdir / "corpus.jsonl"
    with corpus.open(encoding="utf-8") as src, out.open("w", encoding="utf-8") as dst:
        for i, line in enumerate(src):
            if i >= limit:
                break
            dst.write(line)
    return out


def _depths(isa: dict[str, list[str]]) -> dict[str, int]:
    memo: dict[str, int] = {}

    def depth(node: str, path: frozenset[str]) -> int:
        if node in memo:
            return memo[node]
        parents = [p for p in isa.get(node, []) if p not in path]
        d = 0 if not parents else 1 + max(depth(p, path | {node}) for p in parents)
        memo[node] = d
        return d

    return {n: depth(n, frozenset()) for n in isa}


def coverage(corpora: list[str], sample: int, seed: int) -> None:
    from stratagraph import Settings, StrataGraph
    from stratagraph.schema import EdgeType, NodeLabel

    rows = []
    pool = []
    synonym_pool: dict[str, list[tuple[str, str]]] = {}
    for corpus in corpora:
        path = Path(corpus).resolve()
        with tempfile.TemporaryDirectory() as tmp, StrataGraph(Settings(home=Path(tmp) / "store")) as sg:
            base = path if path.is_dir() else path.parent
            result = sg.ingest([path], base=base)
            g = sg.graph
            entities = g.nodes_by_label(NodeLabel.ENTITY)
            concepts = g.nodes_by_label(NodeLabel.CONCEPT)
            belongs = g.get_edges(types=[EdgeType.BELONGS_TO])
            isa_edges = g.get_edges(types=[EdgeType.IS_A])
            synonyms = g.get_edges(types=[EdgeType.SYNONYM])
            typed = {e.src for e in belongs}
            named = [n for n in entities if "@" not in n.id]
            isa: dict[str, list[str]] = {}
            for e in isa_edges:
                isa.setdefault(e.src, []).append(e.dst)
            depth = _depths({c.id: isa.get(c.id, []) for c in concepts})
            ranked = sorted(depth.values())
            rows.append({
                "corpus": corpus, "documents": len(result.documents), "failed": result.failed,
                "entities": len(entities), "with_belongs_to": len(typed & {n.id for n in entities}),
                "coverage": round(len(typed) / max(len(entities), 1), 3),
                "named_entities": len(named), "named_with_belongs_to": len(typed & {n.id for n in named}),
                "named_coverage": round(len(typed & {n.id for n in named}) / max(len(named), 1), 3),
                "concepts": len(concepts), "belongs_to": len(belongs), "is_a": len(isa_edges),
                "synonym": len(synonyms),
                "is_a_depth_max": ranked[-1] if ranked else 0,
                "is_a_depth_mean": round(statistics.fmean(ranked), 2) if ranked else 0.0,
                "entity_synonym_edges": sum(1 for e in synonyms if e.src.startswith("ent:")),
            })  # fmt: skip
            names = {n.id: n.props.get("name", n.id) for n in [*entities, *concepts]}
            synonym_pool[corpus] = [
                (str(names.get(e.src)), str(names.get(e.dst))) for e in synonyms if e.src.startswith("ent:")
            ]
            for e in belongs:
                chunks = [x.src for x in g.get_edges(dst=e.src, types=[EdgeType.MENTIONS])][:1]
                text = ""
                if chunks:
                    node = g.get_node(chunks[0])
                    body = str(node.props.get("text", "")) if node else ""
                    name = str(names.get(e.src, ""))
                    at = body.find(name)
                    text = body[max(0, at - 90) : at + len(name) + 110] if at >= 0 else body[:200]
                pool.append((corpus, names.get(e.src), e.src, names.get(e.dst), " ".join(text.split())))
    print(json.dumps(rows, indent=1))
    for corpus in corpora:
        mine = [p for p in pool if p[0] == corpus]
        random.Random(seed).shuffle(mine)
        label = Path(corpus).parent.name if Path(corpus).name == "docs" else Path(corpus).name
        print(f"\n[{label}] sample of {min(sample, len(mine))} BELONGS_TO edges (seed {seed}) of {len(mine)}:")
        for i, (_, name, eid, concept, text) in enumerate(sorted(mine[:sample], key=lambda p: p[2]), 1):
            print(f"{i:2}. {name!r} -> {concept!r}   ({eid})\n      ...{text}...")
    for corpus, pairs in synonym_pool.items():
        random.Random(seed).shuffle(pairs)
        print(f"\n[{Path(corpus).name}] sample of {min(sample, len(pairs))} entity SYNONYM edges of {len(pairs)}:")
        for i, (a, b) in enumerate(sorted(pairs[:sample]), 1):
            print(f"{i:2}. {a!r} ~ {b!r}")


def _cpu_seconds() -> float:
    import resource

    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _phase(corpus: str, on: bool) -> None:
    os.environ["STRATAGRAPH_CONCEPT_LAYER"] = "true" if on else "false"
    os.environ["STRATAGRAPH_EXTRACT_PROCESSES"] = "1"  # every cycle in this process: its CPU time is the measure
    from stratagraph import Settings, StrataGraph
    from stratagraph.embeddings import embed_texts
    from stratagraph.text.nlp import load_nlp

    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(home=Path(tmp) / "store")
        assert settings.concept_layer is on
        with StrataGraph(settings) as sg:
            load_nlp()("Warm up the parser.")
            embed_texts(sg.services.embeddings, ["warm up the embedder"])
            if on:
                from stratagraph.text.wordnet import wordnet

                wordnet()  # counted below only if it was not loaded: load it here as the parser is
            path = Path(corpus)
            t0, c0 = time.perf_counter(), _cpu_seconds()
            result = sg.ingest([path], base=path.parent)
            seconds, cpu = time.perf_counter() - t0, _cpu_seconds() - c0
            c = sg.stats()
    print(json.dumps({"concept_layer": on, "seconds": round(seconds, 2), "cpu_seconds": round(cpu, 2),
                      "failed": result.failed,
                      "entities": c.nodes["Entity"], "concepts": c.nodes["Concept"],
                      "belongs_to": c.edges["BELONGS_TO"]}))  # fmt: skip


def timing(corpus: Path, limit: int | None, rounds: int) -> None:
    if not corpus.exists():
        print(json.dumps({"skipped": f"{corpus} not found"}))
        return
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        data = _limited(corpus, limit, Path(tmp))
        for _ in range(rounds):
            for on in (False, True):
                out = subprocess.run(
                    [sys.executable, __file__, "_phase", str(data), "on" if on else "off"],
                    capture_output=True, text=True, check=True, cwd=REPO,
                )  # fmt: skip
                runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
                print(json.dumps(runs[-1]), flush=True)
    out: dict = {"corpus": str(corpus), "limit": limit, "rounds": rounds, "cpus": os.cpu_count(),
                 "load_average": os.getloadavg()}  # fmt: skip
    for what in ("seconds", "cpu_seconds"):
        off = statistics.median(r[what] for r in runs if not r["concept_layer"])
        on_ = statistics.median(r[what] for r in runs if r["concept_layer"])
        out[what] = {"median_off": off, "median_on": on_, "overhead": round(on_ / off - 1, 3)}
    print(json.dumps(out))


def components(corpus: Path, limit: int, rounds: int) -> None:
    """The concept layer's own CPU cost on parsed passages, interleaved in one process (so the machine's load
    hits both sides alike): the extractor's rules without and with the kind rules, and the resolve step's
    concept work (synonym fusion and concept records, WordNet on) per document."""
    import numpy as np

    from stratagraph.ingest.concepts import concept_records, fuse_aliases, synonym_pairs
    from stratagraph.ingest.extractors.base import ChunkInput
    from stratagraph.ingest.extractors.spacy_nlp import _analyse_chunk
    from stratagraph.ingest.resolution import resolve_document
    from stratagraph.text.nlp import load_nlp
    from stratagraph.text.wordnet import wordnet

    rows = [json.loads(line) for line, _ in zip(corpus.open(encoding="utf-8"), range(limit))]
    chunks = [ChunkInput(chunk_id=f"d{i}#1#0", text=r["text"], section_id=f"d{i}#1") for i, r in enumerate(rows)]
    docs = list(load_nlp().pipe([c.text for c in chunks], batch_size=64))
    lexicon = wordnet()
    best = {"rules_without_kinds": 1e9, "rules_with_kinds": 1e9, "concept_records_and_fusion": 1e9}
    rng = np.random.default_rng(0)
    for _ in range(rounds):
        for on in (False, True):
            t0 = time.process_time()
            out = [_analyse_chunk(d, c, on) for d, c in zip(docs, chunks, strict=True)]
            key = "rules_with_kinds" if on else "rules_without_kinds"
            best[key] = min(best[key], time.process_time() - t0)
        t0 = time.process_time()
        for ex, c in zip(out, chunks, strict=True):
            ents = resolve_document({}, [ex], {c.chunk_id: c.section_id})
            entity_of = {k: "ent:" + k for k in ents.contributions}
            vecs = {k: v / np.linalg.norm(v) for k, v in ((k, rng.normal(size=384)) for k in ents.contributions)}
            pairs = synonym_pairs([ex], ents, entity_of, vecs, 0.0)
            fuse_aliases(ents, pairs)
            concept_records(c.chunk_id.split("#")[0], ents, entity_of, wordnet=lexicon, synonyms=[(a, b) for _, _, a, b in pairs])
        best["concept_records_and_fusion"] = min(best["concept_records_and_fusion"], time.process_time() - t0)
    added = best["rules_with_kinds"] - best["rules_without_kinds"] + best["concept_records_and_fusion"]
    print(json.dumps({"passages": len(chunks), "rounds": rounds, "cpu_seconds_best": {k: round(v, 3) for k, v in best.items()},
                      "added_cpu_seconds": round(added, 3), "added_ms_per_passage": round(1000 * added / len(chunks), 3),
                      "wordnet": str(lexicon.root) if lexicon else None}))  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("coverage")
    c.add_argument("corpora", nargs="+")
    c.add_argument("--sample", type=int, default=50)
    c.add_argument("--seed", type=int, default=24)
    t = sub.add_parser("timing")
    t.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    t.add_argument("--limit", type=int, default=2000)
    t.add_argument("--rounds", type=int, default=2)
    m = sub.add_parser("components")
    m.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    m.add_argument("--limit", type=int, default=1000)
    m.add_argument("--rounds", type=int, default=3)
    p = sub.add_parser("_phase")
    p.add_argument("corpus")
    p.add_argument("mode", choices=["on", "off"])
    args = ap.parse_args()
    if args.cmd == "coverage":
        coverage(args.corpora, args.sample, args.seed)
    elif args.cmd == "timing":
        timing(args.corpus, args.limit, args.rounds)
    elif args.cmd == "components":
        components(args.corpus, args.limit, args.rounds)
    else:
        _phase(args.corpus, args.mode == "on")


if __name__ == "__main__":
    main()
