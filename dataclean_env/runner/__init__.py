"""Run agents on the environment: the machinery behind `inference.py` and the baselines.

agents.py     the agent protocol and the no-op, random and oracle agents
llm.py        the LLM agent (OpenAI-compatible chat API) and its retry policy
prompt.py     what the LLM is shown; parsing.py reads its reply as one action
envs.py       where an episode runs: in-process or a server over /ws
loop.py       one episode and its graders' log lines (logs.py)
selection.py  which (task, seed) episodes a run plays
cli.py        the `inference.py` command line; results.py its JSON-lines output
stats.py, report.py, baselines.py   the baseline report (docs/BASELINES.md)
suite_report.py  its suite section and the README results block, from the suite file
"""
