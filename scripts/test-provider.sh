#!/usr/bin/env bash
# The OpenSSL provider with the stock tools: the `openssl` command loads it, SM3 digests and
# the five SM4 modes come out byte-identical to OpenSSL's own (both directions, padded and
# not), a bad padding fails (with the provider's reason on the error queue), X.509
# certificates and requests made on either side verify on the other, SM2 keys, signatures (with distid) and ciphertexts cross between
# it and OpenSSL's default provider, and Python's hashlib is served SM3 by it through an
# OPENSSL_CONF file (a control run without the module must fail, so the answer came from it).
# Usage: ./scripts/test-provider.sh
set -euo pipefail
cd "$(dirname "$0")/.."
module=$(./scripts/build-provider.sh)
dir=$(cd "$(dirname "$module")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
use=(-provider-path "$dir" -provider shangmi -provider default -propquery provider=shangmi)

openssl list -providers -provider-path "$dir" -provider shangmi | grep -q "name: shangmi"
head -c 1000003 /dev/urandom >"$work/pt"
head -c 65536 /dev/urandom >"$work/aligned"
for f in "$work/pt" "$work/aligned" /dev/null; do
  want=$(openssl dgst -sm3 -r "$f" | cut -d' ' -f1)
  got=$(openssl dgst -sm3 -r "${use[@]}" "$f" | cut -d' ' -f1)
  [ "$want" = "$got" ] || { echo "FAIL: SM3 of $f differs: $got, OpenSSL $want" >&2; exit 1; }
done
key=0123456789abcdeffedcba9876543210
iv=00112233445566778899aabbccddeeff
for mode in sm4-ecb sm4-cbc sm4-cfb sm4-ofb sm4-ctr; do
  ivarg=(-iv "$iv")
  [ "$mode" = sm4-ecb ] && ivarg=()
  for input in pt aligned; do
    pads=("")
    case "$mode" in sm4-ecb | sm4-cbc) [ "$input" = aligned ] && pads=("" -nopad) ;; esac
    for pad in "${pads[@]}"; do
      openssl enc "-$mode" -K "$key" "${ivarg[@]}" $pad -in "$work/$input" -out "$work/ref"
      openssl enc "-$mode" -K "$key" "${ivarg[@]}" $pad -in "$work/$input" -out "$work/ours" "${use[@]}"
      cmp -s "$work/ref" "$work/ours" || { echo "FAIL: $mode $pad encryption differs" >&2; exit 1; }
      openssl enc -d "-$mode" -K "$key" "${ivarg[@]}" $pad -in "$work/ref" -out "$work/back" "${use[@]}"
      cmp -s "$work/back" "$work/$input" || { echo "FAIL: $mode $pad decryption differs" >&2; exit 1; }
    done
  done
done
# A wrong key makes the CBC padding check fail: an error, as OpenSSL's own gives.
openssl enc -sm4-cbc -K "$key" -iv "$iv" -in "$work/pt" -out "$work/ref"
if openssl enc -d -sm4-cbc -K "ffffffffffffffffffffffffffffffff" -iv "$iv" -in "$work/ref" \
    -out "$work/back" "${use[@]}" 2>/dev/null; then
  echo "FAIL: a wrong key's bad padding was accepted" >&2
  exit 1
fi

# SM2 across providers with the openssl command: a configuration that prefers shangmi signs,
# encrypts and makes keys; OpenSSL as installed verifies and decrypts, and the reverse.
{
  printf 'openssl_conf = openssl_init\n[openssl_init]\nproviders = provider_sect\n'
  printf 'alg_section = algorithm_sect\n[provider_sect]\ndefault = default_sect\n'
  printf 'shangmi = shangmi_sect\n[default_sect]\nactivate = 1\n'
  printf '[shangmi_sect]\nmodule = %s/shangmi.so\nactivate = 1\n' "$dir"
  printf '[algorithm_sect]\ndefault_properties = ?provider=shangmi\n'
} >"$work/prefer.cnf"
ours() { OPENSSL_CONF=$work/prefer.cnf openssl "$@"; }
# OpenSSL's own HMAC and CMAC over the provider's SM3 and SM4-CBC (preferred through that
# configuration): the same MACs as OpenSSL computes alone.
for mac in "-digest SM3 -macopt hexkey:00112233 HMAC" "-cipher SM4-CBC -macopt hexkey:$key CMAC"; do
  # shellcheck disable=SC2086 # the options are meant to split
  want=$(openssl mac -in "$work/pt" $mac)
  # shellcheck disable=SC2086
  got=$(ours mac -in "$work/pt" $mac)
  [ "$want" = "$got" ] || { echo "FAIL: ${mac##* } over the provider differs" >&2; exit 1; }
