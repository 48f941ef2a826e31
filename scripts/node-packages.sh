#!/usr/bin/env bash
# Install the node packages the tests run (node `oidc-provider`, the OpenID provider of the
# auth battery's oidc tests) from the npm registry, as package-lock.json pins them.
# Idempotent: does nothing when node_modules is already in place for this lock file.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
dir=tests/support/oidc
stamp="$dir/node_modules/.lock-$(sha256sum "$dir/package-lock.json" | cut -c1-16)"
if [ -e "$stamp" ]; then
  exit 0
fi
if ! command -v npm >/dev/null; then
  echo "node-packages: npm is missing; installing Debian's nodejs and npm" >&2
  apt-get update -qq && apt-get install -y -qq nodejs npm >/dev/null
fi
npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error
touch "$stamp"
