"""How the LLM agent is configured: endpoint, model, key, sampling, and the retry policy.

The environment variables are the original hackathon script's: `API_BASE_URL`,
`MODEL_NAME`, and the key in `HF_TOKEN` (or `OPENAI_API_KEY`). No key, no LLM: the runner
then uses the built-in heuristic agent, offline.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import openai

DEFAULT_API_BASE_URL = "https://router.huggingface.co/v1"
DEFAULT_MODEL_NAME = "Qwen/Qwen2.5-72B-Instruct"


@dataclass(frozen=True)
class LLMSettings:
    model: str
    base_url: str
    api_key: str
    temperature: float = 0.0
    max_tokens: int = 512
    timeout_s: float = 60.0

    @classmethod
    def from_environment(
        cls, environ: Mapping[str, str] | None = None, **options: Any
    ) -> LLMSettings | None:
        """Settings from the environment variables, or None when no key is set."""
        environ = os.environ if environ is None else environ
        key = environ.get("HF_TOKEN") or environ.get("OPENAI_API_KEY")
        if not key:
            return None
        return cls(
            model=environ.get("MODEL_NAME") or DEFAULT_MODEL_NAME,
            base_url=environ.get("API_BASE_URL") or DEFAULT_API_BASE_URL,
            api_key=key,
            **options,
        )

    def client(self) -> openai.OpenAI:
        import openai  # here, not at the top: importing it costs a second and a half

        return openai.OpenAI(
            base_url=self.base_url, api_key=self.api_key, timeout=self.timeout_s, max_retries=0
        )


@dataclass(frozen=True)
class RetryPolicy:
    retries: int = 5
    backoff_s: float = 1.0  # the first wait; doubled on each retry
    max_backoff_s: float = 30.0  # also caps what a Retry-After header asks for
    sleep: Callable[[float], None] = time.sleep

    def delay(self, attempt: int, retry_after: float | None) -> float:
        wanted = self.backoff_s * 2**attempt if retry_after is None else retry_after
        return min(self.max_backoff_s, max(0.0, wanted))
