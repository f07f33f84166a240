#!/bin/sh
# `make dist-check`: the archive `make dist` wrote works on a machine without Swift.
#
#   scripts/test-dist.sh [dist/passforge-<version>-linux-<arch>.tar.gz]
#
# Unpacks the archive into an empty folder and, with an environment holding no Swift
# toolchain (env -i, PATH=/usr/bin:/bin), runs `passforge --version`, `init`,
# `build --development-signing` and `inspect`. Checks that `ldd` lists no Swift runtime and
# no Foundation library, that INSTALL names every library `ldd` lists, and that
# deploy/passforge.service passes `systemd-analyze verify` (when systemd-analyze is here), and
# that `sha256sum -c` passes on the SHA256SUMS beside the archive.
# The Dockerfile installs the archive's debian-packages and runs its bin/passforge, so this
# also checks what the image is made of. Not part of `make test`: a release build with the
# static Swift runtime takes over 10 minutes on 2 cores (see README, Install).
set -eu

archive=${1:-}
[ -z "$archive" ] || archive=$(readlink -f "$archive")   # a path given from anywhere
cd "$(dirname "$0")/.."
[ -n "$archive" ] || archive=$(ls -t dist/passforge-*-linux-"$(uname -m)".tar.gz 2>/dev/null | head -n1)
if [ -z "$archive" ] || [ ! -f "$archive" ]; then echo "test-dist: no archive${1:+ $1}; run make dist first" >&2; exit 1; fi
archive=$(readlink -f "$archive")

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
check() { # check <description> <command...>: runs the command, reports
    description=$1; shift
    if "$@" > "$work/out" 2>&1; then
        echo "ok    $description"
    else
        echo "FAIL  $description"; sed 's/^/      /' "$work/out" | tail -n 20
        failures=$((failures + 1))
    fi
}

mkdir "$work/unpacked" "$work/home"
tar -xzf "$archive" -C "$work/unpacked"
name=$(basename "$archive" .tar.gz)
root="$work/unpacked/$name"
binary="$root/bin/passforge"
version=$(echo "$name" | sed -E 's/^passforge-(.*)-linux-[^-]+$/\1/')

# No Swift toolchain and no inherited environment: only the system's /usr/bin and /bin.
bare() { env -i PATH=/usr/bin:/bin HOME="$work/home" LANG=C.UTF-8 "$@"; }

check "the archive holds one folder, $name" test "$(ls "$work/unpacked")" = "$name"
# make dist writes SHA256SUMS beside the archive: it lists this archive, and every sum in it holds.
check "SHA256SUMS lists $name.tar.gz and sha256sum -c passes" sh -c "
    cd '$(dirname "$archive")' && grep -qx '[0-9a-f]\{64\}  $name.tar.gz' SHA256SUMS && sha256sum -c --strict SHA256SUMS"
check "no swift on the test PATH" sh -c '! env -i PATH=/usr/bin:/bin sh -c "command -v swift swiftc"'
check "ldd lists no libswift* and no libFoundation*" sh -c "! ldd '$binary' | grep -E 'libswift|libFoundation|lib_Foundation|libdispatch|libBlocksRuntime'"
check "ldd finds every library outside any toolchain" sh -c "! ldd '$binary' | grep -E 'not found|/opt/|swift'"
check "INSTALL names every library ldd lists" sh -c "
    for library in \$(ldd '$binary' | awk '\$2 == \"=>\" { print \$1 }'); do
        grep -q \"^  \$library \" '$root/INSTALL' || { echo \"INSTALL lacks \$library\"; exit 1; }
    done"
check "debian-packages lists the packages" test -s "$root/debian-packages"
check "deploy configs and CI examples are in" test -f "$root/deploy/passforge.service" -a -f "$root/deploy/ci/github-actions.yml" -a -f "$root/deploy/ci/github-actions-pull-request.yml" -a -f "$root/README.md"

check "passforge --version prints $version and the commit" sh -c "
    line=\$(env -i PATH=/usr/bin:/bin HOME='$work/home' '$binary' --version); echo \"\$line\"
    echo \"\$line\" | grep -Eq '^$version \\(commit [0-9A-Za-z._-]+\\)\$'"

cd "$work"
check "passforge init" bare "$binary" init project
mkdir -p "$work/project" && cd "$work/project"   # (made by init; here so a failed init fails only the checks below)
check "passforge build --development-signing" bare "$binary" build --development-signing
pass=$(find output/v1/passes -type f 2>/dev/null | sort | head -n1)
check "the build wrote a pass" test -n "$pass"
check "passforge inspect $pass: signature verifies, chain trusted, no defects" sh -c "
    env -i PATH=/usr/bin:/bin HOME='$work/home' '$binary' inspect '${pass:-missing}' --trusted-root .passforge/dev-pki/root-certificate.pem > '$work/inspect' 2>&1
    status=\$?; cat '$work/inspect'; [ \$status = 0 ] &&
    grep -q '^signature: verifies over manifest.json' '$work/inspect' && grep -q '^  chain: trusted' '$work/inspect' && grep -q '^ok: no defects' '$work/inspect'"

# The unit as shipped, with ExecStart pointing at the unpacked binary (verify wants it to exist).
if command -v systemd-analyze >/dev/null; then
    mkdir "$work/unit"
    sed "s|/usr/local/bin/passforge|$binary|" "$root/deploy/passforge.service" > "$work/unit/passforge.service"
    # verify exits 0 on some warnings: any output is a failure too.
    check "systemd-analyze verify deploy/passforge.service" sh -c "
        said=\$(systemd-analyze verify '$work/unit/passforge.service' 2>&1); status=\$?
        echo \"\$said\"; [ \$status = 0 ] && [ -z \"\$said\" ]"
else
    echo "skip  systemd-analyze verify (systemd-analyze is not installed)"
fi

if [ "$failures" -gt 0 ]; then
    echo "test-dist: $failures check(s) failed for $archive" >&2
    exit 1
fi
echo "test-dist: $archive works without a Swift toolchain"
