"""The chat model layer against a real local HTTP server speaking OpenAI's chat-completions protocol: model
construction from settings, the client's single retry layer, endpoint failures as LLMUnavailable, the SQLite
reply cache, and prompt loading.

The scripted server lives in ``tests/scripted_llm.py``; its ``chat_server`` fixture is in ``conftest.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from stratagraph.config import Settings
from pydantic import BaseModel

from stratagraph.llm import (
    LLMCache,
    LLMUnavailable,
    LLMUsage,
    MalformedReply,
    OutputMode,
    ask_structured,
    ask_text,
    cache_key,
    endpoint_errors,
    get_chat_model,
    is_request_validation_error,
    output_mode,
    read_json_object,
)
from stratagraph.prompts import available_prompts, load_prompt
from tests.scripted_llm import Reply, ScriptedChatServer, closed_port

MESSAGES = [SystemMessage(content="You answer briefly."), HumanMessage(content="Say hello.")]


# --------------------------------------------------------------------------------------------- get_chat_model
def test_get_chat_model_is_none_without_model_or_endpoint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "STRATAGRAPH_OPENAI_API_KEY", "STRATAGRAPH_OPENAI_BASE_URL",
                 "STRATAGRAPH_LLM_MODEL"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    assert get_chat_model(Settings(home=tmp_path)) is None
    assert get_chat_model(Settings(home=tmp_path, llm_model="m")) is None  # nowhere to send requests
    assert get_chat_model(Settings(home=tmp_path, openai_base_url="http://127.0.0.1:9/v1")) is None  # no model


def test_get_chat_model_carries_settings(tmp_path: Path) -> None:
    from langchain_openai import ChatOpenAI

    model = get_chat_model(
        Settings(home=tmp_path, llm_model="m1", openai_base_url="http://127.0.0.1:9/v1", request_retries=4,
                 request_timeout=7.5)
    )  # fmt: skip
    assert isinstance(model, ChatOpenAI)
    assert (model.model_name, model.openai_api_base, model.max_retries, model.request_timeout, model.temperature) == (
        "m1", "http://127.0.0.1:9/v1", 4, 7.5, 0,
    )  # fmt: skip
    assert model.openai_api_key.get_secret_value() == "not-needed"
    keyed = get_chat_model(Settings(home=tmp_path, llm_model="m2", openai_api_key="sk-test"))
    assert keyed is not None and keyed.openai_api_key.get_secret_value() == "sk-test"


def test_chat_model_round_trip_against_scripted_http_server(tmp_path: Path, chat_server: ScriptedChatServer) -> None:
    chat_server.script.append(Reply(content="hello"))
    model = get_chat_model(chat_server.settings(tmp_path))
    assert model is not None
    assert model.invoke(MESSAGES).content == "hello"
    [body] = chat_server.requests
    assert body["model"] == "scripted" and body["temperature"] == 0
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert "max_tokens" not in body and "max_completion_tokens" not in body


def test_a_reply_limit_is_sent_as_max_tokens_and_a_cut_reply_is_malformed_against_scripted_http_server(
    tmp_path: Path, chat_server: ScriptedChatServer
) -> None:
    """llama.cpp's server reads max_tokens, not max_completion_tokens (what langchain-openai would send)."""
    chat_server.script.extend([Reply(content='{"answered": true, "reason": "a long ramb', finish_reason="length")] * 2)
    model = get_chat_model(chat_server.settings(tmp_path, llm_max_tokens=64))
    reply = ask_structured(model, Verdict, MESSAGES)
    assert [b["max_tokens"] for b in chat_server.requests] == [64, 64]
    assert all("max_completion_tokens" not in b for b in chat_server.requests)
    assert reply.value is None and "cut off" in " ".join(reply.problems)


# --------------------------------------------------------------------------------------------- one retry layer
def test_429_then_success_is_exactly_two_requests_against_scripted_http_server(
    tmp_path: Path, chat_server: ScriptedChatServer
) -> None:
    chat_server.script.extend([Reply.error(429, "slow down", **{"Retry-After": "0"}), Reply(content="ok")])
    model = get_chat_model(chat_server.settings(tmp_path, request_retries=2))
    assert model is not None
    with endpoint_errors(model):
        assert model.invoke(MESSAGES).content == "ok"
    assert len(chat_server.requests) == 2


