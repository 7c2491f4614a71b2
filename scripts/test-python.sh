#!/usr/bin/env bash
# The Python package (python/): built and installed from the clone with pip (as README says
# users do) into a virtual environment under target/, then its pytest suite (known answers,
# interop with pyca cryptography and pure gmssl, malformed inputs, GIL release, the gmssl
# drop-in layer, the dask example) and a short run of its benchmark.
# Usage: ./scripts/test-python.sh
set -euo pipefail
cd "$(dirname "$0")/.."

venv=target/python-venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
py="$venv/bin/python"
"$py" -m pip install --quiet --disable-pip-version-check \
  maturin pytest mypy "cryptography>=42" "gmssl==3.2.2" "dask[distributed]>=2023.1"
# A fresh build of the wheel from this clone, every run.
"$py" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps ./python
"$venv/bin/pytest" -q python/tests
# The type stubs match what the extension really exports (names, signatures, classes).
"$py" -m mypy.stubtest shangmi._native
# The benchmark runs end to end (figures from --quick are noise; see BENCHMARKS.md).
"$py" -m shangmi.bench --quick >/dev/null
echo "python: package built, suite passed"
