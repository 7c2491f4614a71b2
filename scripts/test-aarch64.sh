#!/usr/bin/env bash
# The library's tests where aarch64 differs, built for it and run under QEMU's user-mode
# emulator (`-cpu max`: NEON, AES, PMULL, SM3 and SM4 instructions): the unit tests (every
# kernel and backend against the portable one), the SM3/SM4 known answers and mode suites,
# and SM2's signature vectors and edge cases (the portable field, whose 128-bit products
# become MUL/UMULH here); then the CLI built for aarch64 and driven once end to end. The
# rest of the suite (key files, sealing, batch and protocol logic) is the same code on both
# architectures and runs on the host.
# Usage: ./scripts/test-aarch64.sh        (./scripts/test.sh runs it)
#
# The toolchain comes from Debian's archive (scripts/lib/aarch64-toolchain.sh): installed when
# missing and this runs as root on Debian; otherwise the run stops with what to install.
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=lib/aarch64-toolchain.sh
. scripts/lib/aarch64-toolchain.sh
# shellcheck source=lib/build-cache.sh
. scripts/lib/build-cache.sh
TARGET=$AARCH64_TARGET
if ! aarch64_toolchain; then
  echo "SKIPPED: the aarch64 tests" >&2
  [ "${CI:-}" = true ] && exit 1
  exit 0
fi

export RUSTC=/usr/bin/rustc
host_target=${CARGO_TARGET_DIR:-target}
# Its own target directory (a different compiler would otherwise invalidate the host build),
# kept outside the repository between runs.
CARGO_TARGET_DIR=$(build_dir aarch64)
export CARGO_TARGET_DIR
export AARCH64_UNKNOWN_LINUX_GNU_OPENSSL_LIB_DIR=/usr/lib/aarch64-linux-gnu
export AARCH64_UNKNOWN_LINUX_GNU_OPENSSL_INCLUDE_DIR=/usr/include
# The runner and linker are set for this target in .cargo/config.toml.

# The test profile (optimised, with debug assertions, no LTO): the emulator is slow, and the
# release profile's single codegen unit and LTO for each of the many test binaries would
# take longer to build than the tests take to run. Warnings are errors here too: clippy does
# not run for this target (Debian's rustc has no clippy).
export RUSTFLAGS="-D warnings"
echo "library: the unit tests and the architecture-dependent suites under QEMU"
cargo test --locked --target $TARGET -p shangmi --lib --test sm3 --test sm3_family \
  --test sm4_block --test sm4_modes --test sm2_sign --test sm2_edge_cases

echo "the backends QEMU's CPU gets, and the CLI end to end"
# Unoptimised, the library too: the suite above ran the optimised backends, these few commands
# on 100 kB take a second or two at opt-level 0, and optimising the library alone cost this
# build about a minute.
cargo build --locked --target $TARGET -p shangmi-cli
run() { qemu-aarch64-static -L / -cpu max "$CARGO_TARGET_DIR/$TARGET/debug/shangmi" "$@"; }
version=$(run --version)
echo "$version"
for want in sm4-ce sm3-ce pmull; do
  grep -q "$want" <<<"$version" || { echo "FAIL: $want not selected under -cpu max" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'abc' >"$tmp/abc"
[ "$(run sm3 "$tmp/abc" | cut -c1-64)" = \
  66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0 ] ||
  { echo "FAIL: SM3 of abc under QEMU" >&2; exit 1; }
head -c 100000 /dev/urandom >"$tmp/data"
run sm2 keygen -o "$tmp/key.pem" --pubout "$tmp/pub.pem"
run sm2 sign --key "$tmp/key.pem" -i "$tmp/data" -o "$tmp/sig"
run sm2 verify --pub "$tmp/pub.pem" --sig "$tmp/sig" -i "$tmp/data"
key=000102030405060708090a0b0c0d0e0f
iv=0f0e0d0c0b0a09080706050403020100
run sm4 --mode gcm --key $key --iv ${iv:0:24} enc -i "$tmp/data" -o "$tmp/gcm"
run sm4 --mode gcm --key $key --iv ${iv:0:24} dec -i "$tmp/gcm" -o "$tmp/back"
cmp "$tmp/data" "$tmp/back"
# A core without the SM instructions (Cortex-A72: NEON, AES, PMULL) is detected as such and
# gets aes-neon, with the same output.
a72() { qemu-aarch64-static -L / -cpu cortex-a72 "$CARGO_TARGET_DIR/$TARGET/debug/shangmi" "$@"; }
a72 --version | grep -q "profile neon;" ||
  { echo "FAIL: a Cortex-A72 is not given the neon profile" >&2; exit 1; }
a72 sm4 --mode gcm --key $key --iv ${iv:0:24} enc -i "$tmp/data" | cmp - "$tmp/gcm"
# The same ciphertext as the host build: backends are bit-identical across architectures.
[ ! -x "$host_target/release/shangmi" ] ||
  "$host_target/release/shangmi" sm4 --mode gcm --key $key --iv ${iv:0:24} enc -i "$tmp/data" |
  cmp - "$tmp/gcm"
echo "aarch64: all tests passed"
