# passforge — the two commands of the README: `make run` and `make test`.
# Each installs the system packages it lacks first, so a fresh machine works.

SWIFT ?= swift
# libssl-dev/libzip-dev/libsqlite3-dev/pkg-config: build; openssl/unzip/sqlite3: tests check with the real tools.
APT_PACKAGES := libssl-dev libzip-dev libsqlite3-dev pkg-config openssl unzip sqlite3
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: deps build run test bench-build clean

deps:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing system packages:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

build: deps
	$(SWIFT) build

# Builds the example content (development signing unless a certificate is configured),
# then serves it on 127.0.0.1:8080 with the embedded SQLite registration store.
run: build
	.build/debug/passforge build --development-signing
	.build/debug/passforge serve --host 127.0.0.1 --port 8080

test: deps
	$(SWIFT) test

# Benchmarks: release build, one run, figures compared with the machine's signing floor.
bench: deps
	$(SWIFT) build -c release --product passforge
	scripts/bench-build.sh

clean:
	rm -rf .build output/v1 output/download output/.passforge
