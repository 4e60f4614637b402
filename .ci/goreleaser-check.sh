#!/bin/sh
# Validates goreleaser.yaml with a pinned goreleaser built by our own Go toolchain
# (v2.15.1 is the newest release that builds with Go 1.26; newer ones need a newer Go).
# With --build it also makes a snapshot build for this machine and prints its version,
# which proves the ldflags reach `infrarust version`.
#
# The first run downloads and compiles goreleaser (about 4 minutes on a cold module
# cache); later runs take about a second.
set -eu

cd "$(dirname "$0")/.."
GORELEASER_VERSION=v2.15.1

bin="${GORELEASER_BIN:-}"
if [ -z "$bin" ]; then
    gobin="$(go env GOPATH)/bin/goreleaser-$GORELEASER_VERSION"
    mkdir -p "$gobin"
    # go install ignores the main module's go.mod, so GOFLAGS=-mod=mod must not leak in.
    if ! env -u GOFLAGS GOBIN="$gobin" go install "github.com/goreleaser/goreleaser/v2@$GORELEASER_VERSION"; then
        # A module download that fails says nothing about goreleaser.yaml; CI may
        # choose to carry on (GORELEASER_INSTALL_OPTIONAL=1), a person running this may not.
        if [ "${GORELEASER_INSTALL_OPTIONAL:-0}" = 1 ]; then
            echo "goreleaser-check: could not build goreleaser $GORELEASER_VERSION (see above); config NOT checked" >&2
            exit 0
        fi
        exit 1
    fi
    bin="$gobin/goreleaser"
fi

"$bin" check

if [ "${1:-}" = "--build" ]; then
    "$bin" build --snapshot --single-target --clean
    out=$(find dist -type f -name 'infrarust*' -perm -u+x | head -n 1)
    "$out" version
fi
