#!/usr/bin/env bash
# Statistical constant-time test (dudect-style Welch t-test) on every backend this CPU runs,
# with a leaky control that must be caught; see crates/shangmi/tests/timing.rs. Then TLCP's CBC
# record check (crates/shangmi-tlcp/tests/timing.rs: bad MAC at either padding length, bad
# padding against bad MAC).
# Usage: ./scripts/ct-timing.sh                  about 1 s per check (the test command)
#        CT_TIMING_SECONDS=30 ./scripts/ct-timing.sh   a long run
# Run it on an otherwise idle machine: other load is noise the test has to see through.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --quiet --locked -p shangmi --test timing -- --ignored --test-threads=1 --nocapture
cargo test --quiet --locked -p shangmi-tlcp --test timing -- --ignored --test-threads=1 --nocapture
