#!/usr/bin/env bash
# Start command of the perf-kit budget candidates (bench/perf-kit-budgets.ts): does the variant's setup, then
# execs `node dist/main.js` — the same process a user starts, with the pid the kit is watching, so the kit's CPU
# figure counts the gateway's tree only. Usage (by the kit): bench/perf-kit-start.sh pg-redis|tracing
#
#   pg-redis  creates a PostgreSQL database of its own (omnigate_perfkit_<port>_<pid>) on PERF_KIT_POSTGRES_URL
#             (default postgres://postgres@127.0.0.1:5432/postgres), sets OMNIGATE_DATABASE_URL to it and
#             OMNIGATE_REDIS_URL to PERF_KIT_REDIS_URL (default redis://127.0.0.1:6379/13: a database index of its
#             own); a detached watcher drops the database when the gateway is gone.
#   redis     only sets OMNIGATE_REDIS_URL as above (the limit counters in Redis; the store stays SQLite).
#   tracing   starts a loopback OTLP/HTTP collector (bench/perf-kit-aux.mjs otlp-sink, answers 200 and counts
#             spans into PERF_KIT_WORK_DIR/otlp-sink.log) and sets OTEL_EXPORTER_OTLP_ENDPOINT to it.
#
# The watcher and the collector are double-forked into their own session (out of the gateway's process tree and
# process group: the kit counts and stops neither) and pinned to the driver CPU (PERF_KIT_DRIVER_CPU, default 1);
# each exits by itself once the gateway's pid is gone.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
aux="$here/perf-kit-aux.mjs"
work="${PERF_KIT_WORK_DIR:?must be set to the WORK_DIR of the kit}"
driver_cpu="${PERF_KIT_DRIVER_CPU:-1}"
self=$$ # the pid exec keeps: the gateway's

detach() { # detach LOG CMD...: out of this tree and session, on the driver CPU
  local log=$1
  shift
  (setsid taskset -c "$driver_cpu" "$@" </dev/null >>"$log" 2>&1 &)
}

case "${1:-}" in
  pg-redis)
    admin_url="${PERF_KIT_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
    db="omnigate_perfkit_${PORT:-0}_${self}"
    OMNIGATE_DATABASE_URL="$(node "$aux" create-db "$admin_url" "$db")"
    export OMNIGATE_DATABASE_URL
    export OMNIGATE_REDIS_URL="${PERF_KIT_REDIS_URL:-redis://127.0.0.1:6379/13}"
    detach "$work/postgres.log" node "$aux" drop-db-after "$self" "$admin_url" "$db"
    echo "perf-kit-start: database $db, redis $OMNIGATE_REDIS_URL" >&2
    ;;
  redis)
    export OMNIGATE_REDIS_URL="${PERF_KIT_REDIS_URL:-redis://127.0.0.1:6379/13}"
    echo "perf-kit-start: redis $OMNIGATE_REDIS_URL" >&2
    ;;
  tracing)
    port_file="$work/otlp-sink.port"
    rm -f "$port_file"
    detach "$work/otlp-sink.log" node "$aux" otlp-sink "$self" "$port_file"
    for _ in $(seq 100); do
      [ -s "$port_file" ] && break
      sleep 0.05
    done
    [ -s "$port_file" ] || { echo "perf-kit-start: the OTLP sink did not start, see $work/otlp-sink.log" >&2; exit 1; }
    export OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$(cat "$port_file")"
    echo "perf-kit-start: traces to $OTEL_EXPORTER_OTLP_ENDPOINT" >&2
    ;;
  *)
    echo "usage: $0 pg-redis|redis|tracing" >&2
    exit 2
    ;;
esac

cd "$here/.."
exec node dist/main.js
