#!/usr/bin/env bash
# Builds the OpenSSL 3 provider (crates/shangmi-provider, release) and puts it where OpenSSL
# looks for a module named "shangmi": target/ossl-modules/shangmi.so. Then:
#   openssl dgst -sm3 -provider-path target/ossl-modules -provider shangmi -provider default FILE
# or load it from openssl.cnf (crates/shangmi-provider/README.md has the snippet).
# Usage: ./scripts/build-provider.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --quiet --locked --release -p shangmi-provider
target=${CARGO_TARGET_DIR:-target}
mkdir -p "$target/ossl-modules"
cp "$target/release/libshangmi_provider.so" "$target/ossl-modules/shangmi.so"
echo "$target/ossl-modules/shangmi.so"
