"""``lesegr``: CG-RAG's contextualized graph retrieval-augmented generation (§4.4, eqs. 18-20).

    subgraphs -> summarize -> answer

``subgraphs`` retrieves the top chunks with the ``lesegr`` strategy (LeSeGR, §4.3) and each one's
contextual subgraph (eq. 18: the chunk and its direct neighbours in the chunk graph: citations, adjacency,
cross-references, similar passages); ``summarize`` summarises each subgraph for the question (a chat
model's summary, else the extract of its most question-relevant sentences) and concatenates the summaries
(eq. 20); ``answer`` answers from them (eq. 19), citing the subgraphs' chunks verbatim.
"""

# no ``from __future__ import annotations``: the state's annotations must be real types, since LangGraph
# Studio loads this file under another module name and could not resolve them by name
from typing import Any

from langgraph.graph import END, START, StateGraph

from stratagraph.agents.common import AnswerOutput, BaseState, QuestionInput
from stratagraph.agents.summarize import answer, subgraphs, summarize
from stratagraph.retrieval.base import Evidence
from stratagraph.services import Services


class LeSeGRState(BaseState, total=False):
    subgraphs: list[dict[str, Any]]  # eq. 18: each top chunk's centre and kept neighbours
    neighbour_chunks: list[Evidence]  # the neighbours' passages
    summaries: str  # eq. 20: the concatenated summaries, as the answer reads them
    passages: list[Evidence]  # the chunks the summaries draw from, then the other centres
    extracts: list[dict[str, Any]]  # the extracts' sentences (chunk, offset, score, subgraph rank)


def build_graph() -> StateGraph:
    g = StateGraph(LeSeGRState, context_schema=Services, input_schema=QuestionInput, output_schema=AnswerOutput)
    g.add_node("subgraphs", subgraphs)
    g.add_node("summarize", summarize)
    g.add_node("answer", answer)
    g.add_edge(START, "subgraphs")
    g.add_edge("subgraphs", "summarize")
    g.add_edge("summarize", "answer")
    g.add_edge("answer", END)
    return g


graph = build_graph().compile(name="lesegr")
