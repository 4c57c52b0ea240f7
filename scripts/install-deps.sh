#!/usr/bin/env bash
# Installs the Debian packages gpusort needs to build and test (Debian 12 or newer).
# mesa-vulkan-drivers provides lavapipe, the CPU Vulkan driver used where there is no GPU.
# python3-matplotlib draws the README's plot (scripts/plot-bench.py) and tests it.
# clang and libclang-rt-dev (its libFuzzer and sanitizer runtimes) build the fuzz targets.
# zstd unpacks NVIDIA pipeline caches (scripts/nvidia-sass.py) and tests that.
set -euo pipefail
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo=sudo; fi
$sudo apt-get update
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends \
  gcc g++ libc6-dev pkg-config meson ninja-build python3 \
  libvulkan-dev glslc libxxhash-dev \
  mesa-vulkan-drivers vulkan-validationlayers xxhash python3-numpy python3-matplotlib \
  clang libclang-rt-dev zstd
