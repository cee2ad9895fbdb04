#!/usr/bin/env bash
# Reverse-proxy benchmark: the same 100-byte backend (nginx, one worker) behind nginx, haproxy, caddy and
# svc-proxy. wrk: 2 threads, 64 connections, Host: bench.test. Prints req/s, p50, p99, proxy CPU per request
# and the ratio to nginx; then svc-proxy with 10 vs 10,000 routes (with and without active checks), and RSS per 1,000 idle keep-alive clients.
# Needs: scripts/install-bench-deps.sh. Usage: bench/proxy/run.sh [DURATION_SECONDS]   (not part of npm test)
# PEERS="nginx svc-proxy svc-proxy-10k" runs a subset (nginx is always added: the ratios are to it).
set -euo pipefail
cd "$(dirname "$0")/../.."
DUR="${1:-10}"
WORK="$(mktemp -d /tmp/svc-proxy-bench.XXXXXX)"
BACKEND=18080 NGINX=18081 HAPROXY=18082 CADDY=18083 SVC=18084
PIDS=()
MAIN_SHELL=$BASHPID
cleanup() {
  # Command substitutions of functions may run this trap too; only the main shell cleans up.
  [ "$BASHPID" = "$MAIN_SHELL" ] || return 0
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  sleep 0.5
  rm -rf "$WORK"
}
trap cleanup EXIT
for cmd in nginx haproxy caddy wrk node; do
  command -v "$cmd" >/dev/null || { echo "missing $cmd: run scripts/install-bench-deps.sh" >&2; exit 1; }
done
CLK=$(getconf CLK_TCK)
BODY=$(head -c 100 /dev/zero | tr '\0' 'x')

# Sum of utime+stime (ticks) over a process and its descendants.
tree_pids() { local p=$1; echo "$p"; for c in $(pgrep -P "$p" || true); do tree_pids "$c"; done; }
cpu_ticks() { local t=0; for p in $(tree_pids "$1"); do [ -r "/proc/$p/stat" ] && t=$((t + $(awk '{print $14+$15}' "/proc/$p/stat"))); done; echo "$t"; }
rss_kb() { local t=0; for p in $(tree_pids "$1"); do [ -r "/proc/$p/status" ] && t=$((t + $(awk '/^VmRSS/{print $2}' "/proc/$p/status"))); done; echo "$t"; }
wait_port() { for _ in $(seq 1 100); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; echo "port $1 never opened" >&2; return 1; }

# --- backend: nginx, 1 worker, fixed 100-byte body
mkdir -p "$WORK/backend" "$WORK/nginx"
cat > "$WORK/backend/nginx.conf" <<CONF
daemon off; worker_processes 1; pid $WORK/backend/pid; error_log $WORK/backend/error.log;
events { worker_connections 4096; }
http { access_log off; keepalive_requests 100000;
  server { listen 127.0.0.1:$BACKEND; location / { default_type text/plain; return 200 "$BODY"; } } }
CONF
nginx -c "$WORK/backend/nginx.conf" -p "$WORK/backend" & PIDS+=($!)
wait_port $BACKEND

