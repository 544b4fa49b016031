#!/usr/bin/env bash
# Creates the training venvs the e2e tests use, outside uv.lock and outside the checkout
# (in DCE_TRAINING_VENVS, default ~/.cache/data-cleaning-openenv: a venv holds symlinks and
# gigabytes that `openenv validate` would refuse or hash):
#   trl/        torch (CPU), TRL and friends, and this checkout (editable)  tests/e2e/test_trl.py
#   verifiers/  verifiers 0.4 and integrations/verifiers (editable)         tests/e2e/test_verifiers.py
# Idempotent: a venv whose inputs (requirements, pyproject, checkout path) are unchanged is left
# alone, a changed one is updated in place by pip, `--force` rebuilds both from scratch.
# Plain `python -m venv` + pip: pip finds a CPU torch wheel in a local wheel folder
# (WHEELS, default /opt/wheels where present); uv would not look there. Without that folder
# and without a GPU (no nvidia-smi), torch comes first from PyTorch's CPU index (TORCH_INDEX),
# never PyPI's default build with its multi-GB CUDA libraries; with a GPU, from PyPI.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
WHEELS=${WHEELS:-/opt/wheels}
VENVS=${DCE_TRAINING_VENVS:-$HOME/.cache/data-cleaning-openenv}
FORCE=${1:-}
TORCH_INDEX=${TORCH_INDEX:-https://download.pytorch.org/whl/cpu}
find_links=()
[ -d "$WHEELS" ] && find_links=(--find-links "$WHEELS")
cpu_torch=
[ ! -d "$WHEELS" ] && ! command -v nvidia-smi >/dev/null 2>&1 && cpu_torch=1

# venv NAME STAMP-INPUTS... -- PIP-ARGS...: install into $VENVS/NAME unless its stamp matches.
venv() {
  local path=$VENVS/$1; shift
  local inputs=()
  while [ "$1" != "--" ]; do inputs+=("$1"); shift; done
  shift
  local stamp
  stamp=$( (pwd; cat "${inputs[@]}") | sha256sum | cut -d' ' -f1)
  if [ "$FORCE" != "--force" ] && [ -x "$path/bin/python" ] && [ "$(cat "$path/.stamp" 2>/dev/null)" = "$stamp" ]; then
    echo "setup-training: $path is up to date"
    return
  fi
  echo "setup-training: installing into $path"
  if [ "$FORCE" = "--force" ]; then rm -rf "$path"; fi
  mkdir -p "$VENVS"
  [ -x "$path/bin/python" ] || "$PYTHON" -m venv "$path"
  if [ -n "$cpu_torch" ] && [ "$1" = "-r" ] && grep -q '^torch==' "$2"; then
    "$path/bin/pip" install --quiet --disable-pip-version-check --index-url "$TORCH_INDEX" \
      "$(grep '^torch==' "$2")"
  fi
  "$path/bin/pip" install --quiet --disable-pip-version-check "${find_links[@]}" "$@"
  echo "$stamp" > "$path/.stamp"
}

venv trl examples/requirements-trl.txt pyproject.toml -- -r examples/requirements-trl.txt -e .
venv verifiers integrations/verifiers/pyproject.toml -- -e integrations/verifiers