def test_persistent_5xx_is_llm_unavailable_after_client_retries_against_scripted_http_server(
    tmp_path: Path, chat_server: ScriptedChatServer
) -> None:
    chat_server.responder = lambda body: Reply.error(503, "overloaded", **{"Retry-After": "0"})
    model = get_chat_model(chat_server.settings(tmp_path, request_retries=1))
    assert model is not None
    with pytest.raises(LLMUnavailable) as info, endpoint_errors(model):
        model.invoke(MESSAGES)
    assert len(chat_server.requests) == 2  # the first try and the client's one retry, nothing more
    message = str(info.value)
    assert "\n" not in message and chat_server.base_url in message and "503" in message


def test_401_is_llm_unavailable_without_retry_against_scripted_http_server(
    tmp_path: Path, chat_server: ScriptedChatServer
) -> None:
    chat_server.script.append(Reply.error(401, "invalid api key"))
    model = get_chat_model(chat_server.settings(tmp_path, openai_api_key="sk-wrong"))
    assert model is not None
    with pytest.raises(LLMUnavailable, match="refused the API key"), endpoint_errors(model):
        model.invoke(MESSAGES)
    assert len(chat_server.requests) == 1


def test_refused_connection_is_llm_unavailable_quickly(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    model = get_chat_model(
        Settings(home=tmp_path, llm_model="scripted", openai_base_url=url, request_retries=1, request_timeout=2)
    )
    assert model is not None
    started = time.monotonic()
    with pytest.raises(LLMUnavailable) as info, endpoint_errors(model):
        model.invoke(MESSAGES)
    assert time.monotonic() - started < 5
    message = str(info.value)
    assert "\n" not in message and url in message and "unreachable" in message


def test_endpoint_errors_leaves_other_exceptions_alone() -> None:
    with pytest.raises(KeyError), endpoint_errors(object()):
        raise KeyError("not an endpoint problem")


def test_only_request_validation_bodies_count_as_deterministic() -> None:
    assert is_request_validation_error("1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'x')}")
    assert is_request_validation_error('{"detail": [{"loc": ["body", "messages"], "msg": "Field required"}]}')
    assert is_request_validation_error("Unrecognized request argument supplied: response_format")
    assert not is_request_validation_error("CUDA out of memory")
    assert not is_request_validation_error("upstream connect error or disconnect/reset before headers")
    assert not is_request_validation_error("")


# --------------------------------------------------------------------------------------------- structured output
class Verdict(BaseModel):
    answered: bool
    score: float = 0.0
    reason: str = ""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"answered": true}', {"answered": True}),
        ('<think>plan {x}</think>Sure: {"answered": false, "score": 2} hope this helps', {"answered": False, "score": 2}),
        ("Here:\n```json\n{'answered': true, 'score': '0.5',}\n```\nDone.", {"answered": True, "score": "0.5"}),
        ("{answered: true, // a comment\n reason: 'it says so'}", {"answered": True, "reason": "it says so"}),
        ('{"reason": "a } inside a string", "answered": true} and more', {"reason": "a } inside a string", "answered": True}),
    ],
)
def test_read_json_object_reads_what_needs_no_guessing(text: str, expected: dict) -> None:
    assert read_json_object(text) == expected


@pytest.mark.parametrize(
    ("text", "reason"),
    [("", "empty"), ("   ", "empty"), ("no json here", "no JSON object"), ("[1, 2]", "no JSON object"),
     ('{"answered": tr', "not closed"), ("```json\n[1, 2]\n```", "could not be read|not an object")],
)  # fmt: skip
def test_read_json_object_refuses_what_would_need_a_guess(text: str, reason: str) -> None:
    with pytest.raises(MalformedReply, match=reason):
        read_json_object(text)


