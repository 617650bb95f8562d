#!/usr/bin/env bash
# Install the servers the test suite starts private instances of: Debian's PostgreSQL and
# Redis. Idempotent: installs only what is missing, and does nothing (not even
# `apt-get update`) when both are there. Quiet: prints one line naming what it installs, and
# apt's output only when something fails.
#
# It installs, never starts: the test fixtures (tests/support/pgserver.py,
# tests/support/redisserver.py) run their own servers on free ports in temp dirs, so the
# packages' system-wide services are kept from starting while installing (policy-rc.d).
#
#   bash scripts/ensure-services.sh        # as root (CI is root), or via sudo
set -euo pipefail

PACKAGES=(postgresql redis-server)

installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q '^install ok installed$'
}

missing=()
for package in "${PACKAGES[@]}"; do
  installed "$package" || missing+=("$package")
done
if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    exec sudo -n -- bash "$0" "$@"
  fi
  echo "ensure-services: ${missing[*]} missing and not root: install them as root" >&2
  exit 1
fi

log=$(mktemp)
policy=/usr/sbin/policy-rc.d
made_policy=0
cleanup() {
  rm -f "$log"
  # Remove the policy only if this script made it: a container's own one stays.
  if [ "$made_policy" -eq 1 ]; then rm -f "$policy"; fi
}
trap cleanup EXIT

if [ ! -e "$policy" ]; then
  # Exit status 101 = "action forbidden": invoke-rc.d then does not start the packages'
  # services (a system-wide redis on 6379 and a postgres cluster on 5432 that nothing uses).
  printf '#!/bin/sh\nexit 101\n' >"$policy"
  chmod 755 "$policy"
  made_policy=1
fi

export DEBIAN_FRONTEND=noninteractive
# Fail with apt's own words, which are otherwise kept out of the CI log.
run() {
  if ! "$@" >"$log" 2>&1; then
    cat "$log" >&2
    echo "ensure-services: failed: $*" >&2
    exit 1
  fi
}

echo "ensure-services: installing ${missing[*]}"
run apt-get update -qq
run apt-get install -y -qq --no-install-recommends "${missing[@]}"
for package in "${missing[@]}"; do
  installed "$package" || { echo "ensure-services: $package did not install" >&2; exit 1; }
done
