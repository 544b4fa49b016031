"""The LLM agent: any OpenAI-compatible chat API (Hugging Face router, OpenAI, vLLM, ...).

Configured by `llm_config.LLMSettings` (the environment variables of the original
hackathon's script) and `RetryPolicy`. Each turn sends the system prompt and one user message
built from the observation and the agent's earlier actions (`prompt.py`).

* A reply that holds no action is answered once with the parse error; a second unreadable
  reply raises `UnparseableReply`, which the loop counts as an invalid action. Nothing is
  ever sent to the environment in its place (in particular never a `finish`).
* Rate limits (429), connection failures and server errors (5xx) are retried with
  exponential backoff, honouring a `Retry-After` header; the client's own retries are off
  so that this policy is the only one.
"""

from __future__ import annotations

from typing import Any

import openai
from openai.types.chat import ChatCompletionMessageParam

from dataclean_env.agents.llm_config import LLMSettings, RetryPolicy
from dataclean_env.agents.parsing import UnparseableReply, parse_action
from dataclean_env.agents.prompt import SYSTEM_PROMPT, Turn, retry_message, user_message

RETRYABLE = (openai.RateLimitError, openai.APIConnectionError, openai.InternalServerError)


class LLMAgent:
    def __init__(self, client: openai.OpenAI, settings: LLMSettings, retry: RetryPolicy):
        self.name = settings.model
        self.client = client
        self.settings = settings
        self.retry = retry
        self.turns: list[Turn] = []
        # The previous action (None: the reply was unreadable) and, if so, why.
        self._pending: tuple[dict[str, Any] | None, str] | None = None

    def act(self, observation: dict[str, Any]) -> dict[str, Any]:
        if self._pending is not None:
            action, problem = self._pending
            self.turns.append(Turn(action, problem or observation["message"]))
        messages: list[ChatCompletionMessageParam] = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": user_message(observation, self.turns)},
        ]
        reply = self._complete(messages)
        try:
            action = parse_action(reply)
        except UnparseableReply as first:
            messages += [
                {"role": "assistant", "content": reply},
                {"role": "user", "content": retry_message(str(first))},
            ]
            try:
                action = parse_action(self._complete(messages))
            except UnparseableReply as second:
                self._pending = (None, f"unreadable reply: {second}")
                raise
        self._pending = (action, "")
        return action

    def _complete(self, messages: list[ChatCompletionMessageParam]) -> str:
        attempt = 0
        while True:
            try:
                response = self.client.chat.completions.create(
                    model=self.settings.model,
                    messages=messages,
                    temperature=self.settings.temperature,
                    max_tokens=self.settings.max_tokens,
                )
            except RETRYABLE as error:
                if attempt == self.retry.retries:
                    raise
                self.retry.sleep(self.retry.delay(attempt, _retry_after(error)))
                attempt += 1
                continue
            return response.choices[0].message.content or ""


def _retry_after(error: openai.OpenAIError) -> float | None:
    """Seconds a 429/5xx answer asks us to wait (`Retry-After` as a number), if it says."""
    response = getattr(error, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:  # an HTTP date: fall back to our own backoff
        return None
