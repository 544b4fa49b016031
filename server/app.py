"""OpenEnv's layout: `server/app.py` defines `app` and `main`. The code is in the package."""

from dataclean_env.server.app import app, main

__all__ = ["app", "main"]

if __name__ == "__main__":
    main()
