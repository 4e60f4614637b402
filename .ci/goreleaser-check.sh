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
    env -u GOFLAGS GOBIN="$gobin" go install "github.com/goreleaser/goreleaser/v2@$GORELEASER_VERSION"
    bin="$gobin/goreleaser"
fi

"$bin" check

if [ "${1:-}" = "--build" ]; then
    "$bin" build --snapshot --single-target --clean
    out=$(find dist -type f -name 'infrarust*' -perm -u+x | head -n 1)
    "$out" version
fi
