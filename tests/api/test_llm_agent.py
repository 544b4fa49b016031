"""The LLM path of inference.py against a local stand-in for an OpenAI-compatible endpoint
(127.0.0.1 only): fenced and prose replies, a malformed reply retried once, a 429, and the
retry policy for rate limits and connection errors."""

from __future__ import annotations

import json
import socket
import threading
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import openai
import pytest

import inference
from dataclean_env.agents.llm import LLMAgent
from dataclean_env.agents.llm_config import LLMSettings, RetryPolicy
from dataclean_env.agents.protocol import EpisodeKey
from dataclean_env.runner.backends import LocalBackend
from dataclean_env.runner.loop import run_episode

RENAME = {"EMP ID": "emp_id", "EMP NAME": "emp_name", "DEP T": "dept", "SAL ARY": "salary"}
RENAME |= {"AGE": "age"}


@dataclass(frozen=True)
class Reply:
    content: str = ""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


class FakeOpenAI:
    """`POST /v1/chat/completions` answered from a script, one reply per request; the
    request bodies are kept. A request past the script's end gets a 400 (not retried)."""

    def __init__(self, script: list[Reply]):
        self.script = deque(script)
        self.requests: list[dict[str, Any]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers["content-length"])
                fake.requests.append(json.loads(self.rfile.read(length)))
                reply = fake.script.popleft() if fake.script else Reply(status=400)
                if self.path != "/v1/chat/completions":
                    reply = Reply(status=404)
                body = json.dumps(completion(reply.content) if reply.status == 200 else error())
                self.send_response(reply.status)
                for name, value in {"content-type": "application/json", **reply.headers}.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body.encode())

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)


