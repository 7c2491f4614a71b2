#!/usr/bin/env bash
# Debian's chromium for the browser tests (the npm package's and the gateway's): installed when
# missing and this is root with apt, else a message and exit 1.
set -euo pipefail
if command -v chromium >/dev/null; then
  exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "installing Debian's chromium for the browser tests" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  exit 0
fi
echo "the browser tests need Debian's chromium (not installed, and not root with apt)" >&2
exit 1
