#!/usr/bin/env bash
# Builds the C library (crates/shangmi-capi, release) and installs it under PREFIX:
# include/shangmi.h, lib/libshangmi_c.a, lib/libshangmi_c.so.VERSION (SONAME libshangmi_c.so.0,
# with the links libshangmi_c.so.0 and libshangmi_c.so) and lib/pkgconfig/shangmi.pc, whose
# Libs carry an rpath so programs built with it run without LD_LIBRARY_PATH.
# Usage: ./scripts/install-c.sh PREFIX      (e.g. /usr/local, or a directory of your own)
# Then: cc app.c $(PKG_CONFIG_PATH=PREFIX/lib/pkgconfig pkg-config --cflags --libs shangmi)
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=${1:?usage: $0 PREFIX}
mkdir -p "$prefix/include" "$prefix/lib/pkgconfig"
prefix=$(cd "$prefix" && pwd)
echo "building the C library (release; a few minutes the first time)..." >&2
cargo build --quiet --locked --release -p shangmi-capi
target=${CARGO_TARGET_DIR:-target}
install -m 0644 crates/shangmi-capi/include/shangmi.h "$prefix/include/"
install -m 0644 "$target/release/libshangmi_c.a" "$prefix/lib/"
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
install -m 0755 "$target/release/libshangmi_c.so" "$prefix/lib/libshangmi_c.so.$version"
ln -sf "libshangmi_c.so.$version" "$prefix/lib/libshangmi_c.so.0"
ln -sf "libshangmi_c.so.0" "$prefix/lib/libshangmi_c.so"
cat > "$prefix/lib/pkgconfig/shangmi.pc" <<PC
prefix=$prefix
includedir=\${prefix}/include
libdir=\${prefix}/lib

Name: shangmi
Description: SM2, SM3 and SM4 (China's commercial cryptography)
Version: $version
Cflags: -I\${includedir}
Libs: -L\${libdir} -Wl,-rpath,\${libdir} -lshangmi_c
Libs.private: -lpthread -ldl -lm
PC
echo "installed shangmi $version (C library) under $prefix"
