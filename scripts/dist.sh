#!/bin/sh
# `make dist`: dist/passforge-<version>-linux-<arch>.tar.gz, a release binary that needs no
# Swift toolchain, with the deploy configs, the CI examples and an INSTALL file listing the
# shared libraries the binary still needs (read off `ldd`, mapped to Debian packages with
# `dpkg -S`); and dist/SHA256SUMS, the checksums of the archives in dist/.
#
#   scripts/dist.sh                 build (release, --static-swift-stdlib) and pack
#   PASSFORGE_DIST_SCRATCH=.build scripts/dist.sh
#                                   build in another SwiftPM folder (default .build-dist, so a
#                                   release build never disturbs the debug build in .build)
#   PASSFORGE_BUILD_COMMIT=abc123   the commit to show in --version when the source is no git clone
#
# The commit goes in as one small object linked into the binary, whose passforge_build_commit()
# overrides the weak one of Sources/CSystemCalls: no tracked file is rewritten, a new commit
# only relinks, and a plain `swift build` says "unknown commit".
set -eu

cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
scratch=${PASSFORGE_DIST_SCRATCH:-.build-dist}

fail() { echo "dist: $*" >&2; exit 1; }

# The commit, with -dirty when tracked files differ from it (untracked files don't count).
commit=${PASSFORGE_BUILD_COMMIT:-}
if [ -z "$commit" ] && git rev-parse --git-dir >/dev/null 2>&1; then
    commit=$(git rev-parse --short=12 HEAD)
    [ -z "$(git status --porcelain --untracked-files=no)" ] || commit="$commit-dirty"
fi
case "$commit" in
    *[!0-9A-Za-z._-]*) fail "PASSFORGE_BUILD_COMMIT may hold only letters, digits, '.', '_' and '-': $commit" ;;
esac

# The object's name holds the commit: the link step's command line changes with it, so
# SwiftPM relinks (it does not watch the object's bytes).
rm -rf "$scratch/build-commit" && mkdir -p "$scratch/build-commit"
commit_object=$(cd "$scratch/build-commit" && pwd)/passforge-build-commit-${commit:-none}.o
cc=${CC:-$(command -v clang || command -v cc)}
printf 'const char *passforge_build_commit(void) { return "%s"; }\n' "$commit" \
    | "$cc" -x c -fPIC -O2 -c -o "$commit_object" -

# Foundation (FoundationEssentials, FoundationInternationalization, _FoundationICU) is linked
# statically by --static-swift-stdlib on Linux too; the ldd check below makes sure of it.
"$SWIFT" build -c release --static-swift-stdlib --product passforge --scratch-path "$scratch" \
    -Xlinker "$commit_object"
binary="$scratch/release/passforge"

# The version and the arch name the archive; the version is read back from the binary, so it
# lives in one place (Sources/passforge/Passforge.swift).
version=$("$binary" --version | cut -d' ' -f1)
[ -n "$version" ] || fail "$binary --version printed no version"
arch=$(uname -m)
name="passforge-$version-linux-$arch"

libraries=$(ldd "$binary")
if echo "$libraries" | grep -E 'libswift|libFoundation|lib_Foundation|libdispatch|libBlocksRuntime'; then
    fail "$binary still links the Swift runtime or Foundation dynamically (above); it must be built with --static-swift-stdlib"
fi
if echo "$libraries" | grep 'not found'; then
    fail "$binary needs libraries this machine lacks (above)"
