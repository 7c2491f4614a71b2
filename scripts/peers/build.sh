#!/usr/bin/env bash
# Builds a TLS peer's command-line tool once, from the source its crate on crates.io carries
# (crates.io is reachable where upstream download sites may not be), into a cache outside the
# repository; later runs reuse it. Prints the tool's path on stdout.
#
# Usage: scripts/peers/build.sh openssl4|tongsuo   (cache: $SHANGMI_PEERS or ~/.cache/shangmi-peers)
#   openssl4  OpenSSL 4.0.3 (crate openssl-src), RFC 8998 in its s_server/s_client
#   tongsuo   Tongsuo 8.5.0 (crate tongsuo-src) with NTLS: RFC 8998 and TLCP
set -euo pipefail

case "${1:-}" in
  openssl4)
    crate_name=openssl-src VERSION="400.0.2+4.0.3" dir=openssl tool=openssl
    # The crate's trimmed tree builds only this configuration (no tests, docs or fuzzers).
    configure=(./Configure no-shared no-legacy no-tests) ;;
  tongsuo)
    crate_name=tongsuo-src VERSION="850.1.1+8.5.0" dir=tongsuo tool=tongsuo
    configure=(./config enable-ntls no-shared no-tests) ;;
  *) echo "usage: $0 openssl4|tongsuo" >&2; exit 2 ;;
esac
cache="${SHANGMI_PEERS:-$HOME/.cache/shangmi-peers}"
prefix="$cache/$1-$VERSION"
if [ -x "$prefix/bin/$tool" ]; then
  echo "$prefix/bin/$tool"
  exit 0
fi
mkdir -p "$cache"
work=$(mktemp -d "$cache/$1-build.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Fetch the crate through cargo (registry mirrors and credentials as configured), then unpack.
mkdir -p "$work/fetch/src"
cat >"$work/fetch/Cargo.toml" <<TOML
[package]
name = "fetch-peer-source"
version = "0.0.0"
edition = "2021"
[dependencies]
$crate_name = "=$VERSION"
TOML
echo 'fn main() {}' >"$work/fetch/src/main.rs"
(cd "$work/fetch" && cargo fetch --quiet >&2)
crate=$(find "${CARGO_HOME:-$HOME/.cargo}/registry/cache" -name "$crate_name-$VERSION.crate" | head -1)
[ -n "$crate" ] || { echo "$crate_name $VERSION was not fetched" >&2; exit 1; }
tar -xzf "$crate" -C "$work"
src="$work/$crate_name-$VERSION/$dir"

(
  cd "$src"
  "${configure[@]}" --prefix="$prefix" --libdir=lib >&2
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
"$prefix/bin/$tool" version >&2
echo "$prefix/bin/$tool"
