#!/usr/bin/env bash
# The server benchmark: connections per second, each a TCP connect, a full handshake and one
# GET of a 1 KiB answer with no keep-alive, the server held to CPU 0 and the load generator
# (with the back end) to CPU 1, servers taking turns round by round; medians and p50/p99.
#
#   gateway RFC 8998      shangmi-gateway, TLS_SM4_GCM_SM3 + curveSM2 + SM2 certificate
#   gateway TLS 1.3       shangmi-gateway, AES-128-GCM + X25519 + ECDSA P-256 (aws-lc-rs)
#   nginx TLS 1.3         Debian's nginx on OpenSSL 3, the same, proxying to the same back end
#   nginx+Tongsuo RFC 8998  nginx 1.28 on Tongsuo 8.5 (scripts/peers/build.sh nginx-tongsuo),
#                         the SM2 certificate, the same proxying
#   gateway TLCP          shangmi-gateway, ECC_SM4_GCM_SM3
#   Tongsuo TLCP          Tongsuo 8.5's s_server -enable_ntls -www (its status page, no proxy)
#   Tongsuo RFC 8998      Tongsuo 8.5's s_server -www with the SM2 certificate
#   OpenSSL 4 RFC 8998    crates/shangmi-provider/c/https_server.c on OpenSSL 4.0's libssl,
#                         its own SM algorithms (answers itself, no proxy, like s_server -www)
#   OpenSSL 4+shangmi RFC 8998  the same binary with shangmi.so preferred through OPENSSL_CONF
#
# Usage: scripts/bench-gateway.sh [ROUNDS] [SECONDS]   (default 5 rounds of 4 s per server)
# Needs two CPUs, taskset, and nginx (installed with apt when missing and root).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
seconds=${2:-4}
conc=${CONCURRENCY:-32}

if ! command -v nginx >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    # The package would start the system's nginx: policy-rc.d tells it not to (Debian's
    # way), so nothing is left running and no nginx but ours is ever stopped.
    made_policy=
    if [ ! -e /usr/sbin/policy-rc.d ]; then
      printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
      chmod +x /usr/sbin/policy-rc.d
      made_policy=1
      trap 'rm -f /usr/sbin/policy-rc.d' EXIT
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light >/dev/null
    if [ -n "$made_policy" ]; then
      rm -f /usr/sbin/policy-rc.d
      trap - EXIT
    fi
  else
    echo "bench-gateway: needs nginx (apt-get install nginx-light)" >&2
    exit 1
  fi
fi
cargo build --release --quiet -p shangmi-gateway -p shangmi-cli
cargo build --release --quiet -p shangmi-bench --bin gateway-load
tongsuo=$(scripts/peers/build.sh tongsuo)
nginx_tongsuo=$(scripts/peers/build.sh nginx-tongsuo)
o4=$(scripts/peers/build.sh openssl4)
o4dir=$(dirname "$(dirname "$o4")")
module=$(cd "$(dirname "$(scripts/build-provider.sh)")" && pwd)
bin=$(pwd)/target/release
work=$(mktemp -d)
gcc -O2 -I"$o4dir/include" crates/shangmi-provider/c/https_server.c "$o4dir/lib/libssl.a" \
  "$o4dir/lib/libcrypto.a" -ldl -lpthread -o "$work/https_server"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for f in nginx.pid nginx-ts.pid; do
    [ -f "$work/$f" ] && kill "$(cat "$work/$f")" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"

# The PKI: SM2 by shangmi, ECDSA P-256 by OpenSSL.
sm() { "$bin/shangmi" "$@" >/dev/null; }
sm sm2 keygen -o ca.key
sm x509 req --key ca.key --subject "/CN=Bench Root" -o ca.csr
sm x509 sign --csr ca.csr --self --key ca.key --ca --days 30 -o ca.pem
for n in sign enc sm2; do
  usage=digitalSignature
  [ "$n" = enc ] && usage=keyEncipherment,keyAgreement
  sm sm2 keygen -o "$n.key"
  sm x509 req --key "$n.key" --subject /CN=localhost --san DNS:localhost -o "$n.csr"
  sm x509 sign --csr "$n.csr" --ca-cert ca.pem --ca-key ca.key --days 30 --key-usage "$usage" -o "$n.pem"
done
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ecdsa.key \
  -out ecdsa.pem -subj /CN=localhost -days 30 2>/dev/null

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; echo "nothing on $1" >&2; exit 1; }

backend=$(free_port)
taskset -c 1 "$bin/gateway-load" backend --listen "127.0.0.1:$backend" >/dev/null &
pids+=($!)
wait_port "$backend"

