#!/usr/bin/env bash
# System packages (Debian/Ubuntu) that the project needs beyond pip:
#   libegl1 libegl-mesa0 libgl1-mesa-dri  headless OpenGL through EGL (Mesa's llvmpipe on a CPU) — MUJOCO_GL=egl
#   libosmesa6                            fallback headless OpenGL — MUJOCO_GL=osmesa
#   chromium chromium-driver              the headless browser the report test drives
# Installing needs root (it runs apt-get through sudo when not root, and says so first). Only the packages above,
# without Debian's recommended extras. Idempotent: installs only what is missing, so a second run does nothing,
# needs no network and no root.
set -euo pipefail

PACKAGES=(libegl1 libegl-mesa0 libgl1-mesa-dri libosmesa6 chromium chromium-driver)

missing=()
for pkg in "${PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$pkg")
    fi
done

if [ ${#missing[@]} -eq 0 ]; then
    echo "install_system_deps: all present (${PACKAGES[*]})"
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "install_system_deps: missing ${missing[*]} and no apt-get here; install them with your package manager" >&2
    exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO="sudo"
        echo "install_system_deps: installing system packages needs root; running apt-get through sudo" >&2
    else
        echo "install_system_deps: missing ${missing[*]}; installing them needs root: run this script as root" >&2
        exit 1
    fi
fi

echo "install_system_deps: installing ${missing[*]} (apt-get --no-install-recommends)"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
