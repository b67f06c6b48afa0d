#!/usr/bin/env bash
# `npm run dev`: install dependencies if needed, then scripts/dev.ts.
set -euo pipefail
source "$(dirname "$0")/lib/prepare.sh"
exec node --import tsx scripts/dev.ts "$@"
