"""The server, by job; each sub-package imports only those before it in this list.

* `processes/`: which process is an episode's home, HAProxy's configuration, how uvicorn
  serves, the supervisor of `server --workers N`;
* `limits/`: rate limits, per-client quotas and the store the processes count in together;
* `store/`: the bounded store of episodes every door shares, and what a blind one shows;
* `http/`: the routes, the edge every request passes, request plumbing, the OpenAPI document;
* `openenv/`: OpenEnv's routes, its `Environment` and sessions, MCP.

On top: `metrics` (Prometheus and the request log, a leaf any of them may use), `app` (wires
them into the FastAPI app; `main`, the `server` command) and `worker` (one process of
`server --workers N`).
"""
