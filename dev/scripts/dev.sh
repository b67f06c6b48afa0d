#!/usr/bin/env bash
# `npm run dev`: install dependencies if needed, then dev/scripts/dev.ts.
set -euo pipefail
source "$(dirname "$0")/lib/prepare.sh"
exec node --import tsx dev/scripts/dev.ts "$@"
