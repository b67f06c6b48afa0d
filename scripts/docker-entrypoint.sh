#!/usr/bin/env bash
# Container entry: a process name, or any other command to run as is.
set -euo pipefail
run() { exec node --import tsx "$1"; }
# The tracing preload does nothing unless OTEL_* variables ask for traces (docs/observability.md).
serve() { exec node --import tsx --import ./tracing/register.ts "$1"; }
case "${1:-gateway}" in
  gateway) serve gateway/server.ts ;;
  worker) serve workers/main.ts ;;
  seed) run scripts/seed.ts ;;
  simulator) run simulator/server.ts ;;
  *) exec "$@" ;;
esac
