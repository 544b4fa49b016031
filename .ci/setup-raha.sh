#!/usr/bin/env bash
# Creates the Raha and Baran venv (.ci/venv.sh says where and how) that runs
# integrations/raha/raha_baran.py and tests/e2e/test_raha_baran.py: PyPI raha 1.26 needs
# pandas<2.2 and numpy<2, which uv.lock cannot hold beside the server's pandas>=2.2. The agent
# talks to the environment over HTTP only, so this venv holds none of the project's code.
# Idempotent: unchanged requirements leave the venv alone; `--force` rebuilds it.
set -euo pipefail
cd "$(dirname "$0")/.."
FORCE=${1:-}
source .ci/venv.sh

venv raha integrations/raha/requirements.txt -- -r integrations/raha/requirements.txt
echo "setup-raha.sh: run the agent with $VENVS/raha/bin/python integrations/raha/raha_baran.py"
