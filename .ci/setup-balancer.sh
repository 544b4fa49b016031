#!/usr/bin/env bash
# HAProxy from Debian's packages, for the multi-replica test (tests/e2e/test_scale_replicas.py).
# Idempotent: does nothing when haproxy is already installed.
set -euo pipefail
if ! command -v haproxy >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends haproxy >/dev/null
    # The package starts a system service on port 80 with its stock config; tests start
    # their own haproxy on 127.0.0.1 with a config of their own, so stop it if it runs.
    (service haproxy stop || true) >/dev/null 2>&1
fi
haproxy -v | sed -n 1p  # sed reads to the end: no SIGPIPE under pipefail
