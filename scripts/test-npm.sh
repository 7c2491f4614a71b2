#!/usr/bin/env bash
# The npm package as users get it: built (./scripts/build-npm.sh), installed from its tarball
# into a scratch project beside sm-crypto 0.5 and sm-crypto-v2 (from npm), and Node's test
# runner on wasm/test: known answers, Node's OpenSSL as a second reference, both directions
# against both peers, bad input; the TypeScript declarations under tsc --strict; then the
# browser entries in headless Chromium (Debian's `chromium`, installed when missing and root).
# Usage: ./scripts/test-npm.sh        (./scripts/test.sh runs it)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

./scripts/build-npm.sh
version=$(sed -n 's/^version = "\(.*\)"/\1/p' wasm/Cargo.toml | head -1)
scratch=target/npm/scratch
rm -rf "$scratch"
mkdir -p "$scratch"
cp wasm/test/*.test.mjs wasm/test/browser.html wasm/test/browser-run.mjs wasm/test/types.ts "$scratch/"
cd "$scratch"
echo '{ "name": "shangmi-npm-tests", "private": true, "type": "module" }' > package.json
npm install --silent --no-audit --no-fund "../shangmi-$version.tgz" sm-crypto@0.5.8 sm-crypto-v2@1.15.1 \
  typescript@5.9
# Each module: the SIMD128 one Node picks, and the scalar one engines without SIMD get.
node --test --test-reporter=spec ./*.test.mjs
SHANGMI_WASM=scalar node --test --test-reporter=dot ./*.test.mjs
# The declarations, under --strict, against a use of every entry point.
npx tsc --strict --noEmit --module nodenext --moduleResolution nodenext --target es2022 types.ts

if ! "$root/scripts/peers/chromium.sh"; then
  echo "SKIPPED: the browser test needs Debian's chromium" >&2
  [ "${CI:-}" = true ] && exit 1
  exit 0
fi
node browser-run.mjs
