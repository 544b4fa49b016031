"""Import `openenv`'s server modules without running its heavy package `__init__` files.

`openenv.core/__init__` imports `openenv.core.env_server`, whose `__init__` imports its web
interface and with it gradio (seconds of start-up and ~200 MB, for a UI this project does not
mount). The modules the server needs (`env_server.types`, `interfaces`, `http_server`) import
only each other, fastapi, pydantic and fastmcp.

`skip_package_inits()` puts the two packages in `sys.modules` as empty package objects with
their real `__path__`, so `import openenv.core.env_server.types` loads that one file. The first
attribute the package object is asked for that it lacks (`from openenv.core import EnvClient`,
`import *`) runs the real `__init__` into it, so every other user of `openenv` still sees the
whole package: nothing is given up, the cost is only paid by whoever needs it.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
from types import ModuleType
from typing import Any

HEAVY_PACKAGES = ("openenv.core", "openenv.core.env_server")
_lock = threading.RLock()


def _lazy_package(name: str) -> ModuleType:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:  # pragma: no cover - openenv is a dependency
        raise ImportError(name)
    module = importlib.util.module_from_spec(spec)
    state = {"initialised": False}

    def __getattr__(attribute: str) -> Any:
        # Called only for names the module does not have yet: run the real __init__ once.
        with _lock:
            if state["initialised"] or (attribute.startswith("__") and attribute != "__all__"):
                raise AttributeError(f"module {name!r} has no attribute {attribute!r}")
            state["initialised"] = True
            del module.__dict__["__getattr__"]
            spec.loader.exec_module(module)  # type: ignore[union-attr]
        return getattr(module, attribute)

    module.__dict__["__getattr__"] = __getattr__
    return module


def skip_package_inits() -> None:
    """Make `import openenv.core.env_server.<module>` load only that module (idempotent)."""
    with _lock:
        import openenv  # noqa: F401  (its own __init__ is light: lazy attributes only)

        for name in HEAVY_PACKAGES:
            if name not in sys.modules:
                package = _lazy_package(name)
                sys.modules[name] = package
                parent, _, child = name.rpartition(".")
                setattr(sys.modules[parent], child, package)