def completion(content: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": "fake-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def error() -> dict[str, Any]:
    return {"error": {"message": "scripted error", "type": "test", "code": None}}


@pytest.fixture
def fake_openai() -> Iterator[Callable[[list[Reply]], FakeOpenAI]]:
    servers: list[FakeOpenAI] = []

    def start(script: list[Reply]) -> FakeOpenAI:
        servers.append(FakeOpenAI(script))
        return servers[-1]

    try:
        yield start
    finally:
        for server in servers:
            server.close()


def action(operation: str, **parameters: Any) -> str:
    return json.dumps({"operation": operation, "parameters": parameters})


def test_llm_episode_with_fences_prose_a_malformed_reply_and_a_429(
    fake_openai, registry, monkeypatch, tmp_path, capsys
) -> None:
    server = fake_openai(
        [
            Reply(status=429, headers={"retry-after": "0"}),
            Reply(f"```json\n{action('remove_duplicates')}\n```"),
            Reply(f"The headers are garbled, so: {action('rename_columns', mapping=RENAME)} ok?"),
            Reply("The table looks clean to me."),
            Reply("{'operation': finish"),
            Reply(action("drop_everything")),
            Reply('Done. {"action": {"name": "finish", "reason": "clean"}}'),
        ]
    )
    monkeypatch.setenv("API_BASE_URL", server.url)
    monkeypatch.setenv("MODEL_NAME", "fake-model")
    monkeypatch.setenv("HF_TOKEN", "test-key")
    results = tmp_path / "llm.jsonl"
    argv = ["--tasks", "easy_dedup_rename", "--temperature", "0.3", "--max-tokens", "77"]
    argv += ["--backoff", "0.01", "--max-backoff", "0.05", "--results", str(results)]

    assert inference.main(argv) == 0

    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "[START] task=easy_dedup_rename env=data-cleaning-openenv model=fake-model"
    assert lines[1] == (
        '[STEP] step=1 action={"operation":"remove_duplicates","parameters":{}} '
        "reward=0.50 done=false error=null"
    )
    assert lines[2].startswith('[STEP] step=2 action={"operation":"rename_columns"')
    assert lines[2].endswith(" reward=1.00 done=false error=null")
    assert lines[3] == (
        "[STEP] step=3 action=null reward=1.00 done=false "
        "error=unparseable reply: no JSON object found in the reply"
    )
    assert lines[4].startswith(
        '[STEP] step=4 action={"operation":"drop_everything","parameters":{}} reward=1.00 '
        "done=false error=unknown operation 'drop_everything'; this task's operations:"
    )
    assert lines[5] == (
        '[STEP] step=5 action={"operation":"finish","parameters":{}} '
        "reward=1.00 done=true error=null"
    )
    assert lines[6] == "[END] success=true steps=5 score=1.00 rewards=0.50,1.00,1.00,1.00,1.00"
    assert len(lines) == 7

    # Seven requests: the 429 was retried, and so was the first malformed reply, once.
    assert len(server.requests) == 7
    assert {r["model"] for r in server.requests} == {"fake-model"}
    assert {(r["temperature"], r["max_tokens"]) for r in server.requests} == {(0.3, 77)}
    retry = server.requests[4]["messages"]
    assert [m["role"] for m in retry] == ["system", "user", "assistant", "user"]
    assert retry[2]["content"] == "The table looks clean to me."
    assert retry[3]["content"].startswith(
        "Your reply could not be read as an action (no JSON object found in the reply)."
    )
    # The prompt shows the task, the table and the operations with their parameters...
    first = server.requests[0]["messages"][1]["content"]
    assert first.startswith(f"Task: {registry.spec('easy_dedup_rename').description}\n")
    assert "- rename_columns(mapping?: object) - Rename columns by `mapping`" in first
    assert "- EMP ID: int64, 0 missing" in first
    # ... and, later, what each earlier action did.
    last = server.requests[6]["messages"][1]["content"]
    assert "3. (unreadable reply) -> unreadable reply: no JSON object found" in last
    assert "4. " + action("drop_everything") + " -> Error (UNKNOWN_OPERATION)" in last

    record = json.loads(results.read_text())
    assert (record["model"], record["steps"], record["invalid_actions"]) == ("fake-model", 5, 2)
    assert (record["score"], record["success"], record["error"]) == (0.9999, True, None)


def test_rate_limits_and_server_errors_back_off_honouring_retry_after(fake_openai) -> None:
    server = fake_openai(
        [
            Reply(status=429, headers={"retry-after": "7"}),
            Reply(status=503),
            Reply(status=429, headers={"retry-after": "120"}),
            Reply(action("finish")),
        ]
    )
    waits: list[float] = []
    retry = RetryPolicy(retries=3, backoff_s=0.5, max_backoff_s=60.0, sleep=waits.append)
    agent = llm_agent(server.url, retry)
    env = LocalBackend(inference.default_registry())
    result = run_episode(env, agent, EpisodeKey("fix_types", 0, "eval"))
    assert waits == [7.0, 1.0, 60.0]  # Retry-After, then 0.5 * 2**1, then the cap
    assert (result.steps, result.invalid_actions, result.error) == (1, 0, None)


def test_retries_run_out_and_end_the_episode_with_its_end_line(fake_openai, capsys) -> None:
    server = fake_openai([Reply(status=429), Reply(status=429)])
    waits: list[float] = []
    agent = llm_agent(server.url, RetryPolicy(retries=1, backoff_s=0.25, sleep=waits.append))
    env = LocalBackend(inference.default_registry())
    result = run_episode(env, agent, EpisodeKey("fix_types", 0, "eval"))
    assert waits == [0.25]
    assert result.error.startswith("RateLimitError")
    assert capsys.readouterr().out.splitlines()[-1] == (
        "[END] success=false steps=0 score=0.20 rewards="
    )


def test_connection_errors_are_retried_with_exponential_backoff() -> None:
    with socket.socket() as probe:  # a port with nothing listening
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    waits: list[float] = []
    agent = llm_agent(url, RetryPolicy(retries=3, backoff_s=0.1, sleep=waits.append))
    observation = LocalBackend(inference.default_registry()).reset(
        EpisodeKey("fix_types", 0, "eval")
    )
    with pytest.raises(openai.APIConnectionError):
        agent.act(observation.observation)
    assert waits == [0.1, 0.2, 0.4]


def test_settings_come_from_the_environment_variables() -> None:
    assert LLMSettings.from_environment({}) is None
    settings = LLMSettings.from_environment({"OPENAI_API_KEY": "k"}, max_tokens=64)
    assert (settings.api_key, settings.max_tokens) == ("k", 64)
    assert settings.base_url == "https://router.huggingface.co/v1"
    both = {"HF_TOKEN": "hf", "OPENAI_API_KEY": "oa", "MODEL_NAME": "m", "API_BASE_URL": "u"}
    assert LLMSettings.from_environment(both) == LLMSettings("m", "u", "hf")


def llm_agent(url: str, retry: RetryPolicy) -> LLMAgent:
    settings = LLMSettings(model="fake-model", base_url=url, api_key="test-key", timeout_s=5)
    return LLMAgent(settings.client(), settings, retry)


def test_the_llm_is_shown_its_query_result(fake_openai, monkeypatch, capsys) -> None:
    ask = "SELECT country, count(*) AS n FROM t GROUP BY country ORDER BY n DESC, country LIMIT 2"
    server = fake_openai([Reply(action("query", sql=ask)), Reply(action("finish"))])
    monkeypatch.setenv("API_BASE_URL", server.url)
    monkeypatch.setenv("MODEL_NAME", "fake-model")
    monkeypatch.setenv("HF_TOKEN", "test-key")
    argv = ["--tasks", "crm", "--seeds", "3", "--split", "train", "--backoff", "0.01"]

    assert inference.main(argv) == 0

    capsys.readouterr()
    after = server.requests[1]["messages"][1]["content"].splitlines()
    shown = after.index("Last result: Query returned 2 rows.")
    assert after[shown + 1 : shown + 4] == [
        'Query result columns: ["country", "n"]',
        '["Canada", 42]',
        '["Japan", 30]',
    ]
    first = server.requests[0]["messages"][1]["content"]
    assert "Query result columns" not in first
