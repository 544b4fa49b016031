#!/usr/bin/env bash
# Creates the training venvs the e2e tests use, outside uv.lock. Idempotent: a venv whose inputs
# (requirements, pyproject) are unchanged is left alone, a changed one is updated in place by
# pip, and `--force` rebuilds both from scratch.
#   .venv-trl        torch (CPU), TRL and friends, and this project      (tests/e2e/test_trl.py)
#   .venv-verifiers  verifiers 0.4 and integrations/verifiers            (tests/e2e/test_verifiers.py)
# Plain `python -m venv` + pip: pip finds a CPU torch wheel in a local wheel folder
# (WHEELS, default /opt/wheels where present); uv would not look there.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
WHEELS=${WHEELS:-/opt/wheels}
FORCE=${1:-}
find_links=()
[ -d "$WHEELS" ] && find_links=(--find-links "$WHEELS")

# venv NAME STAMP-INPUTS... -- PIP-ARGS...: (re)build NAME unless its stamp matches the inputs.
venv() {
  local name=$1; shift
  local inputs=()
  while [ "$1" != "--" ]; do inputs+=("$1"); shift; done
  shift
  local stamp
  stamp=$(cat "${inputs[@]}" | sha256sum | cut -d' ' -f1)
  if [ "$FORCE" != "--force" ] && [ -x "$name/bin/python" ] && [ "$(cat "$name/.stamp" 2>/dev/null)" = "$stamp" ]; then
    echo "setup-training: $name is up to date"
    return
  fi
  echo "setup-training: installing into $name"
  [ "$FORCE" = "--force" ] && rm -rf "$name"
  [ -x "$name/bin/python" ] || "$PYTHON" -m venv "$name"
  "$name/bin/pip" install --quiet --disable-pip-version-check "${find_links[@]}" "$@"
  echo "$stamp" > "$name/.stamp"
}

venv .venv-trl examples/requirements-trl.txt pyproject.toml -- \
  -r examples/requirements-trl.txt -e .
venv .venv-verifiers integrations/verifiers/pyproject.toml -- \
  -e integrations/verifiers
