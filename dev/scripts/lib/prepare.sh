# Sourced by dev/scripts/test.sh and dev/scripts/dev.sh: quiet, offline-friendly tool
# settings, and `npm ci` when node_modules is missing or older than the lock.
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
export NPM_CONFIG_UPDATE_NOTIFIER=false NPM_CONFIG_FUND=false NPM_CONFIG_AUDIT=false
export GOTELEMETRY=off GOTOOLCHAIN=local DO_NOT_TRACK=1
# npm rewrites node_modules/.package-lock.json on every install: older than
# package-lock.json means the lock file changed since.
# node_modules as a link is a shared install (a git worktree's): npm ci through it would empty it for
# every checkout that shares it, so it is never reinstalled from here.
if [ -L node_modules ]; then
  if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    echo "note: node_modules is a link to a shared install older than package-lock.json: not reinstalling through it (npm ci where it points, then touch node_modules/.package-lock.json)" >&2
  fi
elif [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "installing dependencies: npm ci"
  if ! npm ci --no-audit --no-fund; then
    # npm ci refuses a lock file that lacks some platform's optional packages
    # (e.g. @swc/core-darwin-*); install from the same lock without rewriting it.
    echo "warning: npm ci failed (package-lock.json out of sync with package.json?); trying npm install --no-save" >&2
    npm install --no-audit --no-fund --no-save
  fi
fi