def test_ask_structured_numbers_as_strings_and_missing_fields_validate_against_scripted_http_server(
    tmp_path: Path, chat_server: ScriptedChatServer
) -> None:
    chat_server.script.append(Reply(content='{"answered": "true", "score": "0.75"}'))
    model = get_chat_model(chat_server.settings(tmp_path))
    reply = ask_structured(model, Verdict, MESSAGES)
    assert reply.value == Verdict(answered=True, score=0.75) and reply.problems == []
    assert reply.usage == LLMUsage(llm_calls=1, input_tokens=10, output_tokens=10)
    body = chat_server.requests[0]
    assert body["response_format"]["type"] == "json_schema" and body["response_format"]["json_schema"]["strict"]
    assert body["response_format"]["json_schema"]["schema"]["required"] == ["answered", "score", "reason"]


def test_ask_structured_malformed_then_good_is_two_requests_against_scripted_http_server(
    tmp_path: Path, chat_server: ScriptedChatServer
) -> None:
    chat_server.script.extend([Reply(content="I think yes."), Reply.json({"answered": True, "reason": "stated"})])
    model = get_chat_model(chat_server.settings(tmp_path))
    reply = ask_structured(model, Verdict, MESSAGES, what="judge of question q1")
    assert reply.value == Verdict(answered=True, reason="stated") and reply.corrected
    assert reply.problems == ["the reply contains no JSON object"] and reply.usage.llm_calls == 2
    second = chat_server.requests[1]["messages"]
    assert [m["role"] for m in second] == ["system", "user", "assistant", "user"]
    assert second[2]["content"] == "I think yes." and "no JSON object" in second[3]["content"]


def test_ask_structured_malformed_twice_returns_no_value_and_says_why_against_scripted_http_server(
    tmp_path: Path, chat_server: ScriptedChatServer, caplog: pytest.LogCaptureFixture
) -> None:
    chat_server.script.extend([Reply(content="maybe"), Reply(content='{"score": 1}')])
    model = get_chat_model(chat_server.settings(tmp_path))
    reply = ask_structured(model, Verdict, MESSAGES, what="judge of question q7")
    assert reply.value is None and reply.usage.llm_calls == 2
    assert reply.problems[0] == "the reply contains no JSON object" and "answered: Field required" in reply.problems[1]
    assert "judge of question q7" in caplog.text


def test_ask_structured_caches_usable_replies_only_against_scripted_http_server(
    tmp_path: Path, chat_server: ScriptedChatServer
) -> None:
    chat_server.responder = lambda body: Reply.json({"answered": True})
    model = get_chat_model(chat_server.settings(tmp_path))
    with LLMCache(tmp_path / "c.sqlite") as store:
        first = ask_structured(model, Verdict, MESSAGES, store=store)
        again = ask_structured(model, Verdict, MESSAGES, store=store)
    assert first.value == again.value and again.cached and again.usage.llm_calls == 0
    assert len(chat_server.requests) == 1


def test_usage_counts_the_clients_retries_against_scripted_http_server(
    tmp_path: Path, chat_server: ScriptedChatServer
) -> None:
    chat_server.script.extend([Reply.error(429, "slow down", **{"Retry-After": "0"}), Reply(content="fine")])
    model = get_chat_model(chat_server.settings(tmp_path, request_retries=2))
    usage = LLMUsage()
    assert ask_text(model, MESSAGES, usage) == "fine"
    assert usage.llm_calls == len(chat_server.requests) == 2


def test_a_model_that_is_not_openai_compatible_starts_at_the_prompt_rung() -> None:
    from langchain_core.language_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage

    model = GenericFakeChatModel(messages=iter([AIMessage(content='Result: {"answered": true}')]))
    assert output_mode(model) == OutputMode.PROMPT
    reply = ask_structured(model, Verdict, MESSAGES)
    assert reply.value == Verdict(answered=True) and reply.mode == OutputMode.PROMPT


