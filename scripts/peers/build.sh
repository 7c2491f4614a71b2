#!/usr/bin/env bash
# Builds a TLS peer's command-line tool once, from the source its crate on crates.io carries
# (crates.io is reachable where upstream download sites may not be), into a cache outside the
# repository; later runs reuse it. Prints the tool's path on stdout.
#
# Usage: scripts/peers/build.sh openssl4|tongsuo|gmssl|nginx-tongsuo   (cache: $SHANGMI_PEERS or ~/.cache/shangmi-peers)
#   openssl4  OpenSSL 4.0.3 (crate openssl-src), RFC 8998 in its s_server/s_client
#   tongsuo   Tongsuo 8.5.0 (crate tongsuo-src) with NTLS: RFC 8998 and TLCP
#   gmssl     GmSSL 3.1.1 (the source the PyPI sdist easy-gmssl 2.0.1 carries): its `gmssl`
#             tool, with tlcp_server/tlcp_client
#   nginx-tongsuo  nginx 1.28.3 (crate nginx-src) on Tongsuo 8.5's static libraries: the server
#             SM deployments run for RFC 8998 (the server benchmark's anchor; it does not
#             build against OpenSSL 4.0)
set -euo pipefail

case "${1:-}" in
  openssl4)
    crate_name=openssl-src VERSION="400.0.2+4.0.3" dir=openssl tool=openssl
    # The crate's trimmed tree builds only this configuration (no tests, docs or fuzzers).
    configure=(./Configure no-shared no-legacy no-tests) ;;
  tongsuo)
    crate_name=tongsuo-src VERSION="850.1.1+8.5.0" dir=tongsuo tool=tongsuo
    configure=(./config enable-ntls no-shared no-tests) ;;
  gmssl)
    VERSION="3.1.1" tool=gmssl ;;
  nginx-tongsuo)
    crate_name=nginx-src VERSION="1.28.5+1.28.3" dir=nginx tool=nginx ;;
  *) echo "usage: $0 openssl4|tongsuo|gmssl|nginx-tongsuo" >&2; exit 2 ;;
esac
cache="${SHANGMI_PEERS:-$HOME/.cache/shangmi-peers}"
prefix="$cache/$1-$VERSION"
if [ -x "$prefix/bin/$tool" ]; then
  echo "$prefix/bin/$tool"
  exit 0
fi
if [ "$1" = nginx-tongsuo ]; then
  tongsuo_prefix=$(dirname "$(dirname "$("$0" tongsuo)")")
fi
mkdir -p "$cache"
work=$(mktemp -d "$cache/$1-build.XXXXXX")
trap 'rm -rf "$work"' EXIT

if [ "$1" = gmssl ]; then
  # PyPI is reachable where GitHub may not be; the sdist vendors GmSSL's tree (cmake).
  if [ -x "$prefix/bin/gmssl" ]; then echo "$prefix/bin/gmssl"; exit 0; fi
  python3 -m pip download --quiet --no-binary :all: --no-deps "easy-gmssl==2.0.1" -d "$work" >&2
  tar -xzf "$work"/easy_gmssl-2.0.1.tar.gz -C "$work"
  src="$work/easy_gmssl-2.0.1/easy_gmssl/Core/GmSSL-3.1.1"
  cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF >&2
  cmake --build "$work/build" --target gmssl-bin -j"$(nproc)" >&2
  mkdir -p "$prefix/bin"
  cp "$work/build/bin/gmssl" "$prefix/bin/gmssl"
  echo "$prefix/bin/gmssl"
  exit 0
fi

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

if [ "$1" = nginx-tongsuo ]; then
  (
    cd "$src"
    auto/configure --prefix="$prefix" --sbin-path="$prefix/bin/nginx" \
      --with-http_ssl_module --with-http_v2_module --without-http_rewrite_module \
      --without-http_gzip_module --with-cc-opt="-I$tongsuo_prefix/include" \
      --with-ld-opt="$tongsuo_prefix/lib/libssl.a $tongsuo_prefix/lib/libcrypto.a -ldl -lpthread" >&2
    make -j"$(nproc)" >&2
    make install >&2
  )
  "$prefix/bin/nginx" -V >&2
  echo "$prefix/bin/nginx"
  exit 0
fi
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