gw=$(free_port)
cat > gateway.toml <<TOML
[log]
access = "off"
[[listener]]
listen = "127.0.0.1:$gw"
[[listener.site]]
upstream = ["http://127.0.0.1:$backend"]
tlcp = { sign_cert = "sign.pem", sign_key = "sign.key", enc_cert = "enc.pem", enc_key = "enc.key" }
sm2 = { cert = "sm2.pem", key = "sm2.key" }
international = [ { cert = "ecdsa.pem", key = "ecdsa.key" } ]
TOML
taskset -c 0 "$bin/shangmi-gateway" --config gateway.toml --workers 1 2>gateway.log &
pids+=($!)
gw_pid=$!
wait_port "$gw"

ngx=$(free_port)
mkdir -p nginx
cat > nginx.conf <<NGINX
worker_processes 1;
pid $work/nginx.pid;
error_log $work/nginx/error.log;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $work/nginx; proxy_temp_path $work/nginx; fastcgi_temp_path $work/nginx;
  uwsgi_temp_path $work/nginx; scgi_temp_path $work/nginx;
  upstream backend { server 127.0.0.1:$backend; keepalive 32; }
  server {
    listen 127.0.0.1:$ngx ssl;
    ssl_certificate $work/ecdsa.pem;
    ssl_certificate_key $work/ecdsa.key;
    ssl_protocols TLSv1.3;
    ssl_ecdh_curve X25519;
    # Tickets stay on, as by default: both servers send two per full TLS 1.3 handshake.
    location / { proxy_pass http://backend; proxy_http_version 1.1; proxy_set_header Connection ""; }
  }
}
NGINX
taskset -c 0 nginx -c "$work/nginx.conf"
wait_port "$ngx"

# nginx on Tongsuo serving RFC 8998: the same configuration with the SM suite, group, scheme
# and the SM2 certificate.
ngxts=$(free_port)
sed -e "s|$work/nginx.pid|$work/nginx-ts.pid|" -e "s|127.0.0.1:$ngx ssl|127.0.0.1:$ngxts ssl|" \
    -e "s|$work/ecdsa.pem|$work/sm2.pem|" -e "s|$work/ecdsa.key|$work/sm2.key|" \
    -e "s|ssl_ecdh_curve X25519;|ssl_ecdh_curve curveSM2; ssl_conf_command Ciphersuites TLS_SM4_GCM_SM3; ssl_conf_command SignatureAlgorithms sm2sig_sm3;|" \
    -e "s|error_log $work/nginx/error.log|error_log $work/nginx/error-ts.log|" \
    nginx.conf > nginx-ts.conf
taskset -c 0 "$nginx_tongsuo" -c "$work/nginx-ts.conf" -p "$work/nginx"
wait_port "$ngxts"

ts=$(free_port)
taskset -c 0 "$tongsuo" s_server -quiet -enable_ntls -accept "127.0.0.1:$ts" -www \
  -sign_cert sign.pem -sign_key sign.key -enc_cert enc.pem -enc_key enc.key \
  -cipher ECC-SM2-SM4-GCM-SM3 >/dev/null 2>&1 </dev/null &
pids+=($!)
ts_pid=$!
tsm=$(free_port)
taskset -c 0 "$tongsuo" s_server -quiet -accept "127.0.0.1:$tsm" -www -cert sm2.pem -key sm2.key \
  -ciphersuites TLS_SM4_GCM_SM3 -sigalgs sm2sig_sm3 -groups curveSM2 >/dev/null 2>&1 </dev/null &
pids+=($!)
tsm_pid=$!
wait_port "$ts"
wait_port "$tsm"

# OpenSSL 4.0's libssl in the small C server, alone and with shangmi.so preferred.
printf '%s\n' 'openssl_conf = openssl_init' '[openssl_init]' 'providers = provider_sect' \
  'alg_section = algorithm_sect' '[provider_sect]' 'default = default_sect' \
  'shangmi = shangmi_sect' '[default_sect]' 'activate = 1' '[shangmi_sect]' \
  "module = $module/shangmi.so" 'activate = 1' '[algorithm_sect]' \
  'default_properties = ?provider=shangmi' > prefer.cnf
o4p=$(free_port)
taskset -c 0 ./https_server "$o4p" sm2.pem sm2.key 2>/dev/null &
pids+=($!)
o4_pid=$!
o4sp=$(free_port)
OPENSSL_CONF=$work/prefer.cnf taskset -c 0 ./https_server "$o4sp" sm2.pem sm2.key 2>/dev/null &
pids+=($!)
o4s_pid=$!
wait_port "$o4p"
wait_port "$o4sp"

