#!/usr/bin/env bash
# The npm package `shangmi`: the library's portable code built for wasm32-unknown-unknown
# (scalar, and with SIMD128), wasm-bindgen's glue for browsers (ES module) and for Node
# (CommonJS), the API in wasm/js/
# wrapped as both, TypeScript declarations; packed by `npm pack` into
# target/npm/shangmi-VERSION.tgz.
# Usage: ./scripts/build-npm.sh        (./scripts/test-npm.sh, and so the test command, runs it)
#
# rustup's toolchains have no wasm32 standard library here; Debian's archive has what is
# needed: rustc-web/cargo-web with rust-web-src, std built from it (-Z build-std), and
# rust-lld from lld-22. wasm-bindgen-cli is built from crates.io once (into ~/.cargo/bin). As
# root on Debian, whatever is missing is installed; otherwise the run stops saying what.
set -euo pipefail
cd "$(dirname "$0")/.."

BINDGEN_VERSION=0.2.130
PACKAGES="rustc-web cargo-web rust-web-src lld-22"

toolchain_present() {
  [ -x /usr/bin/rustc ] && [ -x /usr/bin/cargo ] && [ -d /usr/lib/rustlib/src/rust/library ] &&
    command -v rust-lld >/dev/null
}
if ! toolchain_present; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing the wasm toolchain from Debian's archive: $PACKAGES"
    apt-get update -qq
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $PACKAGES >/dev/null
  else
    echo "build-npm: Debian's packages are needed: $PACKAGES" >&2
    exit 1
  fi
fi
BINDGEN="${CARGO_HOME:-$HOME/.cargo}/bin/wasm-bindgen"
if ! "$BINDGEN" --version 2>/dev/null | grep -q " $BINDGEN_VERSION\$"; then
  echo "building wasm-bindgen-cli $BINDGEN_VERSION from crates.io (once)"
  # Not --locked: its lock file names a webpki-roots version the registry does not serve.
  cargo install -q wasm-bindgen-cli --version "$BINDGEN_VERSION" --force
fi

out=target/npm
build=$out/build
pkg=$out/package
rm -rf "$build" "$pkg"
mkdir -p "$build" "$pkg"

# Two modules: scalar, and with SIMD128 (SM4's bitsliced kernel on 128-bit planes), picked at
# load by whether the engine validates a SIMD instruction. The host's compiler flags (frame
# pointers, target-cpu) are not the modules'. One target directory for both: the flags apply
# to wasm32 units only, so the two builds share their proc-macros and build scripts and keep
# their own std and library. std without its default features: wasm32-unknown-unknown has no
# backtraces to symbolise, and its build then skips their DWARF readers.
modules=$build/modules
# shellcheck source=lib/build-cache.sh
. scripts/lib/build-cache.sh
wasm_target=$(build_dir wasm)
build() { # module name, extra rustflags
  env -u CARGO_BUILD_RUSTFLAGS RUSTFLAGS="$2" RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1 \
    /usr/bin/cargo build -q --release --target wasm32-unknown-unknown \
    -Z build-std=std,panic_abort -Z build-std-features= --manifest-path wasm/Cargo.toml \
    --target-dir "$wasm_target"
  cp "$wasm_target/wasm32-unknown-unknown/release/shangmi_wasm.wasm" "$modules/$1/shangmi_wasm.wasm"
}
mkdir -p "$modules/scalar" "$modules/simd"
build scalar ""
build simd "-C target-feature=+simd128"
for target in web nodejs; do
  dir=$pkg/${target%js}
  "$BINDGEN" --remove-name-section --remove-producers-section --target $target --out-dir "$dir" \
    "$modules/scalar/shangmi_wasm.wasm"
  # The same exports and imports, so the same glue: only the module file differs.
  "$BINDGEN" --remove-name-section --remove-producers-section --target $target --out-dir "$build/$target" \
    "$modules/simd/shangmi_wasm.wasm"
  cmp -s "$dir/shangmi_wasm.js" "$build/$target/shangmi_wasm.js" ||
    { echo "build-npm: the SIMD module's glue differs from the scalar one's" >&2; exit 1; }
  cp "$build/$target/shangmi_wasm_bg.wasm" "$dir/shangmi_wasm_simd_bg.wasm"
