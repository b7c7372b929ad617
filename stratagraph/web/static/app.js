// The page: threads and streamed turns, citations that open their passage with the quote highlighted, the trace
// of each turn, the evidence graph, and the documents browser. Talks to /api (stratagraph/web/app.py).
"use strict";
const $ = (sel) => document.querySelector(sel);
const state = { thread: null, answers: [] };

function h(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "onclick") e.addEventListener("click", v);
    else if (k === "class") e.className = v;
    else e.setAttribute(k, v);
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

async function api(path, options) {
  const response = await fetch(path, options);
  const body = await response.json();
  if (!response.ok) throw new Error(body.error || response.statusText);
  return body;
}

// ------------------------------------------------------------------ counts and tabs
async function loadCounts() {
  const s = await api("/api/stats");
  const edges = Object.values(s.edges).reduce((a, b) => a + b, 0);
  $("#counts").textContent = Object.entries(s.nodes).filter(([, n]) => n).map(([k, n]) => `${n} ${k}`).join(" · ")
    + ` · ${edges} edges`;
}

for (const tab of document.querySelectorAll(".tab")) {
  tab.addEventListener("click", () => {
    for (const t of document.querySelectorAll(".tab")) t.classList.toggle("active", t === tab);
    $("#view-chat").classList.toggle("hidden", tab.dataset.view !== "chat");
    $("#view-docs").classList.toggle("hidden", tab.dataset.view !== "docs");
    if (tab.dataset.view === "docs") loadDocuments();
  });
}

// ------------------------------------------------------------------ side panel: passage and graph
function openPanel(which) {
  $("#panel").classList.remove("hidden");
  $("#passage").classList.toggle("hidden", which !== "passage");
  $("#graph").classList.toggle("hidden", which !== "graph");
}
$("#close-panel").addEventListener("click", () => $("#panel").classList.add("hidden"));

async function openPassage(chunkId, quote) {
  const c = await api(`/api/chunk?id=${encodeURIComponent(chunkId)}`);
  $("#passage-title").textContent = c.title;
  $("#passage-section").textContent = `${c.source} § ${c.section}`;
  $("#passage-id").textContent = c.id;
  const text = $("#passage-text");
  text.replaceChildren();
  const at = quote ? c.text.indexOf(quote) : -1;
  if (at < 0) text.append(c.text);
  else {
    const mark = h("mark", {}, quote);
    text.append(c.text.slice(0, at), mark, c.text.slice(at + quote.length));
    openPanel("passage");
    mark.scrollIntoView({ block: "center" });
    return;
  }
  openPanel("passage");
}

function openGraph(graph) {
  const legend = $("#legend");
  legend.replaceChildren(...Object.entries(KINDS).map(([k, v]) => { const s = h("span", {}, k); s.style.setProperty("--c", v.color); return s; }));
  openPanel("graph");
  drawGraph($("#graph-svg"), graph, (n) => {
    $("#graph-node").textContent = `${n.kind}: ${n.label}${n.decision ? " — " + n.decision : ""}`;
    if (n.kind === "Chunk") openPassageKeepGraph(n.id);
  });
}

async function openPassageKeepGraph(chunkId) {
  const c = await api(`/api/chunk?id=${encodeURIComponent(chunkId)}`);
  $("#graph-node").textContent = `${c.source} § ${c.section}: ${c.text.slice(0, 300)}`;
}

// ------------------------------------------------------------------ threads
function newThreadId() {
  return "t-" + Date.now().toString(36) + "-" + Math.random().toString(36).slice(2, 6);
}

async function loadThreads() {
  const threads = await api("/api/threads");
  const list = $("#thread-list");
  list.replaceChildren(...threads.map((t) => h("li", { "data-thread": t.thread_id, class: t.thread_id === state.thread ? "active" : "",
    onclick: () => openThread(t.thread_id) }, t.first_message.slice(0, 40) || t.thread_id, h("small", {}, `${t.turns} turns · ${t.thread_id}`))));
  if (state.thread && !threads.some((t) => t.thread_id === state.thread)) {
    list.prepend(h("li", { "data-thread": state.thread, class: "active" }, "(new thread)", h("small", {}, state.thread)));
  }
}

async function openThread(id) {
  state.thread = id;
  $("#thread-title").textContent = `thread ${id}`;
  $("#turns").replaceChildren();
  const data = await api(`/api/threads/${encodeURIComponent(id)}`);
  for (const t of data.turns) {
    const view = turnView(t.message);
    if (t.answer) showAnswer(view, t.answer, t.reply, t.graph);
  }
  await loadThreads();
}

$("#new-thread").addEventListener("click", () => {
  state.thread = newThreadId();
  $("#thread-title").textContent = `thread ${state.thread}`;
  $("#turns").replaceChildren();
  loadThreads();
  $("#message").focus();
});

