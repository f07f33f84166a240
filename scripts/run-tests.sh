#!/usr/bin/env bash
# make test's Swift part: one build of the tests, then the unit targets, then the integration
# targets (real processes: the passforge CLI killed mid-build, serve, nginx, Caddy, sshd,
# Chromium, Schemathesis, PostgreSQL). Both always run; each says its test time.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}

# Unit targets: in process, or the one real tool they are about (openssl verifying a signature,
# cmark-gfm rendering markdown, the process wrapper's own processes).
UNIT='^(AtomicFilesTests|PassModelTests|PassContentTests|PassPackageTests|PassBuildTests|BarcodesTests|ConcurrencySupportTests|TextEscapingTests|DeviceCheckTests|PassPushTests|ExternalProcessTests|PassServerTests)\.'

$SWIFT build --build-tests
start=$(date +%s)
$SWIFT test --skip-build --filter "$UNIT"
unit=$(( $(date +%s) - start ))
# The Python tools of the integration targets (Schemathesis, selenium, zxing-cpp) are installed
# here, once, before their tests start: inside the parallel run, the tests that wait for the
# install would hold the test runner's few threads for a minute and starve the in-process servers.
scripts/test-venv.sh > /dev/null
start=$(date +%s)
$SWIFT test --skip-build --skip "$UNIT"
integration=$(( $(date +%s) - start ))
echo "test time: unit targets ${unit} s, integration targets ${integration} s"
