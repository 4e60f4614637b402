#!/bin/sh
# Runs before the deb/rpm package is removed. On upgrade, the service keeps running
# (postinstall restarts it); on removal it is stopped and disabled.
set -e

upgrade=false
case "$1" in
    upgrade|1) upgrade=true ;;   # deb passes "upgrade", rpm passes the remaining count (1)
esac

if [ "$upgrade" = false ] && [ -d /run/systemd/system ]; then
    systemctl stop infrarust >/dev/null 2>&1 || true
    systemctl disable infrarust >/dev/null 2>&1 || true
fi
exit 0
