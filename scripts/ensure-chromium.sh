#!/usr/bin/env bash
# Install Debian's chromium and chromedriver when they are missing (the site's browser tests
# drive them through selenium; nothing downloads a browser of its own).
# Called by tests/catalog/site/conftest.py when CI is set; safe to run by hand at any time.
set -euo pipefail

if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    sudo="sudo"
  else
    echo "ensure-chromium: not root and no sudo: install chromium and chromium-driver" >&2
    exit 1
  fi
fi

export DEBIAN_FRONTEND=noninteractive
# Fonts are only "recommended" by chromium, but screenshots without them show empty boxes.
PACKAGES=(chromium chromium-driver fonts-liberation fonts-dejavu-core)
echo "ensure-chromium: installing ${PACKAGES[*]} with apt-get" >&2
log="$(mktemp)"
if ! { $sudo apt-get update -qq && $sudo apt-get install -y -qq --no-install-recommends "${PACKAGES[@]}"; } >"$log" 2>&1; then
  cat "$log" >&2
  rm -f "$log"
  exit 1
fi
rm -f "$log"
command -v chromium >/dev/null && command -v chromedriver >/dev/null
