#!/usr/bin/env bash
# Builds OpenSSL 4.0's `openssl` command once, from the source the `openssl-src` crate carries
# (crates.io is reachable where the upstream download site may not be), into a cache outside
# the repository; later runs reuse it. Prints the install prefix on stdout.
#
# Usage: scripts/peers/openssl4.sh            (cache: $SHANGMI_PEERS or ~/.cache/shangmi-peers)
set -euo pipefail

VERSION="400.0.2+4.0.3"
cache="${SHANGMI_PEERS:-$HOME/.cache/shangmi-peers}"
prefix="$cache/openssl-4.0.3"
if [ -x "$prefix/bin/openssl" ]; then
  echo "$prefix"
  exit 0
fi
mkdir -p "$cache"
work=$(mktemp -d "$cache/openssl4-build.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Fetch the crate through cargo (registry mirrors and credentials as configured), then unpack.
mkdir -p "$work/fetch/src"
cat >"$work/fetch/Cargo.toml" <<TOML
[package]
name = "fetch-openssl-src"
version = "0.0.0"
edition = "2021"
[dependencies]
openssl-src = "=$VERSION"
TOML
echo 'fn main() {}' >"$work/fetch/src/main.rs"
(cd "$work/fetch" && cargo fetch --quiet >&2)
crate=$(find "${CARGO_HOME:-$HOME/.cargo}/registry/cache" -name "openssl-src-$VERSION.crate" | head -1)
[ -n "$crate" ] || { echo "openssl-src $VERSION was not fetched" >&2; exit 1; }
tar -xzf "$crate" -C "$work"
src="$work/openssl-src-$VERSION/openssl"

# The crate's trimmed tree builds only this configuration (no tests, docs or fuzzers).
(
  cd "$src"
  ./Configure no-shared no-legacy no-tests --prefix="$prefix" --libdir=lib >&2
  make -j"$(nproc)" >&2
  make install_sw >&2
)
# No openssl.cnf ships with the crate: `req` needs one.
mkdir -p "$prefix/ssl"
cat >"$prefix/ssl/openssl.cnf" <<'CNF'
[req]
distinguished_name = req_dn
[req_dn]
CNF
"$prefix/bin/openssl" version >&2
echo "$prefix"
