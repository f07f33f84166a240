#!/usr/bin/env bash
# make test's Swift part: one build of the tests, then the unit targets, then the integration
# targets (real processes: the passforge CLI killed mid-build, serve, nginx, Caddy, sshd,
# Chromium, Schemathesis, PostgreSQL), then the CDN fronts of deploy/cdn/ (node, nginx, SeaweedFS).
# Each says its test time.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}

# A target's name says which it is: the integration targets end in IntegrationTests (they start processes:
# openssl, unzip, the passforge CLI, serve, nginx, sshd, Chromium; or need PostgreSQL); every other test target
# is a unit target and runs in process.
INTEGRATION='^[A-Za-z]+IntegrationTests\.'

$SWIFT build --build-tests
start=$(date +%s)
$SWIFT test --skip-build --skip "$INTEGRATION"
unit=$(( $(date +%s) - start ))
# The Python tools of the integration targets (Schemathesis, selenium, zxing-cpp) are installed
# here, once, before their tests start: inside the parallel run, the tests that wait for the
# install would hold the test runner's few threads for a minute and starve the in-process servers.
python=$(scripts/test-venv.sh)
start=$(date +%s)
# Suites that run on their own, after the others:
# - SlowClientTests holds 1,100 sockets in the test process; Foundation's Process.run crashes (memcpy in
#   Process.run) when another test starts a program while descriptors above 1024 are open;
# - the in-process claim suites measure deadlines and per-minute limits. The async tests no longer hold the
#   runner's threads while a program starts or ends (BackgroundProcess, runProcessWithoutBlocking), but in the
#   parallel run the others' programs share the two cores and the synchronous tests that run programs (the
#   CLI's, publish's, openssl's) block a runner thread each: claimsAreLimitedPerNetwork took 68 s there and saw
#   two refills of its per-minute bucket.
SLOW='^PassServerIntegrationTests\.SlowClientTests'
CLAIMS='^(PassServerIntegrationTests\.OfferClaimRouteTests|PassOffersIntegrationTests\.OfferClaimServiceTests)'
$SWIFT test --skip-build --filter "$INTEGRATION" --skip "$SLOW" --skip "$CLAIMS"
$SWIFT test --skip-build --filter "$CLAIMS"
$SWIFT test --skip-build --filter "$SLOW"
integration=$(( $(date +%s) - start ))
# The CDN fronts of deploy/cdn/ with the cases they share: the CloudFront Function and the Cloudflare Worker under
# node, nginx-cdn.conf with real nginx and SeaweedFS (exit 77: skipped, SeaweedFS missing and CI not set).
start=$(date +%s)
node --test --test-reporter=dot deploy/cdn/tests/cloudfront-function.test.mjs deploy/cdn/tests/cloudflare-worker.test.mjs
"$python" scripts/check-cdn.py || [ $? -eq 77 ]
cdn=$(( $(date +%s) - start ))
echo "test time: unit targets ${unit} s, integration targets ${integration} s, CDN fronts ${cdn} s"
