"""The HAProxy configuration in front of the server's processes, for one machine
(`server --workers N` writes it for its Unix sockets) and for several (`deploy/haproxy.cfg`
is this text for three replicas: `python -m dataclean_env.server.processes.balancer` prints it).

Routing applies the one home rule of `affinity`: the episode id is read from the
X-Episode-Id header, overridden by the `episode_id` query parameter, overridden by the JSON
body's `episode_id` (the routes' precedence), and the call goes to backend
`p<crc32(id) mod N>`; a call without an id goes to p0, the home of the default episodes. A
/ws upgrade without `?episode_id=` is a new session, sent to the process with the fewest
open; `/ws?episode_id=lb-...` (a socket that joins a leaderboard episode) goes to that
episode's home. The processes check the rule again (421 MISDIRECTED), so a reading HAProxy
gets wrong is refused, never served twice.

HAProxy owns the edge: slow headers and bodies (`timeout http-request`), idle keep-alive,
the connection cap, bodies past the app's limit (413 from the Content-Length), malformed
framing, and an Upgrade the process does not accept (the connection stays HTTP: the next
request is routed and forwarded like any other). It appends the client's address to
X-Forwarded-For (`option forwardfor`); the processes trust it from the balancer only.
"""

from __future__ import annotations

import argparse

from dataclean_env.settings import Settings, get_settings

MAX_CONNECTIONS = 4096


def config(bind: str, servers: list[str], settings: Settings, check: bool = False) -> str:
    """HAProxy's configuration: listen on `bind`, process i at `servers[i]` (host:port, or
    unix@path); `check`: health-check them (for replicas on other machines)."""
    count = len(servers)
    probe = " check" if check else ""
    lines = [
        "global",
        f"    maxconn {MAX_CONNECTIONS}",
        "",
        "defaults",
        "    mode http",
        "    timeout connect 5s",
        f"    timeout http-request {settings.header_seconds:g}s   # slow headers (slowloris)",
        f"    timeout http-keep-alive {settings.keep_alive_seconds:g}s",
        "    timeout client 120s",
        "    timeout server 120s",
        "    timeout tunnel 1h            # open /ws sessions (the server closes idle ones)",
        "    option forwardfor            # X-Forwarded-For: the processes see the client",
        "",
        "frontend dataclean",
        f"    bind {bind}",
        f"    maxconn {MAX_CONNECTIONS}",
        f"    http-request deny deny_status 413 if {{ req.hdr_val(content-length) gt "
        f"{settings.max_body_bytes} }}",
        # The body is read before routing (it may hold the id), after the size check.
        f"    http-request wait-for-body time {settings.body_seconds:g}s",
        "    http-request set-var(txn.ep) req.hdr(x-episode-id) if { req.hdr(x-episode-id) -m found }",
        "    http-request set-var(txn.ep) url_param(episode_id),url_dec if { url_param(episode_id) -m found }",
        "    http-request set-var(txn.ep) req.body,json_query('$.episode_id') "
        "if { req.body,json_query('$.episode_id') -m found }",
        f"    http-request set-var(txn.home) var(txn.ep),crc32,mod({count}) "
        "if { var(txn.ep) -m found }",
        "    http-request set-var(txn.home) int(0) if !{ var(txn.ep) -m found }",
        "    use_backend sessions if { path /ws } !{ var(txn.ep) -m found }",
        "    use_backend p%[var(txn.home)]",
    ]
    for index, server in enumerate(servers):
        lines += ["", f"backend p{index}"]
        if check:
            lines += [
                "    option httpchk",
                "    http-check send meth GET uri /health ver HTTP/1.1 hdr host localhost",
            ]
        lines.append(f"    server p{index} {server}{probe}")
    lines += ["", "backend sessions", "    balance leastconn"]
    lines += [f"    server p{i} {server}{probe}" for i, server in enumerate(servers)]
    return "\n".join(lines) + "\n"


HEADER = """\
# Several replicas of the server behind HAProxy (Debian's haproxy 2.6), on several machines.
# Written by `python -m dataclean_env.server.processes.balancer` (a test keeps it current); edit the
# `bind` and `server` addresses. Replica i (listed as p<i>, in order) runs with
# DCE_PROCESS_INDEX=i and DCE_PROCESSES=<the number of replicas>, and trusts this balancer's
# address for X-Forwarded-For (DCE_FORWARDED_ALLOW_IPS). An episode's home is replica
# crc32(episode_id) mod N; calls without an id go to p0 (dataclean_env/server/processes/affinity.py).
# Replicas answer 421 MISDIRECTED for an episode homed elsewhere. Rate limits and caps hold
# for all replicas together when each runs with the same DCE_LIMITS_DB=postgresql://...
# (a database they share; the leaderboard's may be it); without it each replica counts its
# own and holds 1/N of each cap (docs/deployment.md).
"""
EXAMPLE_SERVERS = ["10.0.0.11:7860", "10.0.0.12:7860", "10.0.0.13:7860"]


def main() -> None:
    parser = argparse.ArgumentParser(description="Print the HAProxy configuration.")
    parser.add_argument("--bind", default="0.0.0.0:7860")
    parser.add_argument("servers", nargs="*", default=EXAMPLE_SERVERS)
    args = parser.parse_args()
    print(HEADER + config(args.bind, args.servers, get_settings(), check=True), end="")


if __name__ == "__main__":
    main()
