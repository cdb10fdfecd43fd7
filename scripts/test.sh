#!/usr/bin/env bash
# The whole test suite, from a fresh clone: system packages the tests need, type check, lint,
# generated-docs freshness, unit/HTTP/store/e2e tests. Run as `npm test` (README, .ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages the tests start for real, as command:package. Installed only when missing;
# CI runs as root. A test whose server is missing fails; it is never skipped. redis-cli (which
# builds the test clusters) comes with redis-server; openssl makes the TLS cluster's certificates;
# prometheus and promtool (one package) check ops/prometheus and ops/grafana (test/ops).
system_packages="redis-server:redis-server redis-cli:redis-tools chromium:chromium openssl:openssl prometheus:prometheus promtool:prometheus"
need_debs=()
for pair in $system_packages; do
  bin=${pair%%:*}; deb=${pair##*:}
  command -v "$bin" >/dev/null 2>&1 || need_debs+=("$deb")
done
# The credential store's tests start a real PostgreSQL (test/support/postgres-server.ts) from Debian's
# postgresql, whose server binaries live under /usr/lib/postgresql/<major>/bin, off the PATH.
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || need_debs+=("postgresql")
# The journey diagrams are laid out in DejaVu Sans (scripts/docs/mermaid-svg.ts): a font, no command.
[ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need_debs+=("fonts-dejavu-core")
if [ ${#need_debs[@]} -gt 0 ]; then
  echo "== installing system packages: ${need_debs[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need_debs[@]}"
  # On a host with systemd the package starts its own daemon (port 9090, /var/lib/prometheus):
  # the tests start theirs on free ports, so this one is only in the way. Stopped, not removed.
  if [[ " ${need_debs[*]} " == *" prometheus "* ]]; then
    $SUDO systemctl disable --now prometheus >/dev/null 2>&1 || $SUDO service prometheus stop >/dev/null 2>&1 || true
  fi
fi

# The bench smoke (about 80 s, that it runs: its figures are not judged) beside the static checks,
# which need no server: a minute and a half off the command. Its output follows theirs.
bench_log=$(mktemp)
npm run bench -- --smoke >"$bench_log" 2>&1 &
bench_pid=$!
echo "== type check"; npx tsc --noEmit
echo "== format"; npm run -s check:format
echo "== lint"; npx eslint .
echo "== layers"; npm run -s check:layers
# Files nothing reaches, dependencies nothing imports, exports nothing imports (knip.jsonc): about 15 s.
echo "== unused files, dependencies and exports"; npm run -s check:unused
# The benchmark and soak smoke runs come before the tests so that the test summary closes the output.
# Two instances on one Redis under load while Redis restarts and an instance is killed; exits 1 on a
# broken check. About 20 s, run while the bench smoke ends rather than after it.
echo "== soak smoke"; npm run soak -- --smoke
echo "== bench smoke"
bench_status=0; wait "$bench_pid" || bench_status=$?
cat "$bench_log"; rm -f "$bench_log"
[ "$bench_status" -eq 0 ] || { echo "bench smoke failed (exit $bench_status)"; exit "$bench_status"; }
if [ $# -gt 0 ]; then
  echo "== tests"; npx jest --ci "$@"
  exit
fi
# Two Jest workers for everything but the paced runs of two builds against each other (most files
# wait on servers, not on a core), then those alone: they pace load against live services, so a
# second file on the cores starves them ("no answer at all" at half load). One closing line counts both.
carry=$(mktemp); trap 'rm -f "$carry"' EXIT
echo "== tests"
status=0
JEST_SUMMARY_CARRY=$carry JEST_SUMMARY_PART=first npx jest --ci --testPathIgnorePatterns '/test/bench/against' || status=$?
echo "== tests: the bench's paced runs against another build, alone"
JEST_SUMMARY_CARRY=$carry npx jest --ci --maxWorkers=1 test/bench/against || status=$?
exit $status
