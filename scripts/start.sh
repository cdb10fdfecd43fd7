#!/usr/bin/env bash
# `npm start`: the compiled server. Builds first when dist/ is missing or older than any
# TypeScript source, configuration of the build, or the lock file, so that `npm ci && npm start`
# works on a fresh clone and after a pull. `exec` replaces this shell with node: the signals a
# process manager (or npm, which forwards SIGTERM and SIGINT to its child) sends reach the server,
# which shuts down gracefully (src/server.ts).
set -euo pipefail
cd "$(dirname "$0")/.."

entry=dist/src/server.js
client=client/dist/index.js
stale() {
  [ -f "$entry" ] && [ -f "$client" ] || return 0
  # Anything newer than the oldest of the two outputs.
  local ref=$entry
  [ "$client" -ot "$ref" ] && ref=$client
  [ -n "$(find src machines client/src -name '*.ts' -newer "$ref" -print -quit)" ] && return 0
  # The files the build copies beside the code (scripts/build-assets.ts): a diagram regenerated
  # by `npm run docs`, or a dist/ built before they were copied.
  [ -d dist/docs/journeys ] || return 0
  [ -n "$(find docs/journeys src/http/demo/page/flows.css -newer "$ref" -print -quit)" ] && return 0
  [ -n "$(find package-lock.json tsconfig.json tsconfig.build.json client/tsconfig.json client/tsconfig.cjs.json client/package.json -newer "$ref" -print -quit)" ]
}

if stale; then
  echo "== building (dist/ is missing or older than the sources)" >&2
  npm run -s build >&2
fi
exec node "$entry" "$@"
