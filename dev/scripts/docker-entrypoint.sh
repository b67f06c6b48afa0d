#!/usr/bin/env bash
# Container entry: a process name, or any other command to run as is.
set -euo pipefail
run() { exec node --import tsx "$1"; }
# Gateway and worker run the compiled bundles (npm run build, in the image). When OTEL_* variables ask for
# traces (docs/observability.md) they run from source under tsx with the tracing preload instead: the
# instrumentations hook each library as it loads, and a bundle loads none.
# serve ENTRY "NODE FLAGS" [ENTRY ARGS...]
serve() { local entry=$1 flags=$2; shift 2; exec node $flags --import tsx --import ./platform/tracing/register.ts "$entry" "$@"; }
tracing() {
  [[ "${OTEL_SDK_DISABLED:-}" != true ]] || return 1
  [[ -n "${OTEL_EXPORTER_OTLP_ENDPOINT:-}${OTEL_EXPORTER_OTLP_TRACES_ENDPOINT:-}" ]] && return 0
  [[ -n "${OTEL_TRACES_EXPORTER:-}" && "${OTEL_TRACES_EXPORTER}" != none ]]
}
# A node-flags file's flags for this node: `node<N:--flag` is given only to Node majors below N (the same rule as
# dev/scripts/lib/node-flags.ts). NODE_MAJOR may be set to skip asking node.
NODE_MAJOR=${NODE_MAJOR:-$(node -p 'process.versions.node.split(".")[0]')}
flags_of() {
  local word out=()
  for word in $(cat "$1"); do
    if [[ $word =~ ^node\<([0-9]+):(.+)$ ]]; then
      if (( NODE_MAJOR < BASH_REMATCH[1] )); then out+=("${BASH_REMATCH[2]}"); fi
    else out+=("$word"); fi
  done
  echo "${out[*]}"
}
# The gateway's node flags (gateway/node-flags, dev/scripts/lib/node-flags.ts): 16 MB semi-spaces (Node 24 sizes
# the young generation from the machine's memory: 2,000 open streams at about 400 MB of RSS against 300), and on
# Node 20 the garbage collector on the gateway's own thread (V8 sizes its helper threads from the host's cores;
# on Node 24 the same flag doubles the peak RSS under load), and no memory reducer (its collections at every idle
# deoptimize the hot code, so the first seconds of traffic after an idle cost twice the CPU).
GATEWAY_FLAGS=$(flags_of gateway/node-flags)
# GATEWAY_HEAP_MB (the chart's gateway.heapMB): an old-generation cap in MB. Unset, Node sizes the heap from
# the container's memory limit (about half of it). Given after node-flags, so it wins over any cap there.
if [[ -n "${GATEWAY_HEAP_MB:-}" ]]; then
  [[ "$GATEWAY_HEAP_MB" =~ ^[1-9][0-9]{1,5}$ ]] || { echo "GATEWAY_HEAP_MB: a whole number of MB from 10 to 999999, got '$GATEWAY_HEAP_MB'" >&2; exit 64; }
  GATEWAY_FLAGS="$GATEWAY_FLAGS --max-old-space-size=$GATEWAY_HEAP_MB"
fi
# The workers' (workers/node-flags): 8 MB semi-spaces, so each scavenge stops a worker's event loop for less.
WORKER_FLAGS=$(flags_of workers/node-flags)
case "${1:-gateway}" in
  gateway) if tracing; then serve gateway/server.ts "$GATEWAY_FLAGS"; else exec node $GATEWAY_FLAGS dist/gateway.mjs; fi ;;
  # `worker --queue=knowledge` (or `--queue knowledge`): the arguments go to workers/main.ts, whose flag wins over WORKER_QUEUE.
  worker) shift; if tracing; then serve workers/main.ts "$WORKER_FLAGS" "$@"; else exec node $WORKER_FLAGS dist/worker.mjs "$@"; fi ;;
  seed) run dev/scripts/seed.ts ;;
  simulator) run dev/simulator/server.ts ;;
  *) exec "$@" ;;
esac
