#!/bin/sh
# Runs the image's layout without Docker: the static binary (CGO off, as the
# Dockerfile builds it) as uid/gid 65532 with no supplementary groups, its config
# from deploy/docker/infrarust.toml, a data dir only that user may write, the
# paths moved by the image's own environment variables (no chroot), then the
# HEALTHCHECK command as the same user. Needs root (setpriv) and Go.
#
#   sudo sh deploy/docker/smoke.sh
set -eu
cd "$(dirname "$0")/../.."
root=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$root"' EXIT INT TERM

CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o "$root/infrarust" ./cmd/infrarust
if command -v file >/dev/null; then file "$root/infrarust" | grep -q 'statically linked' || { echo "smoke: the binary is not static"; exit 1; }; fi
mkdir -p "$root/etc/infrarust/servers" "$root/data"
cp deploy/docker/infrarust.toml "$root/etc/infrarust/infrarust.toml"
chown 65532:65532 "$root/data"
chmod 0700 "$root/data"
chmod 0755 "$root" "$root/infrarust"

as_user() {
    env -i PATH=/usr/bin:/bin \
        INFRARUST_CONFIG="$root/etc/infrarust/infrarust.toml" \
        INFRARUST_SERVERS_DIR="$root/etc/infrarust/servers" \
        INFRARUST_DATA_DIR="$root/data" \
        INFRARUST_BIND=127.0.0.1:25999 INFRARUST_ADMIN_BIND=127.0.0.1:28999 \
        setpriv --reuid=65532 --regid=65532 --clear-groups "$@"
}

as_user "$root/infrarust" health --timeout 1s >/dev/null 2>&1 && { echo "smoke: healthy before serve started"; exit 1; }
# In the background subshell, exec makes $! the server's own pid.
(exec env -i PATH=/usr/bin:/bin \
    INFRARUST_CONFIG="$root/etc/infrarust/infrarust.toml" \
    INFRARUST_SERVERS_DIR="$root/etc/infrarust/servers" \
    INFRARUST_DATA_DIR="$root/data" \
    INFRARUST_BIND=127.0.0.1:25999 INFRARUST_ADMIN_BIND=127.0.0.1:28999 \
    setpriv --reuid=65532 --regid=65532 --clear-groups "$root/infrarust" serve --log-format json) >"$root/serve.log" 2>&1 &
pid=$!
i=0
until as_user "$root/infrarust" health --timeout 1s >/dev/null 2>&1; do
    i=$((i + 1))
    if [ "$i" -gt 50 ] || ! kill -0 "$pid" 2>/dev/null; then cat "$root/serve.log"; echo "smoke: never healthy"; exit 1; fi
    sleep 0.2
done
as_user "$root/infrarust" health
uid=$(awk '/^Uid:/ {print $2}' "/proc/$pid/status")
[ "$uid" = 65532 ] || { echo "smoke: serve runs as uid $uid"; exit 1; }
[ "$(stat -c %u "$root/data/admin.key")" = 65532 ] || { echo "smoke: admin.key not written by 65532"; exit 1; }
kill -TERM "$pid"
wait "$pid" || true
echo "smoke: ok (static binary, uid 65532, data dir written, HEALTHCHECK command passes)"
