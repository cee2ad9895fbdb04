#!/usr/bin/env bash
# README command 1: install what is needed, then start the orchestrator on its embedded defaults (SQLite file,
# Docker runtime) on 127.0.0.1:3030 in the background, and svc-proxy beside it when its example config validates.
# Idempotent: a second run finds the running server and only prints how to use it.
#
# State lives in .svc-local/ (mode 0700): secret.key and admin-password (0600, generated once when not given),
# svc.db, svc.log, svc.pid, proxy.log, proxy.pid.
# Environment: SVC_SECRET_KEY, SVC_ADMIN_PASSWORD, SVC_DATABASE_PATH are honoured when set.
# SVC_UP_SKIP_INSTALL=1 skips scripts/install-deps.sh (for a tree that is already installed and built).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
state="$root/.svc-local"
url="http://127.0.0.1:3030"

if [ "${SVC_UP_SKIP_INSTALL:-}" != "1" ]; then
  bash scripts/install-deps.sh
fi

mkdir -p "$state"
chmod 700 "$state"

random_base64() { node -e "process.stdout.write(require('node:crypto').randomBytes($1).toString('base64'))"; }

if [ -z "${SVC_SECRET_KEY:-}" ]; then
  if [ ! -s "$state/secret.key" ]; then
    (umask 077 && random_base64 32 > "$state/secret.key")
    echo "generated a secret key in .svc-local/secret.key (keep it: secrets are unreadable without it)"
  fi
  SVC_SECRET_KEY=$(cat "$state/secret.key")
  export SVC_SECRET_KEY
fi
export SVC_DATABASE_PATH="${SVC_DATABASE_PATH:-$state/svc.db}"
if [ -z "${SVC_ADMIN_PASSWORD:-}" ] && [ ! -e "$SVC_DATABASE_PATH" ]; then
  # First start: choose the admin password here, so this script can print the login command every time.
  (umask 077 && node -e "process.stdout.write(require('node:crypto').randomBytes(18).toString('base64url'))" > "$state/admin-password")
fi
if [ -z "${SVC_ADMIN_PASSWORD:-}" ] && [ -s "$state/admin-password" ]; then
  SVC_ADMIN_PASSWORD=$(cat "$state/admin-password")
  export SVC_ADMIN_PASSWORD
fi

# node, not curl: node is the one thing this machine is guaranteed to have.
healthy() { node -e 'fetch(process.argv[1] + "/healthz", { signal: AbortSignal.timeout(2000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))' "$1"; }
answers() { node -e 'fetch(process.argv[1], { signal: AbortSignal.timeout(1000) }).then(() => process.exit(0), () => process.exit(1))' "$1"; }
alive() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# `svc server start` from the build when the build has it; otherwise the TypeScript entry through tsx.
if [ -f packages/svc/dist/cli/commands/server.js ] && [ -f packages/svc/dist/server/main.js ]; then
  server_cmd=(node_modules/.bin/svc server start)
else
  server_cmd=(node --import tsx packages/svc/src/server/standalone.ts)
fi

if alive "$state/svc.pid" && healthy "$url"; then
  echo "svc is already running (pid $(cat "$state/svc.pid"))"
else
  if healthy "$url"; then
    echo "error: something else already answers on $url; stop it first" >&2
    exit 1
  fi
  echo "starting svc: ${server_cmd[*]}"
  nohup "${server_cmd[@]}" </dev/null >>"$state/svc.log" 2>&1 &
  echo $! > "$state/svc.pid"
  for _ in $(seq 1 60); do
    healthy "$url" && break
    alive "$state/svc.pid" || break
    sleep 0.5
  done
  if ! healthy "$url"; then
    echo "error: svc did not start; last lines of .svc-local/svc.log:" >&2
    tail -n 20 "$state/svc.log" >&2
    exit 1
  fi
fi

# svc-proxy beside it, only when its example configuration validates (the proxy is optional for svc).
proxy_config="$root/examples/proxy/config.yaml"
proxy_note="svc-proxy: not started (examples/proxy/config.yaml missing or invalid)"
if [ -f "$proxy_config" ] && node_modules/.bin/svc-proxy validate --config "$proxy_config" >/dev/null 2>&1; then
  if alive "$state/proxy.pid"; then
    proxy_note="svc-proxy: already running (pid $(cat "$state/proxy.pid"))"
  else
    # exec: the recorded pid is the proxy itself, and no shell keeps this script's stdout open.
    (cd "$root/examples/proxy" && exec nohup "$root/node_modules/.bin/svc-proxy" serve --config "$proxy_config" </dev/null >>"$state/proxy.log" 2>&1) &
    echo $! > "$state/proxy.pid"
    # Up means its management API answers (any HTTP status), on the first listen_address of the file (api:).
    proxy_api=$(grep -m1 -o 'listen_address: *[0-9.:]*' "$proxy_config" | awk '{print $2}')
    proxy_up=no
    for _ in $(seq 1 20); do
      alive "$state/proxy.pid" || break
      if answers "http://$proxy_api/"; then proxy_up=yes; break; fi
      sleep 0.5
    done
    if [ "$proxy_up" = yes ]; then
      proxy_note="svc-proxy: running (pid $(cat "$state/proxy.pid"), log .svc-local/proxy.log, config examples/proxy/config.yaml)"
    else
      kill "$(cat "$state/proxy.pid")" 2>/dev/null || true
      rm -f "$state/proxy.pid"
      proxy_note="svc-proxy: failed to start; see .svc-local/proxy.log"
    fi
  fi
fi

echo
echo "svc is up on $url (pid $(cat "$state/svc.pid"), log .svc-local/svc.log, database $SVC_DATABASE_PATH)"
echo "$proxy_note"
echo
if [ -n "${SVC_ADMIN_PASSWORD:-}" ]; then
  echo "log in:  node_modules/.bin/svc login -u admin -p '$SVC_ADMIN_PASSWORD'"
else
  echo "log in:  node_modules/.bin/svc login -u admin -p <the password printed on the first start, see .svc-local/svc.log>"
fi
echo "stop:    kill \$(cat .svc-local/svc.pid)$( [ -s "$state/proxy.pid" ] && echo ' $(cat .svc-local/proxy.pid)')"
