#!/usr/bin/env bash
# The C library: the header is current (cbindgen), the test program passes under
# AddressSanitizer and UndefinedBehaviorSanitizer against the static library (with OpenSSL's
# libcrypto beside it for interop), and the example builds through pkg-config from an
# installation under target/ and runs against the shared library.
# Usage: ./scripts/test-c.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cc=${CC:-cc}
# --workspace (only shangmi-capi has a `header` test): the test command's build is reused.
cargo test --quiet --locked --workspace --test header
target=${CARGO_TARGET_DIR:-target}
out=$target/c-tests
mkdir -p "$out"
# One release build serves both the installation and the sanitizer run (the sanitizers
# instrument the C side: every pointer the library is handed and every buffer it writes).
./scripts/install-c.sh "$out/prefix" >/dev/null
"$cc" -g -O1 -Wall -Wextra -Werror -fsanitize=address,undefined -fno-sanitize-recover=all \
  -fno-omit-frame-pointer -I crates/shangmi-capi/include crates/shangmi-capi/c/test_capi.c \
  "$out/prefix/lib/libshangmi_c.a" -lcrypto -lpthread -ldl -lm -o "$out/test_capi"
"$out/test_capi"
# Hostile input for every function that sizes output (NULLs, SIZE_MAX-class lengths, buffers
# one byte short, aliasing, tampering), under the same sanitizers.
"$cc" -g -O1 -Wall -Wextra -Werror -fsanitize=address,undefined -fno-sanitize-recover=all \
  -fno-omit-frame-pointer -I crates/shangmi-capi/include crates/shangmi-capi/c/test_hostile.c \
  "$out/prefix/lib/libshangmi_c.a" -lpthread -ldl -lm -o "$out/test_hostile"
# Certificates and CMS: chains of real certificates, SignedData and EnvelopedData, hostile calls.
"$cc" -g -O1 -Wall -Wextra -Werror -fsanitize=address,undefined -fno-sanitize-recover=all \
  -fno-omit-frame-pointer -I crates/shangmi-capi/include crates/shangmi-capi/c/test_pki.c \
  "$out/prefix/lib/libshangmi_c.a" -lpthread -ldl -lm -o "$out/test_pki"
"$out/test_pki"
"$out/test_hostile"
export PKG_CONFIG_PATH=$out/prefix/lib/pkgconfig
# shellcheck disable=SC2046 # pkg-config's output is meant to split into arguments
"$cc" -Wall -Wextra -Werror crates/shangmi-capi/c/example.c $(pkg-config --cflags --libs shangmi) \
  -o "$out/example"
# No LD_LIBRARY_PATH: the pkg-config rpath and the SONAME find the installed library.
"$out/example" >/dev/null
soname=$(readelf -d "$out/prefix/lib/libshangmi_c.so.0" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
if [ "$soname" != libshangmi_c.so.0 ]; then
  echo "FAIL: libshangmi_c.so has SONAME '$soname', not libshangmi_c.so.0" >&2
  exit 1
fi
echo "C library: header current, ASan/UBSan tests and the pkg-config example passed"
