# passforge — the two commands of the README: `make run` and `make test`.
# Each installs the system packages it lacks first, so a fresh machine works.

SWIFT ?= swift
# libssl-dev/libzip-dev/libsqlite3-dev/pkg-config: build; openssl/unzip/sqlite3: tests check with the real tools;
# nginx, caddy: the deployment tests run deploy/nginx-passforge.conf and deploy/Caddyfile; wrk: the serve benchmark's load generator.
# nodejs: the CDN fronts' tests (deploy/cdn/tests, node --test; node 18 or later).
# libzint-dev: barcodes (preview images, encodability checks); libxml2-dev: a field's attributedValue (HTML);
# chromium, chromium-driver, python3-venv: the browser
# and fuzz tests (Python tools from scripts/test-requirements.txt go into a venv made by scripts/test-venv.sh).
APT_PACKAGES := libssl-dev libzip-dev libsqlite3-dev pkg-config openssl unzip sqlite3 nginx openssh-server rsync caddy zlib1g-dev \
	libzint-dev libxml2-dev chromium chromium-driver python3-venv fonts-dejavu-core cmark-gfm nodejs
BENCH_PACKAGES := wrk
# nftables: `make faults` cuts the path to PostgreSQL with a rule (as root).
FAULT_PACKAGES := nftables
# What `make dist` needs to build passforge (a CI runner on a cache miss installs only these).
BUILD_PACKAGES := libssl-dev libzip-dev libsqlite3-dev pkg-config zlib1g-dev libzint-dev libxml2-dev
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: deps install-packages build run test bench faults fuzz dist dist-check image-check clean

deps:
	@$(MAKE) --no-print-directory install-packages PACKAGES="$(APT_PACKAGES)"

# Installs what is missing; a package's service (nginx) is not started: tests start their own.
install-packages:
	@missing=""; for p in $(PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing system packages:$$missing"; \
	  $(SUDO) apt-get update -qq && $(SUDO) env RUNLEVEL=1 DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi

build: deps
	$(SWIFT) build

# Builds the example content (development signing unless a certificate is configured),
# then serves it on 127.0.0.1:8080 with the embedded SQLite registration store.
run: build
	.build/debug/passforge build --development-signing
	.build/debug/passforge serve --host 127.0.0.1 --port 8080

# First the style (swift format lint with .swift-format, about 5 s) and the architecture checks, then the tests.
# The store, server and push tests run against SQLite and a throwaway PostgreSQL
# server (initdb into a temporary folder; stopped and deleted however the tests end);
# publish s3:// against a throwaway SeaweedFS (scripts/with-seaweedfs.sh, the same way);
# the failover test against a throwaway primary and its synchronous standby (scripts/with-postgres-replicas.sh).
test: deps
	$(SWIFT) format lint --strict --parallel --recursive Sources Tests Benchmarks Package.swift
	scripts/check-architecture.py
	SWIFT="$(SWIFT)" scripts/with-postgres.sh scripts/with-seaweedfs.sh scripts/with-postgres-replicas.sh scripts/run-tests.sh

# PostgreSQL faults (about two and a half minutes, as root): the failover, a 30 s partition between
# serve and PostgreSQL made with nftables, 30 s of 5 % packet loss, and 300 ms of delay each way through a
# proxy (about 50 s); then 300 SIGKILLs of publish to a folder (about 75 s).
# Not in `make test`: the partition alone takes 30 s.
faults: deps
	@$(MAKE) --no-print-directory install-packages PACKAGES="$(FAULT_PACKAGES)"
	$(SWIFT) build --build-tests
	PASSFORGE_TEST_FAULTS=1 PASSFORGE_TEST_PARTITION=1 scripts/with-postgres.sh scripts/with-postgres-replicas.sh \
	  $(SWIFT) test --skip-build --filter 'PostgresFaultTests|PostgresDelayTests'
	PASSFORGE_PUBLISH_KILL_ROUNDS=30 $(SWIFT) test --skip-build --filter 'PublishKillLoopTests'

# Benchmarks: release build, one run each, figures compared with the targets and the machine's limits.
bench: deps
	@$(MAKE) --no-print-directory install-packages PACKAGES="$(BENCH_PACKAGES)"
	$(SWIFT) build -c release --product passforge
	$(SWIFT) build -c release --product push-benchmark
	$(SWIFT) build -c release --product claim-benchmark
	$(SWIFT) build -c release --product mock-apns
	scripts/bench-build.py
	scripts/with-postgres.sh sh -c 'scripts/bench-serve.py --postgres "$$PASSFORGE_TEST_POSTGRES_URL"'
	.build/release/push-benchmark
	scripts/with-postgres.sh sh -c '.build/release/claim-benchmark --postgres "$$PASSFORGE_TEST_POSTGRES_URL"'
	scripts/with-postgres.sh sh -c 'scripts/bench-scale.py --devices 100000 --passes 10000 --postgres "$$PASSFORGE_TEST_POSTGRES_URL"'
	scripts/with-postgres.sh sh -c '"$$(scripts/test-venv.sh)" scripts/soak.py --minutes 10 --postgres "$$PASSFORGE_TEST_POSTGRES_URL"'

# A long Schemathesis run (openapi.yaml, every check, stateful sequences) against `passforge serve`
# on the example project, SQLite and PostgreSQL; `make test` runs a short seeded one (FuzzAPITests).
FUZZ_EXAMPLES ?= 300
FUZZ_SECONDS ?= 600
fuzz: deps
	$(SWIFT) build --product passforge
	scripts/with-postgres.sh sh -c '"$$(scripts/test-venv.sh)" scripts/fuzz-api.py --postgres "$$PASSFORGE_TEST_POSTGRES_URL" \
	  --examples $(FUZZ_EXAMPLES) --max-time $(FUZZ_SECONDS) --seed $${FUZZ_SEED:-1}'

# The release archive: dist/passforge-<version>-linux-<arch>.tar.gz, a binary built with the
# Swift runtime and Foundation linked in (no toolchain needed to run it), INSTALL, deploy/.
# It builds in .build-dist (PASSFORGE_DIST_SCRATCH=.build to share .build), apart from the
# debug build, so each keeps its incremental state. About 10 minutes on 2 cores from scratch.
dist:
	@$(MAKE) --no-print-directory install-packages PACKAGES="$(BUILD_PACKAGES)"
	SWIFT="$(SWIFT)" scripts/dist.sh

# The archive on a Swift-less PATH and environment: --version, init, build, inspect, ldd,
# INSTALL, systemd-analyze verify. Not part of `make test` (the release build is too slow for CI).
dist-check: dist
	scripts/test-dist.sh

# The container image from that archive (docker, else podman): init and build in it, then
# `serve` answers /health with 200 and the HEALTHCHECK passes. Needs debian:bookworm-slim.
image-check: dist
	scripts/test-image.sh

clean:
	rm -rf .build .build-dist dist output/v1 output/download output/.passforge
