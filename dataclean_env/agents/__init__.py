"""Agents: anything with a `name` and `act(observation) -> action dict`, kept apart from the
environment core. `reference` holds the protocol and the no-op, random and oracle agents;
`heuristic` (with its `rule_card` reader) is the project's baseline; `llm` drives any
OpenAI-compatible chat model."""
