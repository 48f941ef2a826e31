#!/usr/bin/env bash
# Install the Debian packages the test suite needs beyond Python: a headless Chromium and
# its WebDriver, for the admin test that drives a real browser (tests/admin/); zsh and fish,
# whose completion scripts tests/cli/test_completion.py runs for real.
# Idempotent: does nothing when every program is already on PATH. Uses sudo only when
# not running as root.
set -euo pipefail

if command -v chromium >/dev/null && command -v chromedriver >/dev/null \
    && command -v zsh >/dev/null && command -v fish >/dev/null; then
    exit 0
fi

as_root=()
if [ "$(id -u)" -ne 0 ]; then
    as_root=(sudo)
fi

"${as_root[@]}" apt-get update
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
    chromium chromium-driver zsh fish
