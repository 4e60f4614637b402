#!/bin/sh
# Runs after the deb/rpm package is removed. The infrarust user, /etc/infrarust and
# /var/lib/infrarust (bans, drains, admin key) are kept on purpose.
set -e
if [ -d /run/systemd/system ]; then
    systemctl daemon-reload >/dev/null 2>&1 || true
fi
exit 0