fi

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root="$stage/$name"
mkdir -p "$root/bin" "$root/deploy/ci" "$root/deploy/cdn"
# Debug sections off (about half the size); function names stay for the runtime's backtraces.
strip --strip-debug -o "$root/bin/passforge" "$binary"
cp README.md "$root/"
cp deploy/passforge.service deploy/nginx-passforge.conf deploy/Caddyfile "$root/deploy/"
cp deploy/ci/*.yml deploy/ci/README.md "$root/deploy/ci/"
cp deploy/cdn/README.md deploy/cdn/nginx-cdn.conf deploy/cdn/cloudfront-function.js deploy/cdn/cloudflare-worker.js \
    deploy/cdn/wrangler.toml "$root/deploy/cdn/"
cp Dockerfile "$root/"

# The libraries the binary loads (ldd: "name => /path (address)", and the loader as "/path (address)"),
# each with the Debian package that holds it. dpkg knows a file by the path its package installed,
# which on a merged-/usr system may be /lib/... or /usr/lib/...: try both and the resolved path.
package_of() {
    for candidate in "$1" "$(readlink -f "$1")" "/usr$1" "${1#/usr}"; do
        owner=$(dpkg -S "$candidate" 2>/dev/null | head -n1 | cut -d: -f1)
        if [ -n "$owner" ]; then echo "$owner"; return 0; fi
    done
    return 0
}
echo "$libraries" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 } $1 ~ /^\// { n = split($1, p, "/"); print p[n], $1 }' \
    | sort -u > "$stage/libraries"
: > "$root/debian-packages"
while read -r soname path; do
    package=""
    command -v dpkg >/dev/null && package=$(package_of "$path")
    printf '  %-28s %s\n' "$soname" "${package:-(no Debian package found)}" >> "$stage/library-lines"
    [ -z "$package" ] || echo "$package" >> "$root/debian-packages"
done < "$stage/libraries"
sort -u -o "$root/debian-packages" "$root/debian-packages"

system=$(sed -n 's/^PRETTY_NAME="\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' /etc/os-release 2>/dev/null)
cat > "$root/INSTALL" <<EOF
passforge $version (commit ${commit:-unknown}) for Linux $arch, built on ${system:-this machine}.

The binary holds the Swift runtime and Foundation; it needs no Swift toolchain. It still
needs these shared libraries (from \`ldd bin/passforge\`, with the Debian package of each,
from \`dpkg -S\`; the package names are also in the file debian-packages):

$(cat "$stage/library-lines")

Install on Debian 12 (and the Debian or Ubuntu releases with the same library versions):

  sudo apt-get install --no-install-recommends $(paste -sd' ' "$root/debian-packages")
  sudo install -m 755 bin/passforge /usr/local/bin/passforge
  passforge --version

On another release a package name can differ (Ubuntu 24.04 has libssl3t64 and
libzip4t64); \`ldd bin/passforge | grep "not found"\` names a missing library, and
installing the -dev packages (libssl-dev libzip-dev libsqlite3-dev libzint-dev libxml2-dev zlib1g-dev)
always pulls in the right ones. A library whose soname differs on that release (libzint's
carries its minor version) needs a build from source there: \`make dist\` in a clone of
passforge.

Also here: README.md (the guide), deploy/passforge.service (systemd unit for
\`passforge serve\`), deploy/nginx-passforge.conf and deploy/Caddyfile (static hosts),
deploy/ci/ (CI workflows that download this archive), deploy/cdn/ (a bucket behind nginx,
CloudFront or Cloudflare), Dockerfile (the container image).
EOF

mkdir -p dist
# Reproducible packing: names sorted, owner root, every file dated at the commit.
mtime=$(git log -1 --format=%ct 2>/dev/null || date +%s)
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$mtime" -C "$stage" -cf - "$name" \
    | gzip -9n > "dist/$name.tar.gz.partial"
mv "dist/$name.tar.gz.partial" "dist/$name.tar.gz"

# SHA256SUMS beside the archives, for `sha256sum -c SHA256SUMS` after a download: every archive in
# dist/ (one per arch when several were copied in), bare names, written whole (temporary, then rename).
(cd dist && sha256sum -- passforge-*-linux-*.tar.gz > SHA256SUMS.partial && mv SHA256SUMS.partial SHA256SUMS)
echo "dist/$name.tar.gz"
echo "dist/SHA256SUMS"