done
rm -f "$pkg"/web/*.d.ts "$pkg"/node/*.d.ts "$pkg"/web/package.json "$pkg"/node/package.json
# The Node glue is CommonJS inside an otherwise ES package; it loads the module the probe picks
# (SHANGMI_WASM=scalar forces the scalar one, for tests).
echo '{ "type": "commonjs" }' > "$pkg/node/package.json"
probe='new Uint8Array([0,97,115,109,1,0,0,0,1,5,1,96,0,1,123,3,2,1,0,10,22,1,20,0,253,12,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,11])'
pick_node="(WebAssembly.validate($probe) \&\& process.env.SHANGMI_WASM !== 'scalar' ? 'shangmi_wasm_simd_bg.wasm' : 'shangmi_wasm_bg.wasm')"
sed -i "s|^const wasmPath = \`\${__dirname}/shangmi_wasm_bg.wasm\`;|const wasmPath = \`\${__dirname}/\${$pick_node}\`;|" "$pkg/node/shangmi_wasm.js"
grep -q "shangmi_wasm_simd_bg.wasm" "$pkg/node/shangmi_wasm.js" ||
  { echo "build-npm: could not make the Node glue pick its module" >&2; exit 1; }

api=$(cat wasm/js/api.js)
compat=$(cat wasm/js/sm-crypto.js)
names="ShangmiError, fromHex, toHex, utf8, fromUtf8, version, sm3, Sm3, hmacSm3, sm3Kdf, pbkdf2Sm3, sm4Encrypt, sm4Decrypt, PrivateKey, PublicKey, EphemeralKey"

# Node, ES module: the wasm read from the package directory.
cat > "$pkg/index.mjs" <<JS
import * as core from './web/shangmi_wasm.js';
import { readFileSync } from 'node:fs';
const simd = WebAssembly.validate($probe) && process.env.SHANGMI_WASM !== 'scalar';
const file = simd ? './web/shangmi_wasm_simd_bg.wasm' : './web/shangmi_wasm_bg.wasm';
core.initSync({ module: readFileSync(new URL(file, import.meta.url)) });
$api
const api = shangmiApi(core);
export const { $names } = api;
export default api;
JS
# Browsers and bundlers: fetched next to the module.
cat > "$pkg/browser.mjs" <<JS
import * as core from './web/shangmi_wasm.js';
const simd = WebAssembly.validate($probe);
const file = simd ? './web/shangmi_wasm_simd_bg.wasm' : './web/shangmi_wasm_bg.wasm';
await core.default({ module_or_path: new URL(file, import.meta.url) });
$api
const api = shangmiApi(core);
export const { $names } = api;
export default api;
JS
cat > "$pkg/index.cjs" <<JS
'use strict';
const core = require('./node/shangmi_wasm.js');
$api
module.exports = shangmiApi(core);
JS
for entry in index browser; do
  cat > "$pkg/sm-crypto.$entry.mjs" <<JS
import api from './$entry.mjs';
$compat
const compat = smCryptoApi(api);
export const { sm2, sm3, sm4 } = compat;
export default compat;
JS
done
cat > "$pkg/sm-crypto.cjs" <<JS
'use strict';
$compat
module.exports = smCryptoApi(require('./index.cjs'));
JS
cp wasm/js/index.d.ts wasm/js/sm-crypto.d.ts "$pkg/"
cp wasm/README.md "$pkg/README.md"

version=$(sed -n 's/^version = "\(.*\)"/\1/p' wasm/Cargo.toml | head -1)
cat > "$pkg/package.json" <<JSON
{
  "name": "shangmi",
  "version": "$version",
  "description": "SM2, SM3 and SM4 (China's commercial cryptography) in WebAssembly: constant-time, fast, sm-crypto compatible",
  "license": "MIT OR Apache-2.0",
  "type": "module",
  "keywords": ["sm2", "sm3", "sm4", "guomi", "sm-crypto", "webassembly"],
  "engines": { "node": ">=18" },
  "sideEffects": false,
  "exports": {
    ".": {
      "types": "./index.d.ts",
      "node": { "import": "./index.mjs", "require": "./index.cjs" },
      "default": "./browser.mjs"
    },
    "./sm-crypto": {
      "types": "./sm-crypto.d.ts",
      "node": { "import": "./sm-crypto.index.mjs", "require": "./sm-crypto.cjs" },
      "default": "./sm-crypto.browser.mjs"
    }
  },
  "main": "./index.cjs",
  "types": "./index.d.ts",
  "files": ["*.mjs", "*.cjs", "*.d.ts", "web/", "node/", "README.md"]
}
JSON
(cd "$pkg" && npm pack --silent --pack-destination .. >/dev/null)
echo "$out/shangmi-$version.tgz (gzipped: scalar module $(gzip -c "$pkg/web/shangmi_wasm_bg.wasm" | wc -c) bytes, SIMD128 module $(gzip -c "$pkg/web/shangmi_wasm_simd_bg.wasm" | wc -c))"
