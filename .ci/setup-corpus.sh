#!/usr/bin/env bash
# Creates the corpus-build venv (.ci/venv.sh says where and how) that runs
# integrations/corpus/build_corpus.py and tests/e2e/test_corpus_build.py: tab-err needs
# pandas<2.4, which uv.lock cannot hold beside the server's pandas 3. The build writes files
# the server reads (dataclean_env/corpus/tables/); the server never imports tab-err.
# Idempotent: unchanged requirements leave the venv alone; `--force` rebuilds it.
set -euo pipefail
cd "$(dirname "$0")/.."
FORCE=${1:-}
source .ci/venv.sh

venv corpus integrations/corpus/requirements.txt -- -r integrations/corpus/requirements.txt
echo "setup-corpus.sh: build with $VENVS/corpus/bin/python integrations/corpus/build_corpus.py"
