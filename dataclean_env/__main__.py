"""`python -m dataclean_env`: serve the environment (the `dataclean-env-server` command)."""

from dataclean_env.server.app import main

main()
