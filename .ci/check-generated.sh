#!/bin/sh
# Fails when the committed generated files (completions/, man/, docs/cli.md,
# packaging/infrarust.toml) differ from what the current command tree generates.
# Fix a failure with:  go generate ./cmd/infrarust  (then commit the result).
set -eu

cd "$(dirname "$0")/.."
export GOFLAGS="${GOFLAGS:--mod=mod}"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

if ! go run ./cmd/infrarust gen-docs "$tmp" >"$tmp/gen.log" 2>&1; then
    cat "$tmp/gen.log" >&2
    echo "check-generated: the generator failed (is the hidden 'gen-docs' command registered in cmd/infrarust/commands.go?)" >&2
    exit 1
fi

stale=0
for path in completions man docs/cli.md packaging/infrarust.toml; do
    if [ ! -e "$path" ]; then
        echo "check-generated: $path is missing" >&2
        stale=1
        continue
    fi
    if ! diff -ru "$path" "$tmp/$path" >"$tmp/diff" 2>&1; then
        echo "check-generated: $path is stale:" >&2
        head -n 80 "$tmp/diff" >&2
        stale=1
    fi
done

if [ "$stale" -ne 0 ]; then
    echo >&2
    echo "check-generated: generated files do not match the command tree." >&2
    echo "Run 'go generate ./cmd/infrarust' and commit completions/, man/, docs/cli.md and packaging/infrarust.toml." >&2
    exit 1
fi
echo "check-generated: completions/, man/, docs/cli.md and packaging/infrarust.toml are up to date"
