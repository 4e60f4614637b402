#!/bin/sh
# Fails when the committed generated files (completions/, man/, docs/cli.md,
# packaging/infrarust.toml) differ from what the current command tree generates,
# or when a man page does not render cleanly with groff (when groff is installed).
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

# The committed man pages must render without a groff warning (what `man` shows).
if command -v groff >/dev/null 2>&1; then
    for page in man/*.1; do
        if ! out=$(groff -k -man -Tutf8 -ww -z "$page" 2>&1) || [ -n "$out" ]; then
            echo "check-generated: $page does not render cleanly:" >&2
            echo "$out" >&2
            stale=1
        fi
    done
else
    echo "check-generated: groff is not installed; man pages were not test-rendered (apt-get install groff-base)" >&2
fi

if [ "$stale" -ne 0 ]; then
    echo >&2
    echo "check-generated: generated files do not match the command tree." >&2
    echo "Run 'go generate ./cmd/infrarust' and commit completions/, man/, docs/cli.md and packaging/infrarust.toml." >&2
    exit 1
fi
echo "check-generated: completions/, man/, docs/cli.md and packaging/infrarust.toml are up to date"