ngx_pids="$(cat nginx.pid) $(pgrep -P "$(cat nginx.pid)" | tr '\n' ' ')"
ngxts_pids="$(cat nginx-ts.pid) $(pgrep -P "$(cat nginx-ts.pid)" | tr '\n' ' ')"
cases=(
  "nginx-tongsuo-rfc8998|$ngxts|rfc8998|$ngxts_pids"
  "gateway-rfc8998|$gw|rfc8998|$gw_pid"
  "gateway-tls13|$gw|tls13|$gw_pid"
  "nginx-tls13|$ngx|tls13|$ngx_pids"
  "gateway-tlcp|$gw|tlcp-ecc|$gw_pid"
  "tongsuo-tlcp|$ts|tlcp-ecc|$ts_pid"
  "tongsuo-rfc8998|$tsm|rfc8998|$tsm_pid"
  "openssl4-rfc8998|$o4p|rfc8998|$o4_pid"
  "openssl4-shangmi-rfc8998|$o4sp|rfc8998|$o4s_pid"
)
# CPU time (clock ticks) the server's processes have used, all threads.
ticks() { local t=0; for p in $1; do t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done; echo "$t"; }
hz=$(getconf CLK_TCK)
echo "CPU: $(lscpu | sed -n 's/^Model name: *//p'); $rounds rounds of ${seconds}s per server, $conc connections in flight" >&2
for r in $(seq "$rounds"); do
  n=${#cases[@]}
  for i in $(seq 0 $((n - 1))); do
    c=${cases[$(( (i + r) % n ))]}
    IFS='|' read -r name port proto spids <<<"$c"
    before=$(ticks "$spids")
    t0=$(date +%s.%N)
    line=$(taskset -c 1 "$bin/gateway-load" run --addr "127.0.0.1:$port" --proto "$proto" \
      --ca ca.pem --concurrency "$conc" --seconds "$seconds")
    t1=$(date +%s.%N)
    after=$(ticks "$spids")
    # The server's share of its core over the run: below 1, the client set the pace.
    util=$(python3 -c "print(round(($after - $before) / $hz / ($t1 - $t0), 3))")
    line="$line $util"
    echo "$name $line" >> results.txt
    echo "round $r: $name $line" >&2
  done
done

python3 - results.txt <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, cps, p50, p99, err, util = line.split()
    rows.setdefault(name, []).append((float(cps), float(p50), float(p99), int(err), float(util)))
med = {k: (statistics.median(r[0] for r in v), statistics.median(r[1] for r in v),
           statistics.median(r[2] for r in v), sum(r[3] for r in v),
           statistics.median(r[0] / max(r[4], 1e-3) for r in v),
           statistics.median(r[4] for r in v)) for k, v in rows.items()}
print("| server | connections/s | per server core | server CPU | p50 ms | p99 ms | errors |")
print("|---|---:|---:|---:|---:|---:|---:|")
for k, (c, p50, p99, e, per, util) in sorted(med.items()):
    print(f"| {k} | {c:.0f} | {per:.0f} | {util:.2f} | {p50:.2f} | {p99:.2f} | {e} |")
def ratio(a, b, i):
    return med[a][i] / med[b][i] if med.get(b) and med[b][i] else float('nan')
print()
for a, b, what in [
    ("gateway-rfc8998", "nginx-tls13", "gateway RFC 8998 / nginx TLS 1.3 ECDSA"),
    ("gateway-tls13", "nginx-tls13", "gateway TLS 1.3 ECDSA / nginx TLS 1.3 ECDSA"),
    ("gateway-tlcp", "tongsuo-tlcp", "gateway TLCP / Tongsuo s_server TLCP"),
    ("gateway-rfc8998", "nginx-tongsuo-rfc8998", "gateway RFC 8998 / nginx on Tongsuo RFC 8998"),
    ("gateway-rfc8998", "tongsuo-rfc8998", "gateway RFC 8998 / Tongsuo s_server RFC 8998"),
    ("gateway-rfc8998", "openssl4-rfc8998", "gateway RFC 8998 / OpenSSL 4 C server RFC 8998"),
    ("openssl4-shangmi-rfc8998", "openssl4-rfc8998",
     "OpenSSL 4 C server with shangmi.so / without, RFC 8998"),
]:
    print(f"{what}: {ratio(a, b, 0):.2f}x connections/s, {ratio(a, b, 4):.2f}x per server core")
PY