// ------------------------------------------------------------------ turns
function turnView(message) {
  const trace = h("ol");
  const view = {
    root: h("div", { class: "turn" }, h("div", { class: "question" }, message)),
    reply: h("div", { class: "reply" }, h("div", { class: "answer pending" }, "…")),
    trace,
    details: h("details", { class: "trace" }, h("summary", {}, "Trace"), trace),
  };
  view.reply.append(view.details);
  view.root.append(view.reply);
  $("#turns").append(view.root);
  return view;
}

function addTrace(view, node) {
  view.trace.append(h("li", {}, h("b", {}, node.node), " ", node.decision || "", " ",
    h("span", { class: "ms" }, `(${Math.round(node.ms)} ms)`), node.fallback ? h("span", { class: "fallback" }, ` fallback: ${node.fallback}`) : null));
}

function showAnswer(view, answer, reply, graph) {
  const box = view.reply;
  const head = box.querySelector(".answer");
  head.className = "answer" + (answer.found ? "" : " not-found");
  head.textContent = answer.found ? answer.answer : `${answer.answer} (not found)`;
  if (view.trace.childElementCount === 0) for (const entry of answer.trace) addTrace(view, entry);
  const extra = [];
  if (reply && !reply.startsWith(answer.answer)) extra.push(h("div", { class: "muted" }, reply.split("\n[1]")[0]));
  if (answer.computed) extra.push(h("div", { class: "computed" }, `computed: ${answer.computed.expression} = ${answer.answer}`));
  const cites = answer.citations.map((c, i) => h("li", {}, h("button", { class: "cite", "data-chunk": c.chunk_id,
    onclick: () => openPassage(c.chunk_id, c.quote) }, `[${i + 1}] ${c.source} § ${c.section.split(" > ").slice(-1)[0]}`)));
  const actions = h("div", { class: "actions" },
    h("button", { class: "show-graph", onclick: () => openGraph(graph) }, "Evidence graph"),
    h("span", { class: "muted" }, `${answer.strategy} · ${answer.kind}`));
  head.after(...extra, h("ol", { class: "citations" }, ...cites), actions);
}

async function send(message) {
  if (!state.thread) state.thread = newThreadId();
  const view = turnView(message);
  const head = view.reply.querySelector(".answer");
  let streamed = "";
  const response = await fetch(`/api/threads/${encodeURIComponent(state.thread)}/messages`, {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ message }),
  });
  if (!response.ok) { head.className = "answer not-found"; head.textContent = (await response.json()).error; return; }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (value) buffer += decoder.decode(value, { stream: true });
    let nl;
    while ((nl = buffer.indexOf("\n")) >= 0) {
      const event = JSON.parse(buffer.slice(0, nl));
      buffer = buffer.slice(nl + 1);
      if (event.type === "node") { addTrace(view, event.node); head.textContent = `… ${event.node.node}`; }
      else if (event.type === "token") { streamed += event.token; head.textContent = streamed; }
      else if (event.type === "answer") showAnswer(view, event.answer, event.reply, event.graph);
      else if (event.type === "error") { head.className = "answer not-found"; head.textContent = event.error; }
    }
    if (done) break;
  }
  view.root.scrollIntoView({ block: "end" });
  await Promise.all([loadThreads(), loadCounts()]);
}

$("#ask").addEventListener("submit", async (e) => {
  e.preventDefault();
  const input = $("#message");
  const message = input.value.trim();
  if (!message) return;
  input.value = "";
  $("#send").disabled = true;
  try { await send(message); } finally { $("#send").disabled = false; input.focus(); }
});

// ------------------------------------------------------------------ documents
async function loadDocuments() {
  const docs = await api("/api/documents");
  $("#document-list").replaceChildren(...docs.map((d) => h("li", { "data-doc": d.id, onclick: () => openDocument(d.id) },
    d.title, h("small", {}, `${d.sections} sections · ${d.chunks} chunks`))));
}

function treeItem(node) {
  const chunks = (node.chunks || []).map((id, i) => h("button", { "data-chunk": id, onclick: () => openPassage(id, null) }, `¶${i + 1}`));
  const label = h("span", {}, node.title, " ", h("span", { class: "chunks" }, ...chunks));
  const children = node.children.length ? h("ul", {}, ...node.children.map(treeItem)) : null;
  return h("li", { "data-section": node.id }, label, children);
}

async function openDocument(id) {
  for (const li of document.querySelectorAll("#document-list li")) li.classList.toggle("active", li.dataset.doc === id);
  const [tree, entities] = await Promise.all([
    api(`/api/tree?doc=${encodeURIComponent(id)}`), api(`/api/entities?doc=${encodeURIComponent(id)}`),
  ]);
  $("#document-title").textContent = tree.title;
  $("#tree").replaceChildren(...tree.children.map(treeItem));
  $("#entities").replaceChildren(...entities.map((e) => h("li", {}, e.name, " ", h("small", {}, `${e.type} ×${e.mentions}`))));
}

// ------------------------------------------------------------------ start
(async () => {
  await Promise.all([loadCounts(), loadThreads()]);
  const first = document.querySelector("#thread-list li");
  if (first) await openThread(first.dataset.thread);
  else $("#new-thread").click();
  document.body.dataset.ready = "true";
})();
