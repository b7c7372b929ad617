"""``kag``: KAG's logical-form solver (KAG §2.3, Alg. 1 and 2): plan the question as logical-form steps, run
them one by one (graph retrieval first, hybrid chunk retrieval when the graph result is empty or weak; Math,
Sort and numeric Deduce in code over typed quantities), keep every sub-answer in a memory, judge whether the
question is answered, else reflect a supplementary question and start another round (at most
``settings.kag_max_rounds``), then generate the answer from the memory.

    plan -> execute (once per step) -> judge -> answer
                                         \\-> reflect -> plan (next round)
                                                    \\-> answer (nothing new to ask)
"""

# no "from __future__ import annotations": the state's annotations must resolve when LangGraph Studio loads
# this file by path (the module is then not in sys.modules)
import operator
from typing import Annotated

from langgraph.graph import END, START, StateGraph

from stratagraph.agents.common import AnswerOutput, BaseState, QuestionInput
from stratagraph.agents.execute import execute
from stratagraph.agents.memory_answer import generate
from stratagraph.agents.memory import Binding, MemoryEntry, merge_bindings
from stratagraph.agents.plan import LogicalForm, plan
from stratagraph.agents.reflect import judge, reflect
from stratagraph.services import Services


class KagState(BaseState, total=False):
    round: int  # the round being planned or run (1-based)
    query_cur: str  # Alg. 1's query_cur: the question, then the reflection's supplementary questions
    rebind: str  # the variable a rule-based supplementary question binds again
    tried: list[str]  # supplementary questions asked so far
    plan: list[LogicalForm]  # this round's logical forms
    cursor: int  # the next step to run
    bindings: Annotated[dict[str, Binding], merge_bindings]  # every variable bound so far
    memory: Annotated[list[MemoryEntry], operator.add]  # Alg. 1's global memory
    output: str  # the variable the last Output step bound
    answered: bool  # the judge's verdict
    more_rounds: bool  # not answered, and the round limit (settings.kag_max_rounds) not reached


def _next_step(state: KagState) -> str:
    return "execute" if int(state.get("cursor") or 0) < len(state.get("plan") or []) else "judge"


def _after_judge(state: KagState) -> str:
    return "reflect" if state.get("more_rounds") else "answer"


def _after_reflect(state: KagState) -> str:
    return "plan" if state.get("query_cur") else "answer"


def build_graph() -> StateGraph:
    g = StateGraph(KagState, context_schema=Services, input_schema=QuestionInput, output_schema=AnswerOutput)
    g.add_node("plan", plan)
    g.add_node("execute", execute)
    g.add_node("judge", judge)
    g.add_node("reflect", reflect)
    g.add_node("answer", generate)
    g.add_edge(START, "plan")
    g.add_conditional_edges("plan", _next_step, ["execute", "judge"])
    g.add_conditional_edges("execute", _next_step, ["execute", "judge"])
    g.add_conditional_edges("judge", _after_judge, ["answer", "reflect"])
    g.add_conditional_edges("reflect", _after_reflect, ["plan", "answer"])
    g.add_edge("answer", END)
    return g


graph = build_graph().compile(name="kag_solver")
