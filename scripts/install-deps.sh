#!/usr/bin/env bash
# Installs the Debian packages trnsim builds against. Does nothing when all are present, so
# `make` stays fast on a machine that has them.
set -euo pipefail
pkgs=(g++ cmake ninja-build make python3-venv python3-dev
      libfmt-dev libyaml-cpp-dev nlohmann-json3-dev libcli11-dev
      libgtest-dev libgmock-dev libbenchmark-dev
      libprotobuf-dev protobuf-compiler libonnx-dev libopenblas-dev libzip-dev
      chromium)  # chromium: headless, the browser test of `trnsim report` (tests/python/test_report_browser.py)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# cmake, ninja and python may come from elsewhere (pip, pyenv); only ask apt for them when absent.
for tool in cmake:cmake ninja:ninja-build python3:python3-venv; do
  bin=${tool%%:*}; pkg=${tool#*:}
  if command -v "$bin" >/dev/null 2>&1; then
    missing=("${missing[@]/$pkg}")
  fi
done
command -v python3 >/dev/null && python3 -c 'import venv, sysconfig; assert sysconfig.get_paths()["include"]' 2>/dev/null \
  && missing=("${missing[@]/python3-dev}")
read -ra missing <<<"${missing[*]}"
[ ${#missing[@]} -eq 0 ] && exit 0
echo "install-deps: installing ${missing[*]}"
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
