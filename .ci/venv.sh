# Sourced by the setup scripts of the side venvs (outside uv.lock and outside the checkout, in
# DCE_TRAINING_VENVS, default ~/.cache/data-cleaning-openenv: a venv holds symlinks and
# gigabytes that `openenv validate` would refuse or hash).
# `venv NAME STAMP-INPUTS... -- PIP-ARGS...` installs into $VENVS/NAME unless its stamp (the
# checkout path and the inputs' text) matches: unchanged inputs leave the venv alone, changed
# ones update it in place by pip, FORCE=--force rebuilds it from scratch.
# Plain `python -m venv` + pip: pip finds a CPU torch wheel in a local wheel folder
# (WHEELS, default /opt/wheels where present); uv would not look there. Without that folder
# and without a GPU (no nvidia-smi), torch comes first from PyTorch's CPU index (TORCH_INDEX),
# never PyPI's default build with its multi-GB CUDA libraries; with a GPU, from PyPI.
PYTHON=${PYTHON:-python3}
WHEELS=${WHEELS:-/opt/wheels}
VENVS=${DCE_TRAINING_VENVS:-$HOME/.cache/data-cleaning-openenv}
FORCE=${FORCE:-}
TORCH_INDEX=${TORCH_INDEX:-https://download.pytorch.org/whl/cpu}
find_links=()
[ -d "$WHEELS" ] && find_links=(--find-links "$WHEELS")
cpu_torch=
[ ! -d "$WHEELS" ] && ! command -v nvidia-smi >/dev/null 2>&1 && cpu_torch=1

venv() {
  local path=$VENVS/$1; shift
  local inputs=()
  while [ "$1" != "--" ]; do inputs+=("$1"); shift; done
  shift
  local stamp
  stamp=$( (pwd; cat "${inputs[@]}") | sha256sum | cut -d' ' -f1)
  if [ "$FORCE" != "--force" ] && [ -x "$path/bin/python" ] && [ "$(cat "$path/.stamp" 2>/dev/null)" = "$stamp" ]; then
    echo "$(basename "$0"): $path is up to date"
    return
  fi
  echo "$(basename "$0"): installing into $path"
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
