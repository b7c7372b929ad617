"""Helpers of the local-walk tests: the examples' whole-graph walk pairs and the exact personalised PageRank."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping

import numpy as np
from scipy.sparse import csr_matrix


def undirected(pairs: Mapping[tuple[str, str], float]) -> dict[str, dict[str, float]]:
    """Node -> neighbour -> summed weight, both ways, self-pairs dropped (the walk matrix's adjacency)."""
    adj: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for (a, b), w in pairs.items():
        if a != b:
            adj[a][b] += w
            adj[b][a] += w
    return {u: dict(vs) for u, vs in adj.items()}


def exact_ppr(adj: Mapping[str, Mapping[str, float]], seeds: Mapping[str, float], damping: float) -> dict[str, float]:
    """``x = damping * P x + (damping * dangling mass + 1 - damping) * r`` in float64, iterated to 1e-15."""
    ids = sorted(set(adj) | set(seeds))
    pos = {u: i for i, u in enumerate(ids)}
    rows, cols, vals = [], [], []
    deg = np.zeros(len(ids))
    for u, vs in adj.items():
        deg[pos[u]] = sum(vs.values())
        for v, w in vs.items():
            rows.append(pos[v])
            cols.append(pos[u])
            vals.append(w)
    dangling = deg == 0
    scale = np.divide(1.0, deg, out=np.zeros_like(deg), where=~dangling)
    P = csr_matrix((np.asarray(vals) * scale[cols], (rows, cols)), shape=(len(ids), len(ids)))
    r = np.zeros(len(ids))
    for u, w in seeds.items():
        r[pos[u]] += w
    r /= r.sum()
    x = r.copy()
    for _ in range(200):
        nxt = damping * (P @ x) + (damping * x[dangling].sum() + 1.0 - damping) * r
        done = np.abs(nxt - x).sum() < 1e-15
        x = nxt
        if done:
            break
    return {u: float(x[pos[u]]) for u in ids}
