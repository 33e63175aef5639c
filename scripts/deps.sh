# Sourced by the other scripts: makes liburing, GoogleTest and a C++ toolchain available.
# With network access it installs Debian/Ubuntu packages; on a machine without it (the GPU VMs
# we test on) it unpacks .deb files found in .deps/ (`apt-get download liburing2 liburing-dev
# libgtest-dev` on a machine with network) into .deps/root and points CMake there.
agio_have() { command -v "$1" >/dev/null 2>&1; }

if compgen -G ".deps/*.deb" >/dev/null; then
  mkdir -p .deps/root
  for deb in .deps/*.deb; do dpkg -x "$deb" .deps/root; done
  export CMAKE_PREFIX_PATH="$PWD/.deps/root/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
  export LD_LIBRARY_PATH="$PWD/.deps/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
elif ! { [ -f /usr/include/liburing.h ] && [ -d /usr/include/gtest ] && agio_have cmake && agio_have g++; }; then
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  $sudo_cmd apt-get install -y -qq build-essential cmake pkg-config liburing-dev libgtest-dev >/dev/null
fi
