#!/bin/sh
# The test wrapper of `meson test --setup sanitizers`: runs the test with lavapipe's library
# preloaded, so that it stays mapped until the process ends. The Vulkan loader unloads a
# driver when its instance is destroyed; memory that only the driver's globals still point to
# then reads as leaked at exit, from an unnamed module (128 bytes from Mesa 22.3.6's
# deb12u2), which would hide a leak of gpusort's own among them. Kept loaded, the driver's
# memory is reachable and any leak of its own carries its names.
libs=$(sed -n 's/.*"library_path" *: *"\([^"]*\)".*/\1/p' /usr/share/vulkan/icd.d/lvp_icd.*.json 2>/dev/null |
  while read -r lib; do [ -f "$lib" ] && printf '%s:' "$lib"; done)
# (the driver comes before the sanitizer runtime in the load order then: allowed)
export LD_PRELOAD="${libs}${LD_PRELOAD:-}"
export ASAN_OPTIONS="verify_asan_link_order=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
exec "$@"