# --------------------------------------------------------------------------------------------- cache
def test_cache_key_is_canonical_and_covers_every_input() -> None:
    base = {
        "model": "m",
        "messages": MESSAGES,
        "schema_name": "S",
        "schema": {"type": "object", "properties": {"a": {"type": "string"}}},
        "temperature": 0,
    }
    key = cache_key(**base)
    assert len(key) == 64 and key == cache_key(**base)
    as_dicts = [{"role": "system", "content": "You answer briefly."}, {"role": "user", "content": "Say hello."}]
    assert cache_key(**{**base, "messages": as_dicts}) == key
    reordered_schema = {"properties": {"a": {"type": "string"}}, "type": "object"}
    assert cache_key(**{**base, "schema": reordered_schema}) == key  # canonical JSON: key order is irrelevant
    variants = [
        {"model": "m2"},
        {"messages": list(reversed(MESSAGES))},
        {"messages": [MESSAGES[0], HumanMessage(content="Say hello!")]},
        {"schema_name": "T"},
        {"schema": {"type": "object"}},
        {"temperature": 0.7},
    ]
    assert len({cache_key(**{**base, **v}) for v in variants} | {key}) == len(variants) + 1


def test_cache_round_trip_counters_and_persistence(tmp_path: Path) -> None:
    path = tmp_path / "store" / "llm_cache.sqlite"
    with LLMCache(path) as cache:
        assert cache.get("k1") is None
        cache.put("k1", '{"facts": []}')
        cache.put("k2", "two")
        cache.put("k2", "two, replaced")
        assert cache.get("k1") == '{"facts": []}' and cache.get("k2") == "two, replaced"
        assert (cache.hits, cache.misses, len(cache)) == (2, 1, 2)
        journal = cache._connection().execute("PRAGMA journal_mode").fetchone()[0]
        assert journal.lower() == "wal"
    with LLMCache(path) as reopened:
        assert reopened.get("k2") == "two, replaced" and (reopened.hits, reopened.misses) == (1, 0)
    with pytest.raises(RuntimeError, match="closed"):
        cache.get("k1")


def test_cache_is_shared_by_threads_and_processes(tmp_path: Path) -> None:
    path = tmp_path / "llm_cache.sqlite"
    cache = LLMCache(path)
    script = (
        "import sys\nfrom stratagraph.llm import LLMCache\n"
        "c = LLMCache(sys.argv[1])\n"
        "for i in range(50):\n    c.put(f'proc-{i}', str(i))\n"
        "print(c.get('thread-7'))\nc.close()\n"
    )
    cache.put("thread-7", "written before the process started")
    proc = subprocess.Popen([sys.executable, "-c", script, str(path)], stdout=subprocess.PIPE, text=True)

    def writer(n: int) -> None:
        for i in range(50):
            cache.put(f"t{n}-{i}", f"{n}:{i}")
            assert cache.get(f"t{n}-{i}") == f"{n}:{i}"

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0 and out.strip() == "written before the process started"
    assert len(cache) == 1 + 4 * 50 + 50
    assert cache.get("proc-49") == "49" and cache.get("t3-49") == "3:49"
    cache.close()


# --------------------------------------------------------------------------------------------- prompts
def test_load_prompt_unknown_name_lists_available_prompts() -> None:
    with pytest.raises(FileNotFoundError) as info:
        load_prompt("no_such_prompt")
    message = str(info.value)
    assert "no_such_prompt" in message and "extract_facts.system" in message and "extract_facts.user" in message
    with pytest.raises(FileNotFoundError):
        load_prompt("../config")


def test_extraction_prompts_format_and_keep_json_braces() -> None:
    assert {"extract_facts.system", "extract_facts.user", "extract_facts.correction"} <= set(available_prompts())
    system = load_prompt("extract_facts.system")
    assert load_prompt("extract_facts.system") is system  # read once, cached
    json.loads(system[system.index("\n{\n") : system.rindex("}") + 1])  # the JSON example is valid JSON
    values = {
        "title": "T{1}",
        "heading_path": "A > B",
        "previous_facts": "- a fact",
        "previous_sentences": "Before.",
        "text": 'Body with {"braces"} and $5.',
    }
    user = load_prompt("extract_facts.user").format(**values)
    for value in values.values():
        assert value in user
    assert load_prompt("extract_facts.correction").format(error="bad JSON").count("bad JSON") == 1
