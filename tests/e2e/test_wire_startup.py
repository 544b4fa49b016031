"""The OpenEnv mount's slow part runs in a worker thread: registering the routes on the
event loop (where every request waits meanwhile) imports nothing more."""

from __future__ import annotations

from tests.support import probe_json

PROBE = """
import json, sys
from dataclean_env.server.app import create_app
from dataclean_env.server.openenv.openenv_routes import _import_openenv
from dataclean_env.settings import Settings

app = create_app(Settings(openenv_mount="lazy"))
_import_openenv()  # what OpenEnvMount.ensure runs in a worker thread
before = set(sys.modules)
app.state.openenv.now()  # the imports again (all loaded), then the registration
print(json.dumps({
    "imported_on_the_loop": sorted(set(sys.modules) - before),
    "routes": sorted(r.path for r in app.router.routes if getattr(r, "path", "") in ("/ws", "/schema")),
}))
"""


def test_registering_openenv_routes_imports_nothing_on_the_event_loop() -> None:
    result = probe_json(PROBE)
    assert result["routes"] == ["/schema", "/ws"]
    assert result["imported_on_the_loop"] == []
