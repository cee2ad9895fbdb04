#!/usr/bin/env bash
# Peers the benchmarks compare against; not needed by the tests.
set -euo pipefail
need=()
for pair in nginx:nginx haproxy:haproxy caddy:caddy wrk:wrk hyperfine:hyperfine; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || need+=("${pair#*:}")
done
if [ ${#need[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq "${need[@]}" >/dev/null
fi
