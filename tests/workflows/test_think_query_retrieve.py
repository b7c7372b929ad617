"""``tqr`` (BiG-RAG §4.3-4.4): think -> query -> retrieve until an answer or the turn limit; without a chat
model the algorithmic mode (Alg. 3 class, Alg. 5 sub-questions, Alg. 4 traversal, each sub-answer extracted
and bound into the next sub-question), with one the §4.4.2 protocol over plain chat (the chat model is a
scripted one served over real HTTP) and the §4.3.4 generation prompt for the answer."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from stratagraph import Settings, StrataGraph
from stratagraph.agents.decompose import bind, honest, is_question
from stratagraph.agents.think import MAX_QUERIES, parse_turn
from stratagraph.answers import Answer
from stratagraph.llm import LLMUnavailable
from stratagraph.retrieval.decompose import SubQuery, decompose
from stratagraph.text.nlp import load_nlp
from tests.scripted_llm import Reply, ScriptedChatServer, closed_port, user_text
from tests.workflows.conftest import assert_cited, assert_not_found

BUDGET = "examples/budget/riverton_city_budget_fy2025.md"
Q2 = "examples/earnings/northwind_robotics_q2_2024_earnings_call.md"
Q3 = "examples/earnings/northwind_robotics_q3_2024_earnings_call.md"
# a 2-hop question across two sections: the county is named in 2.1 (capital projects), what its
# agreement costs in 1.1.1 (the Police Department)
DISPATCH = "How much is budgeted for the dispatch agreement with the county that operates the regional P25 network?"
# a 2-hop question across two documents: the arm is named in the Q3 call, its pilot result in the Q2 call
KESTREL = "How many picks per hour did the picking arm that reached general availability on September 10 sustain in its pilot?"


def _decisions(answer: Answer, node: str) -> str:
    return " | ".join(t.decision for t in answer.trace if t.node == node)


# ------------------------------------------------------------------------------------------ without a chat model
def test_a_two_hop_question_across_sections_binds_the_county_then_answers(examples_sg: StrataGraph) -> None:
    answer = examples_sg.ask(DISPATCH, "tqr")
    assert answer.found and answer.strategy == "tqr"
    assert answer.answer == "$820 thousand"
    assert_cited(examples_sg, answer)
    # the answer's sentence (1.1.1 Police Department), then the hop's (2.1 Public Safety Facilities and Fleet)
    assert [c.chunk_id for c in answer.citations] == [f"{BUDGET}#1.1.1#0", f"{BUDGET}#2.1#0"]
    assert "Harlow County" in answer.citations[1].quote and "$820 thousand" in answer.citations[0].quote
    assert [t.node for t in answer.trace] == ["decompose", "think", "retrieve", "think", "retrieve", "think", "answer"]
    assert "COMPLEX" in _decisions(answer, "decompose") and "-> var1" in _decisions(answer, "decompose")
    think = _decisions(answer, "think")
    assert "var1 = 'Harlow County'" in think
    assert "'How much is budgeted for the dispatch agreement with Harlow County?'" in think
    calls = [c for t in answer.trace if t.node == "retrieve" for c in t.tool_calls]
    assert [c.name for c in calls] == ["traverse", "traverse"]
    assert all(c.args["max_hops"] == 5 and c.args["target_relations"] == 10 for c in calls)  # COMPLEX, per sub-query
    assert calls[1].args["query"] == "How much is budgeted for the dispatch agreement with Harlow County?"
    assert answer.usage.llm_calls == 0 and all(not t.llm for t in answer.trace)


def test_a_two_hop_question_across_documents_cites_both_calls(examples_sg: StrataGraph) -> None:
    answer = examples_sg.ask(KESTREL, "tqr")
    assert answer.found and answer.answer == "640 picks per hour"
    assert_cited(examples_sg, answer)
    assert {c.doc_id for c in answer.citations} == {Q2, Q3}
    assert "var1 = 'Kestrel'" in _decisions(answer, "think")


def test_a_question_the_documents_cannot_answer_is_not_found(examples_sg: StrataGraph) -> None:
    assert_not_found(examples_sg.ask("Who painted the ceiling of the Sistine Chapel?", "tqr"))


def test_a_two_hop_question_whose_second_hop_is_not_in_the_documents_is_not_found(examples_sg: StrataGraph) -> None:
    answer = examples_sg.ask("Who is the mayor of the city whose council adopted the budget on June 11, 2024?", "tqr")
    assert_not_found(answer)
    assert "var1 = 'City of Riverton'" in _decisions(answer, "think")  # the first hop resolved; nothing invented after


def test_the_turn_limit_asks_the_final_sub_question_on_the_last_turn(examples_home: Path) -> None:
    settings = Settings(home=examples_home, llm_model=None, openai_base_url=None, openai_api_key=None, tqr_max_turns=1)
    with StrataGraph(settings) as sg:
        answer = sg.ask(DISPATCH, "tqr")
    assert [t.node for t in answer.trace] == ["decompose", "think", "retrieve", "answer"]
    # the first hop was never asked: its words stand in for its answer
    assert "sub-question 2 of 2" in _decisions(answer, "think")
    assert "the county operates the regional P25 network" in answer.trace[2].tool_calls[0].args["query"]


def test_the_graph_is_registered_for_studio() -> None:
    data = json.loads((Path(__file__).resolve().parents[2] / "langgraph.json").read_text())
    assert data["graphs"]["think_query_retrieve"] == "./stratagraph/workflows/think_query_retrieve.py:graph"
    from stratagraph.workflows import get_workflow

    assert get_workflow("tqr").name == "think_query_retrieve"


# ------------------------------------------------------------------------------------------ parsing a turn
def test_a_well_formed_turn() -> None:
    turn = parse_turn("<think>I need the county.</think>\n<query>county operating the P25 network</query>")
    assert (turn.action, turn.thought, turn.queries, turn.answer, turn.repairs) == (
        "query", "I need the county.", ["county operating the P25 network"], None, []
    )  # fmt: skip


def test_missing_closing_tags_and_several_queries() -> None:
    turn = parse_turn("<think>Two things to find\n<query>county of the P25 network\nthen more words\n"
                      "<SEARCH> dispatch agreement cost </search>")  # fmt: skip
    assert turn.action == "query"
    assert turn.thought == "Two things to find"
    assert turn.queries == ["county of the P25 network", "dispatch agreement cost"]
    assert "unclosed <query>" in turn.repairs and "unclosed <think>" in turn.repairs


def test_at_most_a_few_queries_are_run() -> None:
    turn = parse_turn("".join(f"<query>q{i}</query>" for i in range(MAX_QUERIES + 2)) + "<query>q0</query>")
    assert turn.queries == [f"q{i}" for i in range(MAX_QUERIES)] and "no <think>" in turn.repairs


def test_an_answer_without_think_and_unclosed() -> None:
    turn = parse_turn("<answer> $820 thousand \n\nThis is from the budget.")
    assert (turn.action, turn.answer, turn.thought) == ("answer", "$820 thousand", "")


def test_invented_knowledge_and_later_rounds_are_cut_off() -> None:
    turn = parse_turn("<think>look it up</think><query>P25 operator</query>\n<knowledge>Harlow County runs it"
                      "</knowledge>\n<think>so</think><answer>Harlow County</answer>")  # fmt: skip
    assert turn.action == "query" and turn.queries == ["P25 operator"] and turn.answer is None
    turn = parse_turn("<query>P25 operator</query>\nTurn 2:\n<answer>Harlow County</answer>")
    assert turn.action == "query" and turn.answer is None


def test_the_first_action_decides() -> None:
    turn = parse_turn("<think>x</think><query>a</query><answer>b</answer>")
    assert turn.action == "query" and turn.answer is None and turn.queries == ["a"]
    turn = parse_turn("<think>x</think><answer>b</answer><query>a</query>")
    assert turn.action == "answer" and turn.answer == "b" and turn.queries == []


def test_untagged_lines_and_nothing_usable() -> None:
    turn = parse_turn("Let me check.\nQuery: dispatch agreement Harlow County")
    assert turn.action == "query" and turn.queries == ["dispatch agreement Harlow County"] and turn.thought == "Let me check."
    assert parse_turn("**Final answer:** 640").answer == "640"
    assert parse_turn("I do not know what to do.").action is None
    assert parse_turn(None).action is None and parse_turn("<query>  </query>").action is None


# ------------------------------------------------------------------------------------------ sub-questions
def test_an_unresolved_variable_keeps_the_words_it_stands_for() -> None:
    subs = [SubQuery(text="Which film was shot in Leland?", target="var1"),
            SubQuery(text="Who directed {var1}?", depends_on=["var1"])]  # fmt: skip
    assert bind(subs[1], {"var1": "Maximum Overdrive"}, subs) == "Who directed Maximum Overdrive?"
    assert bind(subs[1], {}, subs) == "Who directed the film was shot in Leland?"
    assert is_question("Who directed it?") and is_question("Is it red?") and not is_question("X played for it.")


def test_a_decomposition_is_kept_only_where_its_references_are_entities() -> None:
    nlp = load_nlp()
    chain = decompose(nlp, "Who is the spouse of the director of the film that won Best Picture in 1987?")
    assert honest(chain, "q")[0] == chain  # a film, then a person: entities a later step is about
    amount = [SubQuery(text="What is the 2027 budget of the Town of Brin?", target="var1"),
              SubQuery(text="In {var1}, how much goes to road salt?", depends_on=["var1"])]  # fmt: skip
    kept, why = honest(amount, "In the Town of Brin's 2027 budget, how much goes to road salt?")
    assert [s.text for s in kept] == ["In the Town of Brin's 2027 budget, how much goes to road salt?"]
    assert "number" in why


# ------------------------------------------------------------------------------------------ with a chat model
def _llm_sg(server: ScriptedChatServer, home: Path, **settings: object) -> StrataGraph:
    return StrataGraph(server.settings(home, llm_cache=False, **settings))


def _is_generation(body: dict[str, Any]) -> bool:
    return "---Question---" in user_text(body)


def _passage_with(body: dict[str, Any], needle: str) -> int:
    passages = user_text(body).split("---Knowledge---", 1)[1]
    for block in re.split(r"\n\s*\n", passages):
        m = re.match(r"\[(\d+)\] ", block.strip())
        if m and needle in block:
            return int(m.group(1))
    raise AssertionError(f"no passage with {needle!r}")


def _turns(body: dict[str, Any]) -> int:
    """Turns done so far: the knowledge messages the conversation holds."""
    return sum(1 for m in body["messages"] if m["role"] == "user" and m["content"].startswith("<knowledge>"))


def _protocol(turns: list[str], answer: str = "$820 thousand") -> Any:
    """The scripted model: the given protocol replies turn by turn, then the generation citing the passage
    that states ``answer``."""

    def respond(body: dict[str, Any]) -> Reply:
        if _is_generation(body):
            return Reply.json({"answer": answer, "found": True, "evidence": [_passage_with(body, answer)]})
        return Reply(content=turns[min(_turns(body), len(turns) - 1)])

    return respond


GOOD_TURNS = [
    "<think>I need the county that operates the P25 network first.</think>\n<query>county operating the regional P25 network</query>",
    ("<think>Harlow County operates it. Now the cost of its dispatch agreement.</think>\n"
     "<query>dispatch agreement with Harlow County budget</query>"),
    "<think>The dispatch agreement with Harlow County is budgeted at $820 thousand.</think>\n<answer>$820 thousand</answer>",
]


def test_the_protocol_drives_the_turns_against_scripted_http_server(examples_home: Path, chat_server: ScriptedChatServer) -> None:
    chat_server.responder = _protocol(GOOD_TURNS)
    with _llm_sg(chat_server, examples_home) as sg:
        answer = sg.ask(DISPATCH, "tqr")
        assert answer.found and answer.answer == "$820 thousand"
        assert_cited(sg, answer)
    assert "$820 thousand" in answer.citations[0].quote
    assert answer.usage.llm_calls == len(chat_server.requests) == 4
    assert [t.node for t in answer.trace] == ["decompose", "think", "retrieve", "think", "retrieve", "think", "answer"]
    queries = [c.args["query"] for t in answer.trace if t.node == "retrieve" for c in t.tool_calls]
    assert queries == ["county operating the regional P25 network", "dispatch agreement with Harlow County budget"]
    # the second turn saw the first turn's knowledge, fed back as a user message after the model's own turn
    second = chat_server.requests[1]["messages"]
    assert [m["role"] for m in second] == ["system", "user", "assistant", "user"]
    assert second[3]["content"].startswith("<knowledge>") and "Harlow County" in second[3]["content"]
    assert second[2]["content"].endswith("<query>county operating the regional P25 network</query>")
    assert "response_format" not in chat_server.requests[0]  # plain chat: no tool calling, no structure
    generation = chat_server.requests[3]
    assert generation["response_format"]["json_schema"]["name"] == "GeneratedAnswer"
    assert "Reasoning chain so far" in user_text(generation) and "Draft answer" in user_text(generation)
    assert all(t.llm for t in answer.trace if t.node in ("think", "answer")) and all(not t.fallback for t in answer.trace)


def test_a_small_models_messy_turns_still_give_a_cited_answer_against_scripted_http_server(
    examples_home: Path, chat_server: ScriptedChatServer
) -> None:
    messy = [
        # no think tag, two unclosed queries
        ("I should look up who runs the network.\n<query>county operating the regional P25 network\n"
         "<query>P25 network operator"),
        # unclosed think, invented knowledge and answer
        ("<think>Found Harlow County<query>dispatch agreement Harlow County</query>\n<knowledge>It costs $1 million"
         "</knowledge>\n<answer>$1 million</answer>"),
        "<answer>$820 thousand",  # no think, unclosed answer
    ]
    chat_server.responder = _protocol(messy)
    with _llm_sg(chat_server, examples_home) as sg:
        answer = sg.ask(DISPATCH, "tqr")
        assert answer.found and answer.answer == "$820 thousand"
        assert_cited(sg, answer)
    assert answer.usage.llm_calls == len(chat_server.requests) == 4
    first = [c.args["query"] for c in answer.trace[2].tool_calls]
    assert first == ["county operating the regional P25 network", "P25 network operator"]
    assert "cut at an invented <knowledge>" in _decisions(answer, "think")


def test_an_answer_its_named_passage_does_not_state_is_cited_from_the_one_that_does_against_scripted_http_server(
    examples_home: Path, chat_server: ScriptedChatServer
) -> None:
    """What Qwen2.5-1.5B did: answered "820" naming the passage of the hop (Harlow County's P25 network)."""
    good = _protocol(GOOD_TURNS)

    def respond(body: dict[str, Any]) -> Reply:
        if _is_generation(body):
            return Reply.json({"answer": "820", "found": True, "evidence": [_passage_with(body, "P25 network operated")]})
        return good(body)

    chat_server.responder = respond
    with _llm_sg(chat_server, examples_home) as sg:
        answer = sg.ask(DISPATCH, "tqr")
        assert_cited(sg, answer)
    assert answer.answer == "820" and "$820 thousand" in answer.citations[0].quote
    assert "P25 network operated by Harlow County" in answer.citations[1].quote
    assert "reached through" in answer.trace[-1].decision and answer.trace[-1].fallback is None


def test_an_answer_no_passage_states_falls_back_to_the_rule_against_scripted_http_server(
    examples_home: Path, chat_server: ScriptedChatServer
) -> None:
    good = _protocol(GOOD_TURNS)

    def respond(body: dict[str, Any]) -> Reply:
        if _is_generation(body):
            return Reply.json({"answer": "about a million dollars", "found": True, "evidence": [1]})
        return good(body)

    chat_server.responder = respond
    with _llm_sg(chat_server, examples_home) as sg:
        answer = sg.ask(DISPATCH, "tqr")
        assert_cited(sg, answer)
    assert answer.answer == "$820 thousand"  # the model's draft, stated verbatim in a passage
    assert "no passage states the model's answer" in (answer.trace[-1].fallback or "")


def test_a_reply_without_tags_is_asked_again_once_against_scripted_http_server(
    examples_home: Path, chat_server: ScriptedChatServer
) -> None:
    chat_server.script.append(Reply(content="Sure, I can help with budgets!"))
    chat_server.responder = _protocol(GOOD_TURNS)
    with _llm_sg(chat_server, examples_home) as sg:
        answer = sg.ask(DISPATCH, "tqr")
    assert answer.found and answer.answer == "$820 thousand"
    assert answer.usage.llm_calls == len(chat_server.requests) == 5
    correction = chat_server.requests[1]["messages"]
    assert correction[-2] == {"role": "assistant", "content": "Sure, I can help with budgets!"}
    assert "neither a <query> nor an <answer>" in correction[-1]["content"]
    assert all(not t.fallback for t in answer.trace)


def test_a_malformed_answer_then_a_good_one_against_scripted_http_server(
    examples_home: Path, chat_server: ScriptedChatServer
) -> None:
    good = _protocol(GOOD_TURNS)
    sent: list[int] = []

    def respond(body: dict[str, Any]) -> Reply:
        if _is_generation(body) and not sent:
            sent.append(1)
            return Reply(content="The agreement costs a lot.")
        return good(body)

    chat_server.responder = respond
    with _llm_sg(chat_server, examples_home) as sg:
        answer = sg.ask(DISPATCH, "tqr")
    assert answer.answer == "$820 thousand" and answer.usage.llm_calls == len(chat_server.requests) == 5
    assert answer.trace[-1].fallback is None


def test_malformed_replies_twice_fall_back_and_say_so_against_scripted_http_server(
    examples_home: Path, chat_server: ScriptedChatServer
) -> None:
    chat_server.responder = lambda body: Reply(content="no idea")
    with _llm_sg(chat_server, examples_home) as sg:
        answer = sg.ask(DISPATCH, "tqr")
        assert answer.found and answer.answer == "$820 thousand"  # the algorithmic mode's answer
        assert_cited(sg, answer)
    # think: twice, then algorithmic from then on; the answer: twice (one correction round), then extraction
    assert answer.usage.llm_calls == len(chat_server.requests) == 4
    thinks = [t for t in answer.trace if t.node == "think"]
    assert "no <query> or <answer> in the model's reply, twice" in (thinks[0].fallback or "")
    assert "algorithmic mode" in thinks[1].decision and not thinks[1].llm
    assert "no usable reply" in (answer.trace[-1].fallback or "")
    assert "var1 = 'Harlow County'" in _decisions(answer, "think")


def test_an_answer_before_any_knowledge_is_checked_against_the_documents_against_scripted_http_server(
    examples_home: Path, chat_server: ScriptedChatServer
) -> None:
    chat_server.responder = _protocol(["<think>I know this.</think><answer>$820 thousand</answer>"])
    with _llm_sg(chat_server, examples_home) as sg:
        answer = sg.ask(DISPATCH, "tqr")
        assert_cited(sg, answer)
    assert [t.node for t in answer.trace] == ["decompose", "think", "retrieve", "answer"]
    assert answer.trace[2].tool_calls[0].args["query"] == DISPATCH  # the question itself was retrieved
    assert answer.usage.llm_calls == len(chat_server.requests) == 2


def test_passages_that_overflow_the_context_are_halved_against_scripted_http_server(
    examples_home: Path, chat_server: ScriptedChatServer
) -> None:
    good = _protocol(GOOD_TURNS)

    def respond(body: dict[str, Any]) -> Reply:
        if _is_generation(body) and re.search(r"^\[3\] ", user_text(body), re.MULTILINE):
            return Reply.error(400, "This model's maximum context length is 4096 tokens (context_length_exceeded)")
        return good(body)

    chat_server.responder = respond
    with _llm_sg(chat_server, examples_home) as sg:
        answer = sg.ask(DISPATCH, "tqr")
        assert answer.answer == "$820 thousand"
        assert_cited(sg, answer)
    assert "do not fit the model's context: 4 of them" in answer.trace[-1].decision
    assert "of them" in answer.trace[-1].decision and answer.usage.llm_calls == len(chat_server.requests)


def test_429_then_good_is_counted_once_per_request_against_scripted_http_server(
    examples_home: Path, chat_server: ScriptedChatServer
) -> None:
    chat_server.script.append(Reply.error(429, "slow down", **{"Retry-After": "0"}))
    chat_server.responder = _protocol(GOOD_TURNS)
    with _llm_sg(chat_server, examples_home) as sg:
        answer = sg.ask(DISPATCH, "tqr")
    assert answer.found and answer.usage.llm_calls == len(chat_server.requests) == 5


def test_a_server_without_json_schema_still_answers_against_scripted_http_server(examples_home: Path) -> None:
    server = ScriptedChatServer("llama_cpp").start()
    try:
        server.responder = _protocol(GOOD_TURNS)
        with _llm_sg(server, examples_home) as sg:
            answer = sg.ask(DISPATCH, "tqr")
            assert answer.answer == "$820 thousand"
            assert_cited(sg, answer)
        assert answer.usage.llm_calls == len(server.requests) == 5  # one json_schema refusal, then json_object
    finally:
        server.close()


def test_an_unreachable_endpoint_is_a_clear_error_naming_it(examples_home: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    settings = Settings(home=examples_home, llm_model="scripted", openai_base_url=url, request_retries=0,
                        request_timeout=2, llm_cache=False)  # fmt: skip
    with StrataGraph(settings) as sg, pytest.raises(LLMUnavailable, match=url.replace(".", r"\.")):
        sg.ask(DISPATCH, "tqr")


def test_cli_prints_the_cited_answer_and_node_events(examples_home: Path) -> None:
    from tests.conftest import run_cli

    proc = run_cli("--store", str(examples_home), "ask", DISPATCH, "--strategy", "tqr", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["answer"] == "$820 thousand" and data["strategy"] == "tqr" and len(data["citations"]) == 2
    assert "decompose" in proc.stderr and "think" in proc.stderr and "retrieve" in proc.stderr
