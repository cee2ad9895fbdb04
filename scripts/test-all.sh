#!/usr/bin/env bash
# README command 2: install what is needed, then run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
npm test
