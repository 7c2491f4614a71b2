#!/usr/bin/env bash
# The one test command: every test suite of every language in the repository.
# Usage: ./scripts/test.sh
#
# A tool that is missing (rustfmt, clippy, Go, valgrind, a nightly toolchain) skips its step
# with a message; with CI=true (as .ci/run sets) a missing tool fails the run instead, so CI
# cannot pass by skipping.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each step's wall time, printed at the end (and on failure, up to the step that failed).
step_names=()
step_starts=()
step() {
  step_names+=("$*")
  step_starts+=("$(date +%s)")
  printf '\n== %s\n' "$*"
}
times() {
  local now i end
  now=$(date +%s)
  echo
  echo "== time per step"
  for i in "${!step_names[@]}"; do
    end=${step_starts[$((i + 1))]:-$now}
    printf '%6ss  %s\n' "$((end - step_starts[i]))" "${step_names[i]:0:90}"
  done
  printf '%6ss  in all\n' "$((now - ${step_starts[0]:-$now}))"
}
trap times EXIT

# have TOOL-CHECK-COMMAND WHAT: whether a tool is there; in CI its absence is fatal.
have() {
  if eval "$1" >/dev/null 2>&1; then
    return 0
  fi
  if [ "${CI:-}" = true ]; then
    echo "FAIL: '$1' does not work, and $2 needs it (CI=true: nothing is skipped)" >&2
    exit 1
  fi
  echo "not available: $2 skipped ('$1' failed)"
  return 1
}

# The workspace's own build, like the side builds, keeps its target directory in the cache
# outside the repository (scripts/lib/build-cache.sh): a fresh clone then rebuilds only the
# project's crates, not every dependency. CARGO_TARGET_DIR set by the caller wins.
# shellcheck source=lib/build-cache.sh
. scripts/lib/build-cache.sh
if [ -z "${CARGO_TARGET_DIR:-}" ]; then
  CARGO_TARGET_DIR=$(build_dir workspace)
  export CARGO_TARGET_DIR
fi

# A full run writes several GB of builds (debug, release, aarch64, wasm and fuzz); say so up
# front rather than failing an hour in with "No space left on device".
mkdir -p target
free_kb=$(df -Pk "$CARGO_TARGET_DIR" | awk 'NR == 2 { print $4 }')
if [ "${free_kb:-0}" -lt $((12 * 1024 * 1024)) ]; then
  echo "warning: $((free_kb / 1024 / 1024)) GB free for $CARGO_TARGET_DIR; a full run from a fresh clone needs about 12" >&2
fi

step "rustfmt"
if have "cargo fmt --version" "the formatting check"; then
  cargo fmt --all -- --check
  (cd fuzz && cargo fmt -- --check)
fi

# Clippy and rustdoc check in the test profile, the one the Rust suite builds in: build
# scripts then run once for all three (aws-lc-sys's C build is a minute and a half).
step "clippy"
if have "cargo clippy --version" "the lint check"; then
  cargo clippy --workspace --all-targets --locked --profile test -- -D warnings
fi

step "API documentation builds without broken links"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --exclude shangmi-cli --no-deps --locked \
  --profile test

step "the library builds with frame pointers (as profilers build it): its asm fits the registers left"
RUSTFLAGS="-C force-frame-pointers=yes" cargo build --quiet --locked -p shangmi \
  --target-dir "$(build_dir frame-pointers)"

step "generated constants, lock files and ARCHITECTURE.md's map are current"
python3 tools/sm4_constants.py --check
python3 tools/check_architecture.py
# fuzz/ is outside the workspace: a dependency change there shows here, not in the fuzz step.
(cd fuzz && cargo metadata --quiet --locked --format-version 1 >/dev/null)

step "interop peers: OpenSSL 4.0, Tongsuo 8.5 and GmSSL 3.1 built once into a cache outside the repository; BouncyCastle; Chromium"
# The interop tests build them on demand too; building them here keeps the build's minutes out
# of any one test's time, and a peer that cannot be built stops the run in CI.
for peer in openssl4 tongsuo gmssl; do
  if ! scripts/peers/build.sh "$peer" >/dev/null; then
    have false "the RFC 8998 interop tests against $peer (scripts/peers/build.sh $peer failed)"
  fi
done
if ! scripts/peers/chromium.sh; then
  have false "the browser tests (the gateway's and the npm package's)"
fi
if have "mvn --version && java -version" "the interop tests against BouncyCastle"; then
  for peer in bctls bcpkix; do
    (cd "interop/$peer" && mvn -q -B package -DskipTests)
  done
fi

step "README's run command as written, with --smoke (one case, one round): it must start"
# The README's first command, read from the README itself, so a change that breaks it (a
# second binary without default-run, a renamed package) fails here.
run_command=$(grep -m1 -E '^cargo run .*shangmi-bench' README.md)
[ -n "$run_command" ] || { echo "FAIL: no 'cargo run ... shangmi-bench' line in README.md" >&2; exit 1; }
eval "$run_command --smoke"

step "Rust tests (every backend this CPU has; fuzz seeds and regressions replayed)"
cargo test --workspace --locked

step "C library: header current, ASan/UBSan tests against OpenSSL, pkg-config example (./scripts/test-c.sh)"
./scripts/test-c.sh

step "OpenSSL provider on OpenSSL 3 and 4.0: tools byte-identical through it, EVP/ECDH tests, RFC 8998 in libssl, hashlib (./scripts/test-provider.sh)"
./scripts/test-provider.sh

step "Python package: pip install ./python into a venv, then its pytest suite (./scripts/test-python.sh)"
if have "python3 -m venv --help" "the Python package's tests"; then
  ./scripts/test-python.sh
fi

step "npm package: wasm32 build, installed from its tarball, Node tests against sm-crypto and sm-crypto-v2 (./scripts/test-npm.sh)"
if have "node --version" "the npm package's tests"; then
  ./scripts/test-npm.sh
fi

step "Java provider: the jar (x86_64 + aarch64, glibc 2.17), its suites on JDK 17 and 25, RFC 8998 in BCJSSE both ways (./scripts/test-java.sh)"
if have "mvn --version && java -version" "the Java provider's tests"; then
  ./scripts/test-java.sh
fi

step "Go peers of the benchmark (bench/go) and of the interop tests (interop/gmsm, interop/gmtls)"
if have "go version" "the Go peers' tests"; then
  for dir in bench/go interop/gmsm interop/gmtls; do
    (
      cd "$dir"
      unformatted=$(gofmt -l .)
      if [ -n "$unformatted" ]; then
        echo "gofmt needed: $unformatted" >&2
        exit 1
      fi
      go vet ./...
      # The interop peers have no Go tests of their own: shangmi-pki's and shangmi-cli's run them.
      if [ "$dir" = bench/go ]; then go test ./...; fi
    )
  done
fi

step "fuzzing: every target for a few seconds (./scripts/fuzz.sh for long runs)"
if have "cargo +nightly --version" "fuzzing"; then
  ./scripts/fuzz.sh "${FUZZ_SECONDS:-5}"
fi

step "statistical timing test on this CPU's backends (./scripts/ct-timing.sh)"
CT_TIMING_SECONDS=${CT_TIMING_SECONDS:-0.5} ./scripts/ct-timing.sh

step "constant-time check under valgrind"
if have "valgrind --version" "the constant-time check under valgrind"; then
  ./scripts/ct-valgrind.sh
fi

step "aarch64: the library's suite under QEMU, every arm64 backend (./scripts/test-aarch64.sh)"
./scripts/test-aarch64.sh

step "all tests passed"
