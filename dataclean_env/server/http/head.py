"""HEAD wherever GET is: a HEAD request is served as the GET it names, without the body.

FastAPI's routes take only the methods they declare (Starlette's own routes add HEAD to GET,
FastAPI's do not), so `HEAD /web` and `HEAD /health` used to answer 405. Monitors, link
checkers and `curl -I` send HEAD; RFC 9110 asks for GET's status and headers (Content-Length
included) with no body.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class HeadAsGet:
    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return

        async def without_body(message: Message) -> None:
            if message["type"] == "http.response.body":
                if message.get("more_body", False):
                    return  # the server ends the answer at the last (empty) body message
                message = {"type": "http.response.body", "body": b""}
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, without_body)
