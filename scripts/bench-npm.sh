#!/usr/bin/env bash
# The npm package beside sm-crypto 0.5, sm-crypto-v2 and Node's OpenSSL (wasm/bench):
# SM2 sign, verify, encrypt and decrypt, SM3 and SM4 on 1 MiB. Prints a Markdown table.
# Usage: ./scripts/bench-npm.sh   (ROUNDS=7 SLICE_MS=300 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build-npm.sh >&2
version=$(sed -n 's/^version = "\(.*\)"/\1/p' wasm/Cargo.toml | head -1)
dir=target/npm/bench
rm -rf "$dir"
mkdir -p "$dir"
cp wasm/bench/bench.mjs "$dir/"
cd "$dir"
echo '{ "name": "shangmi-npm-bench", "private": true, "type": "module" }' > package.json
npm install --silent --no-audit --no-fund "../shangmi-$version.tgz" sm-crypto@0.5.8 sm-crypto-v2@1.15.1 >&2
node bench.mjs
