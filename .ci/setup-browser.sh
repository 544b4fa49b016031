#!/usr/bin/env bash
# Headless Chromium for the browser tests (tests/e2e/test_page.py): Debian's package, driven
# by Playwright from PyPI (a dev dependency in uv.lock). Playwright's own browser download
# is not used. Idempotent: does nothing when chromium is already installed.
set -euo pipefail

if command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ]; then
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq chromium
