#!/usr/bin/env bash
# Install the Twilight table companion as a systemd service on Raspberry Pi OS.
#
#   sudo systemd/install.sh            install or update (safe to run again)
#   systemd/install.sh --dry-run       print every step, change nothing
#
# numpy, OpenCV, picamera2, gpiozero and lgpio come from Raspberry Pi OS's apt
# packages; the venv sees them (--system-site-packages) and the project is
# installed with --no-deps so pip never replaces them (pip's numpy 2 breaks
# apt's picamera2).
set -euo pipefail

APP=twilight-companion
USER_NAME=twilight
PREFIX=/opt/$APP
VENV=$PREFIX/venv
SRC=$PREFIX/src
ETC=/etc/$APP
UNIT=/etc/systemd/system/$APP.service
STATE=/var/lib/$APP
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(dirname "$HERE")

APT_PACKAGES=(
  python3-venv python3-pip python3-picamera2 python3-opencv python3-numpy
  python3-gpiozero python3-lgpio python3-flask python3-waitress python3-pil
)
# Not packaged by apt on every release: installed with pip into the venv
# (pyspng, the fast PNG decoder, is optional: without it OpenCV reads PNG files).
PIP_ONLY=(segno pyspng)

DRY=0
for arg in "$@"; do
  case "$arg" in
    --dry-run|-n) DRY=1 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "install.sh: unknown option $arg (try --dry-run)" >&2; exit 2 ;;
  esac
done

step() { printf '==> %s\n' "$*"; }
run() {
  printf '    $ %s\n' "$*"
  if [ "$DRY" -eq 0 ]; then "$@"; fi
}

if [ "$DRY" -eq 0 ] && [ "$(id -u)" -ne 0 ]; then
  echo "install.sh: run as root (sudo), or with --dry-run to see the steps" >&2
  exit 1
fi

step "apt packages (numpy, OpenCV, picamera2, gpiozero, lgpio, Flask, waitress)"
run apt-get update
run apt-get install -y "${APT_PACKAGES[@]}"

step "service user $USER_NAME (groups video, gpio)"
if id "$USER_NAME" >/dev/null 2>&1; then
  echo "    user $USER_NAME exists"
  run usermod -a -G video,gpio "$USER_NAME"
else
  run useradd --system --home-dir "$STATE" --no-create-home --shell /usr/sbin/nologin \
    --groups video,gpio "$USER_NAME"
fi

step "source in $SRC"
run mkdir -p "$PREFIX"
run rm -rf "$SRC.new"
run cp -a "$REPO" "$SRC.new"
run rm -rf "$SRC.new/.venv" "$SRC.new/.git"
run rm -rf "$SRC"
run mv "$SRC.new" "$SRC"

step "virtual environment $VENV (sees the apt packages)"
if [ -x "$VENV/bin/python" ]; then
  echo "    venv exists"
else
  run python3 -m venv --system-site-packages "$VENV"
fi
run "$VENV/bin/pip" install --quiet --no-deps --upgrade "$SRC"
run "$VENV/bin/pip" install --quiet "${PIP_ONLY[@]}"
run "$VENV/bin/python" -c "import numpy, cv2, flask, waitress, gpiozero, segno; print('numpy', numpy.__version__, 'opencv', cv2.__version__)"

step "config $ETC/config.toml (kept if present)"
run mkdir -p "$ETC"
if [ -f "$ETC/config.toml" ]; then
  echo "    config exists, left as it is"
else
  run install -m 0644 "$HERE/config.example.toml" "$ETC/config.toml"
fi

step "systemd unit $UNIT"
run install -m 0644 "$HERE/$APP.service" "$UNIT"
run systemctl daemon-reload
run systemctl enable "$APP.service"
run systemctl restart "$APP.service"

step "done: the score page is on port 8000; the table PIN is in the journal"
echo "    journalctl -u $APP -n 30"
