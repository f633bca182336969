# Sourced by scripts/demo and scripts/test: make .venv with a working pip, on any Debian machine.
#
# Debian's own python3 has no ensurepip until the python3-venv package is installed: `python -m venv`
# then fails half-way and leaves a .venv without pip, which a later run would wrongly reuse.

apt_install() {
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}

make_venv() {
  local py=${PYTHON:-python3}
  if ! "$py" -c "import ensurepip, venv" >/dev/null 2>&1; then
    apt_install python3-venv
  fi
  if [ ! -x .venv/bin/python ] || ! .venv/bin/python -m pip --version >/dev/null 2>&1; then
    rm -rf .venv
    "$py" -m venv .venv
  fi
  .venv/bin/python -m pip install -q --upgrade pip
}