done
id=(-pkeyopt distid:1234567812345678)
openssl genpkey -algorithm SM2 -out "$work/k.pem"
ours genpkey -algorithm SM2 -out "$work/k2.pem"
for k in k k2; do
  openssl pkey -in "$work/$k.pem" -pubout -out "$work/$k.pub"
  ours pkeyutl -sign -rawin -digest sm3 "${id[@]}" -inkey "$work/$k.pem" -in "$work/aligned" -out "$work/s1"
  openssl pkeyutl -verify -rawin -digest sm3 "${id[@]}" -pubin -inkey "$work/$k.pub" -in "$work/aligned" \
    -sigfile "$work/s1" >/dev/null
  openssl pkeyutl -sign -rawin -digest sm3 "${id[@]}" -inkey "$work/$k.pem" -in "$work/aligned" -out "$work/s2"
  ours pkeyutl -verify -rawin -digest sm3 "${id[@]}" -pubin -inkey "$work/$k.pub" -in "$work/aligned" \
    -sigfile "$work/s2" >/dev/null
  if ours pkeyutl -verify -rawin -digest sm3 -pkeyopt distid:other -pubin -inkey "$work/$k.pub" \
      -in "$work/aligned" -sigfile "$work/s2" >/dev/null 2>&1; then
    echo "FAIL: a signature verified under the wrong ID" >&2
    exit 1
  fi
  head -c 100 "$work/pt" >"$work/short"
  ours pkeyutl -encrypt -pubin -inkey "$work/$k.pub" -in "$work/short" -out "$work/c1"
  openssl pkeyutl -decrypt -inkey "$work/$k.pem" -in "$work/c1" -out "$work/d1"
  cmp -s "$work/d1" "$work/short" || { echo "FAIL: OpenSSL cannot decrypt shangmi's SM2" >&2; exit 1; }
  openssl pkeyutl -encrypt -pubin -inkey "$work/$k.pub" -in "$work/short" -out "$work/c2"
  ours pkeyutl -decrypt -inkey "$work/$k.pem" -in "$work/c2" -out "$work/d2"
  cmp -s "$work/d2" "$work/short" || { echo "FAIL: shangmi cannot decrypt OpenSSL's SM2" >&2; exit 1; }
done
# X.509 both ways, no distid given: a CA and a leaf certificate (and its request) made
# through the provider verify with OpenSSL alone, and the reverse. OpenSSL 3 hashes an empty
# ID by default; a different default on either side fails here. The CA says it is one
# (OpenSSL 3.5 refuses an issuer without basicConstraints).
for side in mine theirs; do
  if [ "$side" = mine ]; then make=(ours) check=(openssl); else make=(openssl) check=(ours); fi
  "${make[@]}" req -x509 -new -key "$work/k.pem" -sm3 -subj "/CN=$side CA" -days 2 \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign \
    -out "$work/ca.pem" 2>/dev/null
  "${make[@]}" req -new -key "$work/k2.pem" -sm3 -subj "/CN=$side leaf" -out "$work/leaf.csr"
  "${make[@]}" x509 -req -in "$work/leaf.csr" -CA "$work/ca.pem" -CAkey "$work/k.pem" -sm3 \
    -days 2 -out "$work/leaf.pem" 2>/dev/null
  "${check[@]}" req -verify -in "$work/leaf.csr" -noout 2>/dev/null ||
    { echo "FAIL: the $side request does not verify on the other side" >&2; exit 1; }
  "${check[@]}" verify -CAfile "$work/ca.pem" "$work/leaf.pem" >/dev/null ||
    { echo "FAIL: the $side certificate does not verify on the other side" >&2; exit 1; }
done

# A tampered ciphertext: refused, with the provider's reason on OpenSSL's error queue.
cp "$work/c2" "$work/c3"
printf '\x01' | dd of="$work/c3" bs=1 seek=$(($(wc -c <"$work/c3") - 1)) conv=notrunc status=none
if ours pkeyutl -decrypt -inkey "$work/k.pem" -in "$work/c3" -out "$work/d3" 2>"$work/err"; then
  echo "FAIL: a tampered SM2 ciphertext decrypted" >&2
  exit 1
fi
grep -q "SM2 decryption failed" "$work/err" ||
  { echo "FAIL: no shangmi reason on the error queue:" >&2; cat "$work/err" >&2; exit 1; }

conf() { # conf FILE WITH_MODULE: providers default (+ shangmi), SM3 required from shangmi
  {
    printf 'openssl_conf = openssl_init\n[openssl_init]\nproviders = provider_sect\n'
    printf 'alg_section = algorithm_sect\n[provider_sect]\ndefault = default_sect\n'
    [ "$2" = yes ] && printf 'shangmi = shangmi_sect\n'
    printf '[default_sect]\nactivate = 1\n'
    [ "$2" = yes ] && printf '[shangmi_sect]\nmodule = %s/shangmi.so\nactivate = 1\n' "$dir"
    printf '[algorithm_sect]\ndefault_properties = provider=shangmi\n'
  } >"$1"
}
conf "$work/with.cnf" yes
conf "$work/without.cnf" no
probe='import hashlib; print(hashlib.new("sm3", b"abc").hexdigest())'
got=$(OPENSSL_CONF=$work/with.cnf python3 -c "$probe")
[ "$got" = 66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0 ] ||
  { echo "FAIL: hashlib through the provider gave $got" >&2; exit 1; }
if OPENSSL_CONF=$work/without.cnf python3 -c "$probe" >/dev/null 2>&1; then
  echo "FAIL: the control run found SM3 without the module: the test proves nothing" >&2
  exit 1
fi
# Through the EVP API as applications call it: random pieces, in place, dup'd digests, and
# SM2 fetched from each provider in turn (the C test checks which provider served each);
# SM4-GCM/CCM/XTS against the standards' vectors, tampering, and the error queue.
# Leak checking is off: the module's dispatch tables are built once per load and, by design,
# live until the process ends (the check would report them after OpenSSL unloads it).
for t in test_provider test_provider_aead; do
  ${CC:-cc} -g -O1 -Wall -Wextra -Werror -fsanitize=address,undefined -fno-sanitize-recover=all \
    "crates/shangmi-provider/c/$t.c" -lcrypto -o "$work/$t"
  ASAN_OPTIONS=detect_leaks=0 "$work/$t" "$dir"
done
echo "provider: openssl dgst/enc byte-identical, EVP pieces equal, AEADs checked, hashlib via OPENSSL_CONF"