# --- peers (each with keep-alive to the backend)
cat > "$WORK/nginx/nginx.conf" <<CONF
daemon off; worker_processes 1; pid $WORK/nginx/pid; error_log $WORK/nginx/error.log;
events { worker_connections 4096; }
http { access_log off; keepalive_requests 100000;
  upstream be { server 127.0.0.1:$BACKEND; keepalive 64; }
  server { listen 127.0.0.1:$NGINX; location / { proxy_pass http://be; proxy_http_version 1.1; proxy_set_header Connection ""; proxy_set_header Host \$host; } } }
CONF
cat > "$WORK/haproxy.cfg" <<CONF
global
  nbthread 1
  maxconn 4000
defaults
  mode http
  timeout connect 5s
  timeout client 60s
  timeout server 60s
  option http-keep-alive
frontend fe
  bind 127.0.0.1:$HAPROXY
  default_backend be
backend be
  http-reuse always
  server s1 127.0.0.1:$BACKEND
CONF
cat > "$WORK/Caddyfile" <<CONF
{
  admin off
  auto_https off
}
http://bench.test:$CADDY {
  bind 127.0.0.1
  reverse_proxy 127.0.0.1:$BACKEND
}
CONF

ALL_PEERS="nginx haproxy caddy svc-proxy svc-proxy-2w svc-proxy-10k svc-proxy-10k-nc"
PEER_LIST="nginx $(echo "${PEERS:-$ALL_PEERS}" | tr ' ' '\n' | grep -vx nginx | tr '\n' ' ')"
declare -A RPS P50 P99 CPU RSS
run_wrk() { # name port pid
  local name=$1 port=$2 pid=$3 before after out reqs
  wrk -t2 -c64 -d2s -H 'Host: bench.test' "http://127.0.0.1:$port/" >/dev/null 2>&1 || true
  before=$(cpu_ticks "$pid")
  out=$(wrk -t2 -c64 -d"${DUR}s" --latency -H 'Host: bench.test' "http://127.0.0.1:$port/")
  after=$(cpu_ticks "$pid")
  reqs=$(echo "$out" | awk '/requests in/{print $1}')
  RPS[$name]=$(echo "$out" | awk '/^Requests\/sec/{printf "%d", $2}')
  P50[$name]=$(echo "$out" | awk '$1=="50%"{print $2}')
  P99[$name]=$(echo "$out" | awk '$1=="99%"{print $2}')
  CPU[$name]=$(awk -v t=$((after - before)) -v r="$reqs" -v c="$CLK" 'BEGIN{ printf "%.1f", (t / c) * 1e6 / r }')
  RSS[$name]=$(( $(rss_kb "$pid") / 1024 ))
  if echo "$out" | grep -q 'Non-2xx'; then echo "WARNING: $name answered non-2xx: $(echo "$out" | grep Non-2xx)" >&2; fi
}
idle_mem() { # pid port -> KB per 1000 idle connections
  local pid=$1 port=$2 before after
  sleep 1
  before=$(rss_kb "$pid")
  node bench/proxy/idle-conns.mjs "$port" 1000 3000 > "$WORK/idle.out" & local c=$!
  for _ in $(seq 1 100); do grep -q ready "$WORK/idle.out" 2>/dev/null && break; sleep 0.1; done
  sleep 1
  after=$(rss_kb "$pid")
  wait $c || true
  echo $((after - before))
}
declare -A MEM
PEER_PID=
start_peer() { # name; sets PEER_PID (no command substitution: its subshell would run the EXIT trap)
  case $1 in
    nginx) nginx -c "$WORK/nginx/nginx.conf" -p "$WORK/nginx" & ;;
    haproxy) haproxy -f "$WORK/haproxy.cfg" -db & ;;
    caddy) XDG_DATA_HOME="$WORK" XDG_CONFIG_HOME="$WORK" caddy run --adapter caddyfile --config "$WORK/Caddyfile" >"$WORK/caddy.log" 2>&1 & ;;
    svc-proxy) node --import tsx bench/proxy/svc-proxy-bench.ts $SVC $BACKEND 10 1 > "$WORK/svc.log" 2>&1 & ;;
    svc-proxy-2w) node --import tsx bench/proxy/svc-proxy-bench.ts $SVC $BACKEND 10 2 > "$WORK/svc.log" 2>&1 & ;;
    svc-proxy-10k) node --import tsx bench/proxy/svc-proxy-bench.ts $SVC $BACKEND 10000 1 > "$WORK/svc.log" 2>&1 & ;;
    svc-proxy-10k-nc) NO_ACTIVE_CHECKS=1 node --import tsx bench/proxy/svc-proxy-bench.ts $SVC $BACKEND 10000 1 > "$WORK/svc.log" 2>&1 & ;;
  esac
  PEER_PID=$!
}
port_of() { case $1 in nginx) echo $NGINX;; haproxy) echo $HAPROXY;; caddy) echo $CADDY;; *) echo $SVC;; esac; }

for name in $PEER_LIST; do
  start_peer "$name"; pid=$PEER_PID; PIDS+=("$pid")
  port=$(port_of "$name")
  wait_port "$port"
  sleep 1
  run_wrk "$name" "$port" "$pid"
  case $name in svc-proxy-2w|svc-proxy-10k*) MEM[$name]="-";; *) MEM[$name]=$(idle_mem "$pid" "$port");; esac
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  sleep 1
done

echo
echo "wrk -t2 -c64 -d${DUR}s, 100-byte body, Host: bench.test ($(nproc) cores shared by wrk, backend and proxy)"
printf '%-16s %10s %9s %9s %14s %9s %16s %14s\n' proxy req/s p50 p99 cpu_us/req vs_nginx rss_kb/1000idle rss_mb_loaded
for name in $PEER_LIST; do
  ratio=$(awk -v a="${RPS[$name]}" -v b="${RPS[nginx]}" 'BEGIN{ printf "%.2f", a / b }')
  printf '%-16s %10s %9s %9s %14s %9s %16s %14s\n' "$name" "${RPS[$name]}" "${P50[$name]}" "${P99[$name]}" "${CPU[$name]}" "$ratio" "${MEM[$name]}" "${RSS[$name]}"
done
[ -n "${RPS[svc-proxy]:-}" ] && [ -n "${RPS[svc-proxy-10k]:-}" ] && [ -n "${RPS[svc-proxy-10k-nc]:-}" ] || exit 0
echo "10,000 routes vs 10 (svc-proxy, 1 worker): $(awk -v a="${RPS[svc-proxy-10k]}" -v b="${RPS[svc-proxy]}" 'BEGIN{ printf "%.3f", a / b }') x throughput with active checks (shared per backend)," \
  "$(awk -v a="${RPS[svc-proxy-10k-nc]}" -v b="${RPS[svc-proxy]}" 'BEGIN{ printf "%.3f", a / b }') x without active checks (10k-nc)"
echo "route table alone (in process, best of 7 interleaved rounds):"
node --import tsx bench/proxy/route-table.ts
