# Sourced by scripts/test-java.sh and scripts/bench-java.sh.
# jdk N: the home of an installed JDK N ($JAVA<N>_HOME, or one under /usr/lib/jvm); returns 1,
# saying so, when there is none.
jdk() {
  local var="JAVA$1_HOME" d
  if [ -n "${!var:-}" ]; then echo "${!var}"; return; fi
  for d in /usr/lib/jvm/*; do
    if [ -x "$d/bin/javac" ] && "$d/bin/java" -version 2>&1 | grep -q "version \"$1[.\"]"; then
      echo "$d"
      return
    fi
  done
  echo "no JDK $1 (set JAVA$1_HOME)" >&2
  return 1
}
