"""/ws frames go uncompressed unless DCE_WS_COMPRESSION is on (permessage-deflate costs the
server CPU per observation frame); either way a session plays the same."""

from __future__ import annotations

import json

from websockets.sync.client import connect

from dataclean_env.settings import Settings
from tests.web import LiveServer


def _extensions_and_frame(settings: Settings) -> tuple[list[str], dict]:
    with LiveServer(settings) as server:
        url = server.url.replace("http://", "ws://") + "/ws"
        with connect(url, open_timeout=120) as ws:  # the client offers permessage-deflate
            ws.send(json.dumps({"type": "reset", "data": {"task_id": "easy_dedup_rename"}}))
            frame = json.loads(ws.recv(timeout=120))
            return [type(e).__name__ for e in ws.protocol.extensions], frame


def test_ws_frames_are_not_compressed_by_default_and_can_be():
    plain, frame = _extensions_and_frame(Settings(openenv_mount="eager"))
    assert plain == []
    assert frame["type"] == "observation"
    deflated, frame = _extensions_and_frame(Settings(openenv_mount="eager", ws_compression=True))
    assert deflated == ["PerMessageDeflate"]
    assert frame["type"] == "observation"
