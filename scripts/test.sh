#!/usr/bin/env bash
# The test command, on a fresh machine too; CI runs exactly this (.ci/run).
#
# The dashboard's browser test drives Debian's chromium through chromium-driver, which
# Maven cannot bring: they are installed once (nothing happens when they are there), then
# the whole build runs. Redis comes from a Maven artifact; nothing else is needed.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  echo "Installing Debian's chromium and chromium-driver for the dashboard's browser test"
  $sudo apt-get install -y -qq chromium chromium-driver \
    || { $sudo apt-get update -qq && $sudo apt-get install -y -qq chromium chromium-driver; }
fi

exec mvn -B -ntp verify "$@"
