#!/usr/bin/env bash
# Prints the path of a Python interpreter that has scripts/test-requirements.txt installed.
# The venv lives in .build/test-venv (thrown away with .build) and is rebuilt when the
# requirements change. Concurrent callers wait on one lock, so parallel tests install once.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
requirements="$root/scripts/test-requirements.txt"
venv="${PASSFORGE_TEST_VENV:-$root/.build/test-venv}"
mkdir -p "$(dirname "$venv")"
exec 9>"$venv.lock"
flock 9
stamp="$venv/.requirements"
if ! [ -x "$venv/bin/python" ] || ! cmp -s "$requirements" "$stamp"; then
  rm -rf "$venv"
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$requirements" >&2
  cp "$requirements" "$stamp"
fi
echo "$venv/bin/python"
