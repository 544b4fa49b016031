"""`inference.py --leaderboard NAME --env-url URL`: one whole leaderboard run with any agent.

The server picks the instances (a fresh draw of the suite from its secret split) and scores
them itself; this side asks for a run (under the token in DCE_LEADERBOARD_TOKEN, if set),
plays each of its blind episodes over /ws (a reset with the episode id joins it), sends
`finish` to any episode the agent leaves open, and prints the run's normalised score and
where to see its record. The log lines are the usual ones; while the run is open, its
rewards read 0.00 (the server shows no score of a run before the run ends), so `[END]`
carries a score only for the episode that ends the run; the run's record has them all.

`--resume RUN_ID` continues a run this client started: the episode ids are what lets one
play, and the server tells them only once (its public status never shows them), so the run's
start answer is kept in a ticket file (`--runs-dir`, `var/leaderboard-runs/RUN_ID.json`).
Resuming reads the run's public status and plays the episodes still open, each joined as it
stands; ended ones are not played again (one attempt per instance).
"""

from __future__ import annotations

import json
import sys
import urllib.error
import urllib.request
from dataclasses import replace
from pathlib import Path
from typing import Any

from dataclean_env.agents.protocol import AgentFactory, EpisodeKey
from dataclean_env.benchmark.results import EpisodeResult
from dataclean_env.runner.backends import RemoteBackend, Step, seen
from dataclean_env.runner.loop import run_episode

FINISH = {"operation": "finish", "parameters": {}}
RUNS_DIR = Path("var/leaderboard-runs")  # run tickets, relative to where the runner runs


class JoinedEpisodes(RemoteBackend):
    """/ws episodes the server issued: `reset(key)` joins the episode id the key stands for."""

    def __init__(self, base_url: str, episode_ids: dict[EpisodeKey, str]):
        # A run's episodes are issued by one process, so they share one home: the socket
        # names the first and reaches it behind the balancer (`/ws?episode_id=`).
        super().__init__(base_url, home_of=next(iter(episode_ids.values()), None))
        self.episode_ids = episode_ids
        self._last: Step | None = None

    def reset(self, key: EpisodeKey) -> Step:
        self._last = seen(self.env.join(self.episode_ids[key]))
        return self._last

    def step(self, action: dict[str, Any]) -> Step:
        self._last = super().step(action)
        return self._last

    @property
    def done(self) -> bool:
        return self._last is not None and self._last.done


def declared(args: Any, agent_name: str) -> dict[str, Any]:
    """What the run record shows of the agent: an LLM's prompt and temperature, or the
    built-in policy's name."""
    if args.agent in ("auto", "llm") and agent_name not in ("heuristic",):
        from dataclean_env.agents.prompt import SYSTEM_PROMPT

        return {"prompt": SYSTEM_PROMPT, "temperature": args.temperature}
    return {"policy": agent_name}


def request_json(
    url: str,
    body: dict[str, Any] | None = None,
    timeout: float = 120,
    token: str | None = None,
) -> Any:
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=data, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return json.load(answer)
    except urllib.error.HTTPError as error:
        detail = error.read().decode(errors="replace")
        raise SystemExit(f"{url}: {error.code} {detail}") from None
    except urllib.error.URLError as error:
        raise SystemExit(f"{url}: {error.reason}") from None


def run(
    base_url: str,
    name: str,
    make_agent: AgentFactory,
    agent_name: str,
    suite: str | None = "full",
    families: list[str] | None = None,
    episodes: int | None = None,
    runs_dir: Path = RUNS_DIR,
    token: str | None = None,
    declared: dict[str, Any] | None = None,
) -> list[EpisodeResult]:
    base = base_url.rstrip("/")
    body: dict[str, Any] = {"name": name, "model": agent_name}
    if suite and not (families or episodes):
        body["suite"] = suite
    if families:
        body["families"] = families
    if episodes:
        body["episodes"] = episodes
    if declared:
        body["agent"] = declared
    started = request_json(f"{base}/leaderboard/runs", body, token=token)
    run_id = started["run_id"]
    ticket = _ticket(runs_dir, run_id)
    ticket.parent.mkdir(parents=True, exist_ok=True)
    ticket.write_text(json.dumps({"env_url": base, **started}), encoding="utf-8")
    kind = started.get("suite_version") or "practice, never ranked"
    print(
        f"Leaderboard run {run_id} ({kind}) as {started['name']}"
        f"{' (anonymous)' if started.get('anonymous') else ''}: "
        f"{len(started['episodes'])} episodes (ticket: {ticket})",
        file=sys.stderr,
    )
    return _play(
        base, run_id, started["episodes"], make_agent, set(range(len(started["episodes"])))
    )


def resume(
    base_url: str, run_id: str, make_agent: AgentFactory, runs_dir: Path = RUNS_DIR
) -> list[EpisodeResult]:
    """Play the episodes of run `run_id` that are still open (see the module docstring)."""
    base = base_url.rstrip("/")
    ticket = _ticket(runs_dir, run_id)
    if not ticket.is_file():
        raise SystemExit(
            f"no ticket for run {run_id!r} in {runs_dir}: a run can be resumed only where it "
            "was started (the server shows its episode ids only once)"
        )
    started = json.loads(ticket.read_text(encoding="utf-8"))
    status = request_json(f"{base}/leaderboard/runs/{run_id}")
    if status["status"] != "open":
        raise SystemExit(f"run {run_id} is {status['status']}: nothing left to play")
    still_open = {e["position"] for e in status["episodes"] if e["status"] == "open"}
    print(f"Resuming run {run_id}: {len(still_open)} episodes still open", file=sys.stderr)
    return _play(base, run_id, started["episodes"], make_agent, still_open)


def _ticket(runs_dir: Path, run_id: str) -> Path:
    if not run_id.replace("-", "").replace("_", "").isalnum():
        raise SystemExit(f"not a run id: {run_id!r}")  # it names a file
    return runs_dir / f"{run_id}.json"


def _play(
    base: str,
    run_id: str,
    episodes: list[dict[str, Any]],
    make_agent: AgentFactory,
    positions: set[int],
) -> list[EpisodeResult]:
    keys = {
        EpisodeKey(e["task_id"], position, "secret"): e["episode_id"]
        for position, e in enumerate(episodes)
        if position in positions
    }
    env = JoinedEpisodes(base, keys)
    finished = []
    try:
        for key in keys:
            try:
                result = run_episode(env, make_agent(key), key)
                if not env.done:  # the agent stopped early: end it, so the run can complete
                    final = env.step(FINISH)
                    result = replace(result, score=final.score)
            except Exception as error:  # a lost connection, a dead server: say how to go on
                raise SystemExit(
                    f"run {run_id} stopped at episode {key.seed} ({type(error).__name__}: "
                    f"{error}); continue it with --resume {run_id} --env-url {base}"
                ) from None
            finished.append(result)
    finally:
        env.close()
    status = request_json(f"{base}/leaderboard/runs/{run_id}")
    summary = status.get("summary")
    print(
        f"Run {run_id} is {status['status']}"
        + (
            f", normalised score {summary['normalised']:.4f} "
            f"[{summary['ci_low']:.4f}, {summary['ci_high']:.4f}] (raw {summary['raw']:.4f})"
            if summary
            else ""
        )
        + f". Leaderboard: {base}/leaderboard (this run: {base}/leaderboard/runs/{run_id})",
        file=sys.stderr,
    )
    return finished
