#!/usr/bin/env bash
# Creates the training venvs the e2e tests use (.ci/venv.sh says where and how):
#   trl/        torch (CPU), TRL and friends, and this checkout (editable)  tests/e2e/test_trl.py
#   verifiers/  verifiers 0.4 and integrations/verifiers (editable)         tests/e2e/test_verifiers.py
# Idempotent: a venv whose inputs (requirements, pyproject, checkout path) are unchanged is left
# alone, a changed one is updated in place by pip, `--force` rebuilds both from scratch.
set -euo pipefail
cd "$(dirname "$0")/.."
FORCE=${1:-}
source .ci/venv.sh

venv trl examples/requirements-trl.txt pyproject.toml -- -r examples/requirements-trl.txt -e .
venv verifiers integrations/verifiers/pyproject.toml -- -e integrations/verifiers
