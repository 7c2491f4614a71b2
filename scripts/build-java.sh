#!/usr/bin/env bash
# The release jar: libshangmi_jni for linux-x86_64 and linux-aarch64, both linked against
# glibc 2.17's symbols (RHEL 7 and later, so RHEL 8 and Kylin V10 servers load it), in one
# jar, installed into the local Maven repository as rs.shangmi:shangmi-jca after its tests
# pass on this machine's default JDK.
# Usage: ./scripts/build-java.sh [--skip-tests]      (./scripts/test-java.sh runs it)
#
# The floor comes from cargo-zigbuild: zig links against a glibc of the version named in the
# target (x86_64-unknown-linux-gnu.2.17), whatever glibc the build machine has. zig and
# cargo-zigbuild come from PyPI into a cache outside the repository. aarch64 needs an aarch64
# Rust standard library: rustup's when its target is installed, else Debian's
# (scripts/lib/aarch64-toolchain.sh). Each library is then checked: no glibc symbol newer
# than the floor, the same JNI entry points in both (and every native method of
# rs.shangmi.jca.Native among them), and the aarch64 one loaded under QEMU.
set -euo pipefail
cd "$(dirname "$0")/.."

FLOOR=2.17
ZIG_VERSION=0.17.1
ZIGBUILD_VERSION=0.24.1
tools="${SHANGMI_TOOLS:-$HOME/.cache/shangmi-tools}/zig-$ZIG_VERSION-zigbuild-$ZIGBUILD_VERSION"
if [ ! -x "$tools/bin/cargo-zigbuild" ]; then
  echo "installing zig $ZIG_VERSION and cargo-zigbuild $ZIGBUILD_VERSION from PyPI into $tools"
  rm -rf "$tools"
  python3 -m venv "$tools"
  "$tools/bin/pip" install --quiet "ziglang==$ZIG_VERSION" "cargo-zigbuild==$ZIGBUILD_VERSION"
fi
export PATH="$tools/bin:$PATH"

# The two builds' target directories, kept outside the repository between runs.
# shellcheck source=lib/build-cache.sh
. scripts/lib/build-cache.sh
zig=$(build_dir zig)
zig_aarch64=$(build_dir zig-aarch64)

out=$PWD/target/java-native
rm -rf "$out"
mkdir -p "$out/linux-x86_64" "$out/linux-aarch64"

echo "libshangmi_jni for x86_64, glibc $FLOOR"
cargo zigbuild --quiet --release --locked -p shangmi-jni \
  --target "x86_64-unknown-linux-gnu.$FLOOR" --target-dir "$zig"
cp "$zig/x86_64-unknown-linux-gnu/release/libshangmi_jni.so" "$out/linux-x86_64/"

echo "libshangmi_jni for aarch64, glibc $FLOOR"
# shellcheck source=lib/aarch64-toolchain.sh
. scripts/lib/aarch64-toolchain.sh
if [ -d "$(rustc --print sysroot)/lib/rustlib/$AARCH64_TARGET" ]; then
  aarch64_rustc=$(command -v rustc)
else
  aarch64_toolchain
  aarch64_rustc=/usr/bin/rustc
fi
# Its own target directory: a different compiler would otherwise invalidate the host build.
RUSTC=$aarch64_rustc cargo zigbuild --quiet --release --locked -p shangmi-jni \
  --target "$AARCH64_TARGET.$FLOOR" --target-dir "$zig_aarch64"
cp "$zig_aarch64/$AARCH64_TARGET/release/libshangmi_jni.so" "$out/linux-aarch64/"

# Every versioned glibc symbol either library needs, newest first.
newest_glibc() {
  readelf -W --dyn-syms "$1" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1
}
jni_symbols() {
  readelf -W --dyn-syms "$1" | awk '$7 != "UND" && $8 ~ /^Java_/ { print $8 }' | sort
}
for lib in "$out"/linux-*/libshangmi_jni.so; do
  newest=$(newest_glibc "$lib")
  if [ "$(printf '%s\n%s\n' "$newest" "$FLOOR" | sort -V | tail -1)" != "$FLOOR" ]; then
    echo "FAIL: $lib needs glibc $newest, above the floor $FLOOR" >&2
    exit 1
  fi
  echo "  $(basename "$(dirname "$lib")"): newest glibc symbol version $newest (floor $FLOOR)"
done
if ! diff <(jni_symbols "$out/linux-x86_64/libshangmi_jni.so") \
  <(jni_symbols "$out/linux-aarch64/libshangmi_jni.so") >/dev/null; then
  echo "FAIL: the two libraries' JNI entry points differ" >&2
  exit 1
fi
[ "$(jni_symbols "$out/linux-aarch64/libshangmi_jni.so" | wc -l)" -gt 30 ] ||
  { echo "FAIL: too few JNI entry points in the aarch64 library" >&2; exit 1; }

# The aarch64 library loads (every symbol it needs resolves) under QEMU, against Debian's
# arm64 glibc; no aarch64 JVM is at hand to go further.
if command -v aarch64-linux-gnu-gcc >/dev/null && command -v qemu-aarch64-static >/dev/null; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  cat >"$tmp/load.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv) {
  void *h = dlopen(argv[1], RTLD_NOW);
  if (!h) { fprintf(stderr, "%s\n", dlerror()); return 1; }
  for (int i = 2; i < argc; i++)
    if (!dlsym(h, argv[i])) { fprintf(stderr, "no %s\n", argv[i]); return 1; }
  return 0;
}
C
  aarch64-linux-gnu-gcc -O1 -o "$tmp/load" "$tmp/load.c" -ldl
  # shellcheck disable=SC2046
  qemu-aarch64-static -L / "$tmp/load" "$out/linux-aarch64/libshangmi_jni.so" \
    $(jni_symbols "$out/linux-aarch64/libshangmi_jni.so")
  echo "  linux-aarch64: loads under QEMU, every JNI entry point resolves"
elif [ "${CI:-}" = true ]; then
  echo "FAIL: no aarch64 cross compiler or QEMU to load the aarch64 library" >&2
  exit 1
fi

skip=()
[ "${1:-}" = --skip-tests ] && skip=(-DskipTests)
echo "the jar (tests on $(java -version 2>&1 | head -1))"
mvn -q -B -f java install -Dshangmi.native.dir="$out" -Dshangmi.skipCargo=true "${skip[@]}"

# Every native method the Java side declares has its entry point.
missing=$(comm -23 \
  <(javap -p -cp java/target/classes rs.shangmi.jca.Native |
    sed -n 's/.* native [^ ]* \([A-Za-z0-9_]*\)(.*/Java_rs_shangmi_jca_Native_\1/p' | sort -u) \
  <(jni_symbols "$out/linux-aarch64/libshangmi_jni.so"))
[ -z "$missing" ] || { echo "FAIL: native methods without an entry point: $missing" >&2; exit 1; }
jar=$(ls java/target/shangmi-jca-*.jar | grep -v sources | head -1)
for p in linux-x86_64 linux-aarch64; do
  unzip -l "$jar" | grep -q "rs/shangmi/jca/native/$p/libshangmi_jni.so" ||
    { echo "FAIL: $jar lacks the $p library" >&2; exit 1; }
done
echo "built $jar (linux-x86_64 and linux-aarch64, glibc >= $FLOOR)"
