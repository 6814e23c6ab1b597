#!/bin/sh
# The container's entrypoint: reap-server on /etc/reap/reap.ini, with the admin endpoint on
# 0.0.0.0 only when an admin token protects it (REAP_ADMIN_TOKEN or REAP_ADMIN_TOKEN_FILE);
# otherwise it stays on the container's loopback, where the HEALTHCHECK still reaches it.
# Extra arguments go to reap-server (e.g. --worlds 4, --log-format json).
set -eu
if [ -n "${REAP_ADMIN_TOKEN:-}" ] || [ -n "${REAP_ADMIN_TOKEN_FILE:-}" ]; then
    exec /usr/local/bin/reap-server --config /etc/reap/reap.ini --admin-bind 0.0.0.0 "$@"
fi
echo "reap-entrypoint: no admin token given: the admin endpoint stays on 127.0.0.1" >&2
exec /usr/local/bin/reap-server --config /etc/reap/reap.ini "$@"
