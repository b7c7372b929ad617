"""Local personalised PageRank by push: the walk reads the seeds' neighbourhood, not the whole graph.

The algorithm is Andersen, Chung and Lang's approximate PageRank (FOCS 2006, "Local graph partitioning using
PageRank vectors"), in the non-lazy form, on the undirected weighted walk graph of
:mod:`~stratagraph.retrieval.ppr` (``w(u, v)`` summed over the edges joining u and v, ``deg(u) = sum_v
w(u, v)``). With restart probability ``a = 1 - damping`` and the reset ``r`` (the seeds, normalised to sum 1),
the exact vector is ``x = a * sum_k (damping * W D^-1)^k r``, which is what the power iteration of
:func:`~stratagraph.retrieval.index.personalized_pagerank` approximates. The push keeps an estimate ``p`` and a
residual ``q`` (at first ``p = 0``, ``q = r``) and, while some node has ``q(u) >= eps * deg(u)``, pushes it::

    p(u) += a * q(u)
    q(v) += damping * q(u) * w(u, v) / deg(u)      for every neighbour v of u
    q(u)  = 0

Each push keeps the invariant ``x = p + sum_u q(u) * x_u`` (``x_u`` the PageRank personalised on u alone).
When it stops every ``q(u) < eps * deg(u)``, and since the walk is undirected (reversible),
``deg(u) * x_u(v) = deg(v) * x_v(u)``, so for every node v::

    0 <= x(v) - p(v) = sum_u q(u) x_u(v) < eps * sum_u deg(u) x_u(v) = eps * deg(v) * sum_u x_v(u) = eps * deg(v)

**the error at a node is below eps times its degree** (and p never overestimates). Each push moves at least
``a * eps * deg(u)`` of residual into ``p``, so the pushes touch at most ``1 / (a * eps)`` of degree in all,
whatever the size of the graph: the cost follows the seeds' neighbourhood and ``eps``.

A node without edges (dangling) keeps ``a * q(u)`` and the rest of its residual is lost; the power iteration
instead restarts it at the seeds. Only a seed can be dangling (nothing leads to it), so the lost mass is known
exactly: ``damping * r(iso)`` with ``r(iso)`` the reset on dangling seeds, and the result is scaled by
``1 / (1 - damping * r(iso))``, the exact restarted vector's total. ``eps`` is scaled by the same factor first,
so the bound above holds as stated for the scaled result.

The walk graph is read by batches through a :class:`WalkSource`: each round reads, in one call, the nodes that
may be pushed and are not read yet. A node is read with a per-node limit (its heaviest edges first): a node
whose first ``limit`` edges already weigh more than ``q(u) / eps`` cannot be pushed yet, so a hub of a
hundred thousand mentions is read a few hundred edges at a time, and only if its residual grows that far.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol

__all__ = ["Adjacent", "MemoryWalk", "PushResult", "WalkSource", "local_pagerank"]

FIRST_LIMIT = 64  # edges per node in its first read


class Adjacent(NamedTuple):
    """A node's walk neighbours ``(other, weight)`` as read, whether that is all of them, and their total weight:
    the node's degree when complete, a lower bound otherwise (:meth:`of`)."""

    neighbours: tuple[tuple[str, float], ...]
    complete: bool
    degree: float

    @classmethod
    def of(cls, neighbours: Sequence[tuple[str, float]], complete: bool) -> Adjacent:
        return cls(tuple(neighbours), complete, math.fsum(w for _, w in neighbours))


class WalkSource(Protocol):
    """Where the walk graph is read from: each node's neighbours, heaviest first, at most ``limit`` (and
    ``complete`` when that was all)."""

    def fetch(self, nodes: Sequence[str], limit: int) -> dict[str, Adjacent]: ...


@dataclass
class MemoryWalk:
    """A walk graph held in memory (tests, small graphs): ``adjacency[u]`` lists u's neighbours with weights."""

    adjacency: Mapping[str, Sequence[tuple[str, float]]]
    reads: int = 0

    def fetch(self, nodes: Sequence[str], limit: int) -> dict[str, Adjacent]:
        self.reads += 1
        out = {}
        for u in nodes:
            every = sorted(self.adjacency.get(u, ()), key=lambda nw: (-nw[1], nw[0]))
            out[u] = Adjacent.of(every[:limit], len(every) <= limit)
        return out


@dataclass
class PushResult:
    """The estimate (node -> score, only nodes the push reached) and what it cost."""

    scores: dict[str, float]
    pushes: int = 0
    rounds: int = 0
    nodes_read: int = 0
    edges_read: int = 0
    degrees: dict[str, float] = field(default_factory=dict)  # the degree of every node read completely


