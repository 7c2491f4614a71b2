#!/usr/bin/env bash
# The Java benchmarks (JMH, one thread): the Shangmi provider beside BouncyCastle 1.87, Kona
# 1.0.19 (Java and native) and ECDSA P-256 / AES-GCM in SunEC, SunJCE and ACCP; the provider
# against its own natives called directly; RFC 8998 handshakes in BCJSSE on Shangmi and on BC.
# Each on JDK 17 and JDK 25; prints the tables BENCHMARKS.md carries, and leaves the JMH JSON
# under target/bench-java/.
# Usage: ./scripts/bench-java.sh [--quick]     (--quick: shorter iterations, for a look)
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=lib/jdk.sh
. scripts/lib/jdk.sh

# Primitives: 2 warm-up and 3 measured iterations of 1 s; handshakes warm longer (BCJSSE's
# code takes seconds to compile).
prim=(-f 1 -wi 2 -w 1s -i 3 -r 1s)
hand=(-f 1 -wi 2 -w 8s -i 3 -r 3s)
if [ "${1:-}" = --quick ]; then
  prim=(-f 1 -wi 1 -w 300ms -i 3 -r 300ms)
  hand=(-f 1 -wi 1 -w 4s -i 3 -r 1s)
fi

mvn -q -B -f java install -DskipTests
mvn -q -B -f java/tls install -DskipTests
mvn -q -B -f java/bench package
mvn -q -B -f java/bench-tls package

out=target/bench-java
mkdir -p "$out"
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'); shangmi's backends:" >&2
cargo run --quiet --release --locked -p shangmi-cli -- --version | sed -n '3,$p' >&2
args=()
for v in 17 25; do
  home=$(jdk "$v")
  opts="--enable-native-access=ALL-UNNAMED -Djava.util.logging.config.file=$PWD/java/tls/src/test/resources/logging.properties"
  "$home/bin/java" $opts -jar java/bench/target/benchmarks.jar "${prim[@]}" -jvmArgsAppend "$opts" \
    -rf json -rff "$out/jdk$v.json" >"$out/jdk$v.log"
  "$home/bin/java" $opts -jar java/bench-tls/target/benchmarks.jar "${hand[@]}" -jvmArgsAppend "$opts" \
    -rf json -rff "$out/jdk$v-tls.json" >"$out/jdk$v-tls.log"
  args+=("JDK $v ($("$home/bin/java" -version 2>&1 | head -1 | cut -d'"' -f2))=$out/jdk$v.json,$out/jdk$v-tls.json")
done
python3 java/bench/table.py "${args[@]}"
