#!/usr/bin/env bash
# The unit project (vitest.config.ts): the tests that need no root, no namespaces and no
# containers. Run as root, it drops every capability first (uid 0 stays, so a checkout in a 0700
# directory is still readable): a unit test that needs root then fails here, as it would for a
# developer without root, instead of passing on a root machine. Arguments go to vitest
# (a file or folder to narrow the run, reporters).
set -euo pipefail
cd "$(dirname "$0")/.."

run=(npx vitest run --project unit "$@")
if [ "$(id -u)" = 0 ]; then
  exec setpriv --bounding-set=-all --inh-caps=-all --no-new-privs "${run[@]}"
fi
exec "${run[@]}"
