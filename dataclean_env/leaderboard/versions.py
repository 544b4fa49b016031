"""Versions stamped on every leaderboard record; one board per grader version.

Bump GRADER_VERSION when grading or an operation changes what a trace scores, and
GENERATOR_VERSION when a generator changes what an instance holds; then run
`python -m dataclean_env.leaderboard.audit --rescore` to score every stored run again.
"""

from __future__ import annotations

from dataclean_env import __version__

SERVER_VERSION = __version__
GRADER_VERSION = "grader-1"
GENERATOR_VERSION = "generator-1"
