#!/usr/bin/env bash
# The Java provider's tests: the release jar built (./scripts/build-java.sh: both Linux
# architectures, glibc floor, its suites on JDK 17), the suites again on JDK 25, the jar
# configured through java.security alone, and RFC 8998 in BCJSSE (java/tls) against shangmi's
# CLI and OpenSSL 4.0 on both JDKs.
# Usage: ./scripts/test-java.sh        (./scripts/test.sh runs it)
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=lib/jdk.sh
. scripts/lib/jdk.sh
jdk17=$(jdk 17)
# JDK 25 too when it is here; in CI it must be.
if ! jdk25=$(jdk 25); then
  [ "${CI:-}" = true ] && { echo "FAIL: CI=true needs JDK 25 for the Java tests" >&2; exit 1; }
  echo "JDK 25 not found: the Java suites run on JDK 17 alone"
  jdk25=
fi
jdks=("$jdk17" ${jdk25:+"$jdk25"})

JAVA_HOME=$jdk17 PATH="$jdk17/bin:$PATH" ./scripts/build-java.sh
native=$PWD/target/java-native

if [ -n "$jdk25" ]; then
  echo "the provider's suites on JDK 25"
  JAVA_HOME=$jdk25 mvn -q -B -f java test -Dshangmi.native.dir="$native" -Dshangmi.skipCargo=true
fi

jar=$(ls java/target/shangmi-jca-*.jar | head -1)
echo "the jar as java.security configures it, no addProvider (JDK 17 and 25)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/Configured.java" <<'JAVA'
import java.security.*;
public class Configured {
    public static void main(String[] a) throws Exception {
        MessageDigest md = MessageDigest.getInstance("SM3");
        byte[] h = md.digest("abc".getBytes("US-ASCII"));
        String hex = String.format("%064x", new java.math.BigInteger(1, h));
        if (!md.getProvider().getName().equals("Shangmi")
                || !hex.equals("66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0")) {
            throw new AssertionError(md.getProvider() + " " + hex);
        }
        KeyPair kp = KeyPairGenerator.getInstance("SM2").generateKeyPair();
        Signature s = Signature.getInstance("SM3withSM2");
        s.initSign(kp.getPrivate());
        s.update(h);
        byte[] sig = s.sign();
        s.initVerify(kp.getPublic());
        s.update(h);
        if (!s.verify(sig) || !s.getProvider().getName().equals("Shangmi")) {
            throw new AssertionError("SM2 through java.security");
        }
        System.out.println("configured: " + md.getProvider().getName());
    }
}
JAVA
for home in "${jdks[@]}"; do
  n=$(grep -c '^security\.provider\.[0-9]*=' "$home/conf/security/java.security")
  # By name: the JDK finds it through the jar's META-INF/services entry.
  echo "security.provider.$((n + 1))=Shangmi" >"$tmp/java.security"
  "$home/bin/java" -Djava.security.properties="$tmp/java.security" -cp "$jar" "$tmp/Configured.java"
done

echo "RFC 8998 in BCJSSE on the provider, against shangmi and OpenSSL 4.0 (JDK 17 and 25)"
cargo build --quiet --locked -p shangmi-cli
cli=${CARGO_TARGET_DIR:-target}/debug/shangmi
case $cli in /*) ;; *) cli=$PWD/$cli ;; esac
openssl4=$(scripts/peers/build.sh openssl4)
for home in "${jdks[@]}"; do
  JAVA_HOME=$home mvn -q -B -f java/tls test -Dshangmi.cli="$cli" \
    -Dshangmi.openssl4="$openssl4"
done
echo "the JMH benchmarks build (./scripts/bench-java.sh runs them)"
mvn -q -B -f java/bench package
mvn -q -B -f java/bench-tls package
echo "java: all tests passed"
