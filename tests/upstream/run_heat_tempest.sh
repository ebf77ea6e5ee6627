#!/usr/bin/env bash
# Upstream's heat-tempest-plugin functional tests (unchanged, from PyPI) against a live
# stackling on a loopback port (SQLite). Not part of `make test`.
#
#   tests/upstream/run_heat_tempest.sh [test-id-prefix ...]
#
# Default: the server network, port and subnet update tests (issue 20 part 1: 19 tests
# that need no guest). The plugin lives in its own venv ($TEMPEST_VENV, default
# /tmp/tempest-venv), never in the project's.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
VENV=${TEMPEST_VENV:-/tmp/tempest-venv}
PORT=${PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
WORK=$(mktemp -d /tmp/heat-tempest.XXXXXX)
TESTS=("$@")
if [ ${#TESTS[@]} -eq 0 ]; then
  TESTS=(heat_tempest_plugin.tests.functional.test_nova_server_networks
         heat_tempest_plugin.tests.functional.test_create_update_neutron_port
         heat_tempest_plugin.tests.functional.test_create_update_neutron_subnet)
fi

if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import heat_tempest_plugin' 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q heat-tempest-plugin
fi

export STACKLING_ADMIN_PASSWORD=admin-secret STACKLING_DEMO_PASSWORD=demo-secret
export STACKLING_IDENTITY__PASSWORD_HASH_ROUNDS=4
"$ROOT/.venv/bin/stackling" serve --data-dir "$WORK/data" --port "$PORT" --quiet \
  > "$WORK/server.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null; wait $SERVER 2>/dev/null; rm -rf "$WORK"' EXIT
for _ in $(seq 1 120); do
  curl -sf "http://127.0.0.1:$PORT/identity/v3" > /dev/null && break
  sleep 0.5
done

# The minimal tempest.conf: the services the tests require, and heat_plugin's
# credentials, flavor and image (stackling's bootstrap makes demo, m1.tiny and cirros).
cat > "$WORK/tempest.conf" <<CONF
[service_available]
heat = True
nova = True
neutron = True
glance = True
cinder = False
swift = False

[heat_plugin]
auth_url = http://127.0.0.1:$PORT/identity/v3
username = demo
password = demo-secret
project_name = demo
admin_username = admin
admin_password = admin-secret
admin_project_name = admin
user_domain_name = Default
project_domain_name = Default
region = RegionOne
instance_type = m1.tiny
minimal_instance_type = m1.tiny
image_ref = cirros
minimal_image_ref = cirros
build_interval = 1
build_timeout = 120
CONF
export TEMPEST_CONFIG_DIR="$WORK" TEMPEST_CONFIG=tempest.conf
cd "$WORK"
set +e
"$VENV/bin/python" -m testtools.run "${TESTS[@]}" 2>&1 | tee "$WORK/result.txt"
status=${PIPESTATUS[0]}
grep -E "^(Ran|OK|FAILED)" "$WORK/result.txt"
[ -n "${KEEP_LOG:-}" ] && cp "$WORK/server.log" "$KEEP_LOG"
exit "$status"
