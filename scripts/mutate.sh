#!/usr/bin/env bash
# Mutation testing of the security modules, one module after another (stryker.config.mjs lists
# them): `npm run mutate` for all, `npm run mutate -- proofs keys` for some. Scores are in
# reports/mutation/<module>.json and in the clear-text table each run prints.
set -euo pipefail
cd "$(dirname "$0")/.."
modules=("$@")
if [ ${#modules[@]} -eq 0 ]; then
  modules=(address client-address proofs keys otp-key limits pow client-network challenge)
fi
for module in "${modules[@]}"; do
  echo "== mutating $module"
  MUTATE_MODULE="$module" npx stryker run stryker.config.mjs
done
