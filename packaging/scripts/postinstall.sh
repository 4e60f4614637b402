#!/bin/sh
# Runs after the deb/rpm package is installed or upgraded.
set -e

if ! getent group infrarust >/dev/null 2>&1; then
    groupadd --system infrarust
fi
if ! getent passwd infrarust >/dev/null 2>&1; then
    useradd --system --gid infrarust --home-dir /var/lib/infrarust --no-create-home \
        --shell /usr/sbin/nologin --comment "Infrarust Minecraft proxy" infrarust
fi

# The config may hold an API key: readable by the service's group, not by everyone.
chgrp infrarust /etc/infrarust /etc/infrarust/infrarust.toml /etc/infrarust/servers 2>/dev/null || true
chmod 0640 /etc/infrarust/infrarust.toml 2>/dev/null || true

if [ -d /run/systemd/system ]; then
    systemctl daemon-reload >/dev/null 2>&1 || true
    # Restart on upgrade only if it was running; a fresh install is not started until
    # the operator has edited /etc/infrarust and run `systemctl enable --now infrarust`.
    if systemctl is-active --quiet infrarust; then
        systemctl try-restart infrarust >/dev/null 2>&1 || true
    fi
fi
exit 0
