#!/usr/bin/env bash
# Container entry: a process name, or any other command to run as is.
set -euo pipefail
run() { exec node --import tsx "$1"; }
case "${1:-gateway}" in
  gateway) exec node dist/gateway.mjs ;;
  worker) exec node dist/worker.mjs ;;
  seed) run scripts/seed.ts ;;
  simulator) run simulator/server.ts ;;
  *) exec "$@" ;;
esac
