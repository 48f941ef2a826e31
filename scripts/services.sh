#!/usr/bin/env bash
# Start the local PostgreSQL, Redis and RabbitMQ servers the test suite talks to.
#
# A server whose port already answers is left alone; a stopped one is started with the
# machine's own command, then every port gets up to WAIT_SECONDS to open. Any server that
# does not come up fails the script (and so `make test`): tests never skip a missing server.
set -euo pipefail

WAIT_SECONDS="${WAIT_SECONDS:-30}"
HOST=127.0.0.1

# Probe with bash's /dev/tcp (no nc or ss needed); `timeout` bounds a filtered port.
port_open() {
    timeout 2 bash -c "exec 3<>/dev/tcp/$HOST/$1" 2>/dev/null
}

start_postgres() {
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql)" main start
}

start_redis() {
    mkdir -p /var/lib/redis /var/log/redis
    redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
        --dir /var/lib/redis --logfile /var/log/redis/ci.log
}

start_rabbitmq() {
    rabbitmq-server -detached
}

# name port start-function
SERVICES=(
    "PostgreSQL 5432 start_postgres"
    "Redis 6379 start_redis"
    "RabbitMQ 5672 start_rabbitmq"
)

failed=0
started=()
for entry in "${SERVICES[@]}"; do
    read -r name port starter <<<"$entry"
    if port_open "$port"; then
        echo "services: $name is up on $HOST:$port"
        continue
    fi
    echo "services: $name is down on $HOST:$port; starting it"
    if ! "$starter"; then
        echo "services: ERROR: the command that starts $name failed" >&2
        failed=1
        continue
    fi
    started+=("$name $port")
done

for entry in "${started[@]+"${started[@]}"}"; do
    read -r name port <<<"$entry"
    deadline=$((SECONDS + WAIT_SECONDS))
    until port_open "$port"; do
        if ((SECONDS >= deadline)); then
            echo "services: ERROR: $name did not open $HOST:$port within ${WAIT_SECONDS}s" >&2
            failed=1
            break
        fi
        sleep 0.5
    done
    if port_open "$port"; then
        echo "services: $name is up on $HOST:$port"
    fi
done

if ((failed)); then
    echo "services: ERROR: a server the tests need is not running; tests would fail, not skip" >&2
    exit 1
fi
