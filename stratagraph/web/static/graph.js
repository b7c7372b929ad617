// The evidence graph as SVG: a small deterministic force layout (no library). Nodes start in columns by kind
// (the workflow's path on the left, passages in the middle, structure above, entities and facts on the right),
// then springs pull linked nodes together and every pair pushes apart.
"use strict";
const KINDS = {
  Step: { color: "#7a5cc7", column: 0.08 }, Answer: { color: "#e07b1a", column: 0.2 },
  Document: { color: "#2f3b52", column: 0.42 }, Section: { color: "#5b7bb5", column: 0.45 },
  Chunk: { color: "#3b9b6d", column: 0.5 }, Fact: { color: "#c2537a", column: 0.72 },
  Entity: { color: "#d7a21c", column: 0.88 },
};
const PATH_EDGES = new Set(["THEN", "CITES_PASSAGE"]);

function layoutGraph(graph, width, height) {
  const nodes = graph.nodes.map((n, i) => ({ ...n, i }));
  const index = new Map(nodes.map((n) => [n.id, n]));
  const edges = graph.edges.filter((e) => index.has(e.src) && index.has(e.dst));
  const byKind = {};
  for (const n of nodes) (byKind[n.kind] = byKind[n.kind] || []).push(n);
  for (const [kind, group] of Object.entries(byKind)) {
    const column = (KINDS[kind] || { column: 0.5 }).column;
    const top = kind === "Document" || kind === "Section" ? 0.06 : 0.12;
    const span = kind === "Document" || kind === "Section" ? 0.2 : 0.8;
    group.forEach((n, k) => {
      n.x = width * column + ((k % 3) - 1) * 14;
      n.y = height * (top + (span * (k + 0.5)) / group.length);
    });
  }
  for (let step = 0; step < 220; step++) {
    const cool = 1 - step / 220;
    for (const a of nodes) { a.dx = 0; a.dy = 0; }
    for (let i = 0; i < nodes.length; i++) {
      for (let j = i + 1; j < nodes.length; j++) {
        const a = nodes[i], b = nodes[j];
        let dx = a.x - b.x, dy = a.y - b.y;
        const d2 = Math.max(dx * dx + dy * dy, 25);
        const f = 1400 / d2;
        const d = Math.sqrt(d2);
        dx = (dx / d) * f; dy = (dy / d) * f;
        a.dx += dx; a.dy += dy; b.dx -= dx; b.dy -= dy;
      }
    }
    for (const e of edges) {
      const a = index.get(e.src), b = index.get(e.dst);
      const dx = b.x - a.x, dy = b.y - a.y;
      const d = Math.max(Math.sqrt(dx * dx + dy * dy), 1);
      const f = (d - 70) * 0.04;
      a.dx += (dx / d) * f; a.dy += (dy / d) * f; b.dx -= (dx / d) * f; b.dy -= (dy / d) * f;
    }
    for (const n of nodes) {
      const pull = n.kind === "Step" || n.kind === "Answer" ? 0.05 : 0.01;  // the path keeps to its column
      n.dx += (width * (KINDS[n.kind] || { column: 0.5 }).column - n.x) * pull;
      const m = Math.sqrt(n.dx * n.dx + n.dy * n.dy);
      const cap = 12 * cool + 0.5;
      if (m > cap) { n.dx *= cap / m; n.dy *= cap / m; }
      n.x = Math.min(width - 20, Math.max(20, n.x + n.dx));
      n.y = Math.min(height - 14, Math.max(14, n.y + n.dy));
    }
  }
  return { nodes, edges, index };
}

function drawGraph(svg, graph, onPick) {
  const width = 900, height = 640, ns = "http://www.w3.org/2000/svg";
  svg.replaceChildren();
  const { nodes, edges, index } = layoutGraph(graph, width, height);
  const el = (name, attrs, parent) => {
    const e = document.createElementNS(ns, name);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    (parent || svg).appendChild(e);
    return e;
  };
  for (const e of edges) {
    const a = index.get(e.src), b = index.get(e.dst);
    const line = el("line", { x1: a.x, y1: a.y, x2: b.x, y2: b.y, "data-type": e.type });
    if (PATH_EDGES.has(e.type)) line.classList.add("path");
  }
  for (const n of nodes) {
    const g = el("g", { "data-id": n.id, "data-kind": n.kind, class: "node" });
    const c = el("circle", { cx: n.x, cy: n.y, r: n.kind === "Chunk" || n.kind === "Answer" ? 9 : 6,
                             fill: (KINDS[n.kind] || { color: "#999" }).color }, g);
    if (n.cited) c.classList.add("cited");
    const t = el("text", { x: n.x + 10, y: n.y + 3 }, g);
    t.textContent = n.label.length > 28 ? n.label.slice(0, 27) + "…" : n.label;
    const title = el("title", {}, g);
    title.textContent = `${n.kind}: ${n.label}${n.decision ? "\n" + n.decision : ""}`;
    c.addEventListener("click", () => onPick(n));
  }
}
