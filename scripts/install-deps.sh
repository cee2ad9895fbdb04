#!/usr/bin/env bash
# Installs the system packages and npm dependencies, starts dockerd when no daemon answers, and builds.
# Idempotent: safe to run on a fresh machine and on one that already has everything.
set -euo pipefail
cd "$(dirname "$0")/.."

need_pkgs=()
# Only what the tests need; bench/ scripts install their own peers (nginx, haproxy, caddy, wrk).
for pair in docker:docker.io busybox:busybox-static ip:iproute2 tmux:tmux; do
  bin=${pair%%:*}; pkg=${pair#*:}
  command -v "$bin" >/dev/null 2>&1 || need_pkgs+=("$pkg")
done
# dockerd is in docker.io; the client alone may already exist on the machine.
command -v dockerd >/dev/null 2>&1 || need_pkgs+=(docker.io)
if [ ${#need_pkgs[@]} -gt 0 ]; then
  echo "installing: ${need_pkgs[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${need_pkgs[@]}" >/dev/null
fi

if ! docker info >/dev/null 2>&1; then
  echo "starting dockerd"
  # Every svc namespace is a bridge network of its own; Docker's default pools hold only ~31 networks, which a
  # test run (and a busy host) outgrows. /24 networks carved from 172.20.0.0/14 give room for 1,024.
  (dockerd --default-address-pool base=172.20.0.0/14,size=24 >/var/log/dockerd.log 2>&1 &)
  for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
  docker info >/dev/null 2>&1 || { echo "dockerd did not start; see /var/log/dockerd.log" >&2; exit 1; }
fi

npm ci --no-audit --no-fund
npm run build