def local_pagerank(
    source: WalkSource,
    seeds: Mapping[str, float],
    damping: float = 0.5,
    epsilon: float = 1e-6,
    first_limit: int = FIRST_LIMIT,
) -> PushResult:
    """Personalised PageRank from ``seeds`` by push (module docstring): every score within ``epsilon * degree``
    below the exact one."""
    total = math.fsum(w for w in seeds.values() if w > 0)
    if total <= 0:
        return PushResult({})
    state = _Push(source, damping, epsilon, first_limit)
    state.residual = {u: w / total for u, w in seeds.items() if w > 0}
    iso = state.run()
    scale = 1.0 / (1.0 - damping * iso)
    return PushResult(
        {u: p * scale for u, p in state.estimate.items()},
        state.pushes,
        state.rounds,
        len(state.known),
        state.edges_read,
        {u: a.degree for u, a in state.known.items() if a.complete},
    )


@dataclass
class _Push:
    source: WalkSource
    damping: float
    epsilon: float
    first_limit: int
    residual: dict[str, float] = field(default_factory=dict)
    estimate: dict[str, float] = field(default_factory=dict)
    known: dict[str, Adjacent] = field(default_factory=dict)
    limit: dict[str, int] = field(default_factory=dict)
    floor: dict[str, float] = field(default_factory=dict)  # a lower bound of a node's degree: an edge seen into it
    pushes: int = 0
    rounds: int = 0
    edges_read: int = 0

    def run(self) -> float:
        """Push until no node qualifies; returns the reset mass on dangling seeds."""
        iso = 0.0
        seeds = dict(self.residual)
        self._read(sorted(seeds))
        iso = math.fsum(w for u, w in seeds.items() if self.known[u].complete and not self.known[u].neighbours)
        self.epsilon *= 1.0 - self.damping * iso  # the bound holds after scaling (module docstring)
        while True:
            self.rounds += 1
            todo = self._to_read()
            self._read(todo)
            ready = sorted(u for u, q in self.residual.items() if self._pushable(u, q))
            if not ready and not todo:
                return iso  # each read at least doubles a node's limit, so this comes
            for u in ready:
                if self._pushable(u, self.residual.get(u, 0.0)):
                    self._push(u)

    def _threshold(self, u: str) -> float:
        return self.epsilon * self.known[u].degree

    def _pushable(self, u: str, q: float) -> bool:
        adj = self.known.get(u)
        return adj is not None and adj.complete and q > 0 and q >= self._threshold(u)

    def _to_read(self) -> list[str]:
        """Nodes with a residual that may reach their threshold and whose edges are not all read (a node
        reached through an edge of weight w has degree w at least: a smaller residual leaves it unread)."""
        out = []
        for u, q in self.residual.items():
            adj = self.known.get(u)
            if adj is None and q >= self.epsilon * self.floor.get(u, 0.0):
                out.append(u)
            elif adj is not None and not adj.complete and q >= self.epsilon * adj.degree:
                out.append(u)
        return sorted(out)

    def _read(self, nodes: list[str]) -> None:
        """Batched reads: a node's first read takes ``first_limit`` edges; a further one (its residual could
        outweigh what was read) at least doubles its limit, up to what the residual could outweigh. One call
        per distinct limit (powers of two)."""
        by_limit: dict[int, list[str]] = {}
        for u in nodes:
            old = self.limit.get(u)
            if old is None:
                limit = self.first_limit
            else:
                want = math.ceil(self.residual.get(u, 0.0) / self.epsilon) + 1
                limit = 1 << (max(2 * old, min(want, 1 << 30)) - 1).bit_length()
            by_limit.setdefault(limit, []).append(u)
        for limit, batch in sorted(by_limit.items()):
            for u, adj in self.source.fetch(batch, limit).items():
                self.known[u] = adj
                self.limit[u] = limit
                self.edges_read += len(adj.neighbours)

    def _push(self, u: str) -> None:
        q = self.residual.pop(u)
        adj = self.known[u]
        self.estimate[u] = self.estimate.get(u, 0.0) + (1.0 - self.damping) * q
        self.pushes += 1
        deg = adj.degree
        if deg <= 0:
            return
        share = self.damping * q / deg
        for v, w in adj.neighbours:
            self.residual[v] = self.residual.get(v, 0.0) + share * w
            if w > self.floor.get(v, 0.0):
                self.floor[v] = w
