"""Unit vectors of every node of one table of the graph index, in the table's order, carried across generations.

A strategy that scores whole layers by cosine (BiG-RAG's relation scores over every fact, BAG-RAG's top-down
screening over every section and chunk) reads the layer's vectors once per graph generation. After a write,
the previous generation's rows move to their nodes' new positions (:attr:`GraphIndex.renumbered`) and only the
nodes written anew are read from the vector store, so the first query after a small write reads a few rows,
not the whole collection. A row is the stored vector divided by its norm (zeros for a node without a vector);
the matrix has one column when the collection holds no vector of the table's nodes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from stratagraph.retrieval.base import RetrievalContext

__all__ = ["table_vectors"]


@dataclass(frozen=True)
class _Carried:
    generation: int  # of the graph index whose table the rows follow
    matrix: np.ndarray


def table_vectors(ctx: RetrievalContext, collection: str, table: str) -> np.ndarray:
    """The unit vectors of ``collection`` for the nodes of the graph index's ``table`` ("facts", "sections",
    "chunks"...), row ``i`` for ``table.ids[i]``; kept per generation and carried over after a write."""
    index = ctx.index()
    nodes = getattr(index, table)

    def read(wanted: Sequence[str], into: np.ndarray | None) -> np.ndarray:
        for found, block in ctx.vectors.embedding_blocks(collection, wanted) if wanted else ():
            if into is None:
                into = np.zeros((len(nodes), block.shape[1]), dtype=np.float32)
            elif block.shape[1] != into.shape[1]:  # another embedder since: read whole
                return read(nodes.ids, None)
            norms = np.linalg.norm(block, axis=1, keepdims=True)
            into[[nodes.pos[n] for n in found]] = block / np.where(norms > 0, norms, 1.0)
        return np.zeros((len(nodes), 1), dtype=np.float32) if into is None else into

    def build() -> _Carried:
        return _Carried(index.generation, read(nodes.ids, None))

    def update(previous: _Carried) -> _Carried:
        if index.updated_from != previous.generation:
            return build()
        if table not in index.renumbered:  # no node of the table written or deleted
            return _Carried(index.generation, previous.matrix)
        moved, written = index.renumbered[table]
        matrix = np.zeros((len(nodes), previous.matrix.shape[1]), dtype=np.float32)
        kept = moved >= 0
        matrix[moved[kept]] = previous.matrix[kept]
        matrix[[nodes.pos[n] for n in written]] = 0.0  # written anew: read again
        return _Carried(index.generation, read(written, matrix))

    update_from = update if ctx.settings.incremental_index else None
    return ctx.cached(f"table_vectors:{collection}:{table}", build, update_from).matrix
