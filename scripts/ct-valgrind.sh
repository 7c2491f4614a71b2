#!/usr/bin/env bash
# Constant-time check: runs SM2 (fixed- and variable-base multiplication, both inversions,
# key validation, signing, decryption, key exchange), HMAC-SM3, PBKDF2, the SM3 KDF, SM4
# blocks and its modes (GCM, CCM, CMAC and XCBC, XTS, CBC with its padding check, CTR) on every
# profile valgrind can run (portable; avx2: AES-NI, PCLMULQDQ, BMI2) under valgrind's memcheck with every secret input marked undefined. Memcheck then reports any
# conditional branch or memory address computed from a secret. A deliberately leaky
# control must be reported too, or the check itself is broken.
# Usage: ./scripts/ct-valgrind.sh   (fails when valgrind is not installed)
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v valgrind >/dev/null 2>&1; then
  echo "FAIL: valgrind is not installed" >&2
  exit 1
fi

# shellcheck source=lib/build-cache.sh
. scripts/lib/build-cache.sh
CARGO_TARGET_DIR=$(build_dir ctgrind)
export CARGO_TARGET_DIR
RUSTFLAGS="--cfg shangmi_ctgrind -C debuginfo=1" \
  cargo build --quiet --release --locked -p shangmi --example ctgrind
bin="$CARGO_TARGET_DIR/release/examples/ctgrind"
log="$CARGO_TARGET_DIR/valgrind.log"

# valgrind runs neither ADX, VAES, GFNI nor AVX-512: its best profile is avx2 without ADX.
vg() { valgrind --quiet --error-exitcode=3 --track-origins=yes "$@"; }

if vg "$bin" control >"$log" 2>&1; then
  echo "FAIL: the leaky control passed; the check cannot see leaks" >&2
  cat "$log" >&2
  exit 1
fi
if ! grep -q -E "depends on uninitialised|Use of uninitialised value" "$log"; then
  echo "FAIL: the control failed for another reason:" >&2
  cat "$log" >&2
  exit 1
fi
echo "control: leak reported, as it must be"

if ! vg "$bin" all >"$log" 2>&1; then
  echo "FAIL: secret-dependent branch or address:" >&2
  cat "$log" >&2
  exit 1
fi
cat "$log"
echo "constant-time check passed"
