#!/usr/bin/env bash
# Headless Chromium and axe-core for the browser tests (tests/e2e/test_page.py): Debian's package, driven
# by Playwright from PyPI (a dev dependency in uv.lock). Playwright's own browser download
# is not used. Idempotent: does nothing when chromium is already installed.
set -euo pipefail
cd "$(dirname "$0")/.."

# axe-core (the accessibility rules the page's tests run in the browser), from the npm
# registry at a pinned version; npm checks the tarball against the registry's integrity hash.
AXE_VERSION=4.14.1
AXE_DIR=.cache/axe-core-$AXE_VERSION
if [ ! -f "$AXE_DIR/axe.min.js" ]; then
    work=$(mktemp -d)
    (cd "$work" && npm pack --silent "axe-core@$AXE_VERSION" >/dev/null)
    mkdir -p "$AXE_DIR"
    tar -xzf "$work/axe-core-$AXE_VERSION.tgz" -C "$AXE_DIR" --strip-components=1 \
        package/axe.min.js package/LICENSE
    rm -rf "$work"
fi

if command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ]; then
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq chromium
