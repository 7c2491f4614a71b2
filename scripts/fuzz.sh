#!/usr/bin/env bash
# Runs every fuzz target (fuzz/fuzz_targets) for a bounded time, starting from the committed
# seeds (fuzz/seeds/<target>) and a local corpus that grows between runs (fuzz/corpus-local,
# not committed). A crash fails the run and leaves its input in fuzz/artifacts/<target>/:
# copy it into fuzz/regressions/<target>/, where the test suite replays it on every run.
#
# Usage: ./scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#   ./scripts/fuzz.sh             60 s per target, every target (the long run)
#   ./scripts/fuzz.sh 5           what the test command runs
#   ./scripts/fuzz.sh 600 key_files
#
# fuzz/ is a cargo-fuzz project, but this script builds it itself with cargo-fuzz's
# instrumentation minus two things the SM2 field's inline assembly cannot live with: the
# stack-depth tracing and AddressSanitizer, each of which takes a register that the 4x4-limb
# multiplication needs. Coverage guidance, comparison tracing and every panic (assertion,
# overflow, bounds) remain; the differential targets check the assembly against the
# portable code. Needs a nightly toolchain (rustup).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
shift || true

if ! cargo +nightly --version >/dev/null 2>&1; then
  echo "fuzz: no nightly toolchain (rustup toolchain install nightly)" >&2
  exit 1
fi
host=$(rustc +nightly -vV | sed -n 's/^host: //p')

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in fuzz/fuzz_targets/*.rs; do targets+=("$(basename "$f" .rs)"); done
fi

export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares -Cllvm-args=-simplifycfg-branch-fold-threshold=0 \
--cfg fuzzing -Cdebug-assertions=on -Coverflow-checks=on -Ccodegen-units=1"
# shellcheck source=lib/build-cache.sh
. scripts/lib/build-cache.sh
fuzz_target=$(build_dir fuzz)
cargo +nightly build --quiet --release --locked --manifest-path fuzz/Cargo.toml \
  --target "$host" --target-dir "$fuzz_target" --bins
bin=$fuzz_target/$host/release

# One target: its summary line, or on a crash the log's tail and a marker file for the end.
fuzz_one() {
  local t=$1 log runs cov
  mkdir -p "fuzz/corpus-local/$t" "fuzz/artifacts/$t"
  log=$(mktemp)
  if ! "$bin/$t" "fuzz/corpus-local/$t" "fuzz/seeds/$t" -max_total_time="$seconds" \
      -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="fuzz/artifacts/$t/" >"$log" 2>&1; then
    {
      tail -n 60 "$log"
      echo "FAIL: fuzz target $t found a crash; its input is in fuzz/artifacts/$t/."
      echo "Fix it, and copy the input into fuzz/regressions/$t/ so the tests keep it fixed."
    } >&2
    touch "$failed/$t"
    rm -f "$log"
    return
  fi
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | grep -o '[0-9]*' || true)
  echo "fuzz $t: ${seconds} s, ${runs:-?} runs, coverage ${cov:-?}, no crash"
  rm -f "$log"
}

# libFuzzer runs one process per target on one core: as many targets at a time as there are
# cores, each given the whole time.
failed=$(mktemp -d)
trap 'rm -rf "$failed"' EXIT
parallel=$(nproc)
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do wait -n || true; done
  fuzz_one "$t" &
done
wait
if [ -n "$(ls -A "$failed")" ]; then
  echo "FAIL: fuzz targets that crashed: $(cd "$failed" && echo *)" >&2
  exit 1
fi
