# Sourced by scripts/test-aarch64.sh and scripts/build-java.sh: makes sure the aarch64 cross
# toolchain from Debian's archive is here (Debian's rustc with an aarch64 standard library,
# since rustup's toolchain has no aarch64 std here; the cross C compiler and linker; OpenSSL
# for arm64, which the library's differential tests link; QEMU), installing it when this runs
# as root on Debian. Returns 1 (after saying what to install) when it is missing and cannot
# be installed.
AARCH64_TARGET=aarch64-unknown-linux-gnu
AARCH64_PACKAGES="rustc-web libstd-rust-web-dev:arm64 gcc-aarch64-linux-gnu libc6-dev-arm64-cross
  libssl-dev:arm64 qemu-user-static"

aarch64_toolchain_present() {
  [ -x /usr/bin/rustc ] && [ -d /usr/lib/rustlib/$AARCH64_TARGET ] &&
    command -v aarch64-linux-gnu-gcc >/dev/null && command -v qemu-aarch64-static >/dev/null &&
    [ -e /usr/lib/aarch64-linux-gnu/libssl.so ]
}

aarch64_toolchain() {
  aarch64_toolchain_present && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing the aarch64 toolchain from Debian's archive: $(echo $AARCH64_PACKAGES)"
    dpkg --add-architecture arm64
    apt-get update -qq
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $AARCH64_PACKAGES >/dev/null
    return 0
  fi
  echo "the aarch64 toolchain is missing; it is Debian's packages: $(echo $AARCH64_PACKAGES)" >&2
  echo "(dpkg --add-architecture arm64 first; the scripts install them themselves as root)" >&2
  return 1
}
