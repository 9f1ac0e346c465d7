#!/usr/bin/env bash
# Installs the system packages Herald builds against, when they are missing (a fresh machine or CI).
# Sourced by scripts/test and scripts/herald.
set -euo pipefail

missing=()
dpkg -s libsqlite3-dev >/dev/null 2>&1 || missing+=(libsqlite3-dev)
if [ ${#missing[@]} -gt 0 ]; then
  echo "Installing ${missing[*]} (needed by GRDB, Herald's SQLite store)…" >&2
  if [ "$(id -u)" -eq 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
  else
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
  fi
fi
