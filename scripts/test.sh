#!/usr/bin/env bash
# The one test command: every test suite of every language in the repository.
# Usage: ./scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

step "rustfmt"
if cargo fmt --version >/dev/null 2>&1; then
  cargo fmt --all -- --check
else
  echo "rustfmt not installed: skipped"
fi

step "clippy"
if cargo clippy --version >/dev/null 2>&1; then
  cargo clippy --workspace --all-targets --locked -- -D warnings
else
  echo "clippy not installed: skipped"
fi

step "generated constants are current"
python3 tools/sm4_constants.py --check

step "Rust tests (every backend this CPU has)"
cargo test --workspace --locked

step "Go peers of the benchmark (bench/go), when Go is installed"
if command -v go >/dev/null 2>&1; then
  (
    cd bench/go
    unformatted=$(gofmt -l .)
    if [ -n "$unformatted" ]; then
      echo "gofmt needed: $unformatted" >&2
      exit 1
    fi
    go vet ./...
    go test ./...
  )
else
  echo "go not installed: skipped"
fi

step "constant-time check under valgrind (when installed)"
./scripts/ct-valgrind.sh

step "all tests passed"
