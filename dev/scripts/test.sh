#!/usr/bin/env bash
# `npm test` (and CI's .ci/run): install dependencies if needed, then
# dev/scripts/test.ts. Extra arguments go to ava (e.g. a test file).
set -euo pipefail
source "$(dirname "$0")/lib/prepare.sh"
exec node --import tsx dev/scripts/test.ts "$@"
