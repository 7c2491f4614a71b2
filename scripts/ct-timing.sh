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
# --workspace, not -p: features then resolve as in the test command's build, whose binaries
# this reuses (a -p build resolves fewer features and recompiles the library). Both crates'
# `timing` targets run, one after the other.
cargo test --quiet --locked --workspace --test timing -- --ignored --test-threads=1 --nocapture
