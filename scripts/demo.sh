#!/usr/bin/env bash
# The main job (`make demo`): the path a new user takes, through the `toolkit` program only:
#   toolkit new <name> --dir <dir>   render project_template into a fresh project
#   toolkit compile                  schema/app.toolkit -> api/generated/ and api/migrations/
#   toolkit db migrate               apply the migrations to the project's SQLite file
#   toolkit doctor --strict          open every configured service
#   toolkit serve                    gunicorn on the embedded defaults (SQLite file, standard
#                                    logging): no external service is needed
#
# Environment:
#   PORT          port to serve on (default 8080)
#   HOST          address to bind (default 0.0.0.0; 127.0.0.1 in smoke mode)
#   DEMO_DIR      where to render the project (default ./demo; re-rendered on every run)
#   DEMO_NAME     the project's Python package name (default demo)
#   DEMO_SMOKE=1  start the server in the background, GET /healthz and /, register, log
#                 in and GET /api/me, find the verification mail in the server's log (the
#                 `log` mailer) and POST its token to /api/verify, PUT /api/me/avatar and
#                 GET both presigned links it answers, POST and GET /v1/notes (the
#                 compiled schema's routes) with the token and GET /v1/notes without it
#                 (401), print the answers (tokens and signatures redacted), check the
#                 server log holds no password, bearer token or link signature, stop it
#                 with SIGTERM and fail unless it exits cleanly
#   TOOLKIT_ENV   the project's environment switch (default development: the project's
#                 development SECRET_KEY, plain HTTP; see the README's deploy section)
#   AUTH__DEFAULT__JWT_SECRET  the JWT signing secret (>= 32 bytes); a random one is
#                 generated for the run when unset (tokens then die with the server)
#   VENV          the virtualenv to use (default ./.venv, which `make venv` installs)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$(realpath -m "${VENV:-$ROOT/.venv}")"
DEMO_DIR="$(realpath -m "${DEMO_DIR:-$ROOT/demo}")"
DEMO_NAME="${DEMO_NAME:-demo}"
PORT="${PORT:-8080}"
SMOKE="${DEMO_SMOKE:-0}"
if [[ "$SMOKE" == 1 ]]; then HOST="${HOST:-127.0.0.1}"; else HOST="${HOST:-0.0.0.0}"; fi
MARKER=".toolkit-demo"

say() { echo "demo: $*"; }
die() { echo "demo: ERROR: $*" >&2; exit 1; }

[[ -x "$VENV/bin/python" ]] || die "no virtualenv at $VENV; run \`make venv\` (or \`make demo\`)"
[[ -x "$VENV/bin/gunicorn" ]] || die "gunicorn is not installed in $VENV; install the 'serve' extra"
TOOLKIT="$VENV/bin/toolkit"
[[ -x "$TOOLKIT" ]] || die "the toolkit program is not installed in $VENV; run \`make venv\`"

# Re-render from scratch, but never delete a directory this script did not create.
if [[ -d "$DEMO_DIR" && -n "$(ls -A "$DEMO_DIR")" && ! -e "$DEMO_DIR/$MARKER" ]]; then
    die "$DEMO_DIR exists and was not made by this script; set DEMO_DIR to another path"
fi
rm -rf "$DEMO_DIR"

say "toolkit new $DEMO_NAME --dir $DEMO_DIR"
"$TOOLKIT" new "$DEMO_NAME" --dir "$DEMO_DIR"
touch "$DEMO_DIR/$MARKER"

cd "$DEMO_DIR"
export DJANGO_ALLOWED_HOSTS="${DJANGO_ALLOWED_HOSTS:-*}"
# The demo is development: plain HTTP on a laptop, the project's own development key. A
# rendered project is production unless told otherwise (no SECRET_KEY fallback, HTTPS
# enforced), so the demo says so; TOOLKIT_ENV=production runs it as production instead
# (then DJANGO_SECRET_KEY is required, and DJANGO_SECURE_SSL_REDIRECT=0 for plain HTTP).
export TOOLKIT_ENV="${TOOLKIT_ENV:-development}"
say "TOOLKIT_ENV=$TOOLKIT_ENV"
if [[ -z "${AUTH__DEFAULT__JWT_SECRET:-}" ]]; then
    AUTH__DEFAULT__JWT_SECRET="$("$VENV/bin/python" -c 'import secrets; print(secrets.token_urlsafe(48))')"
    export AUTH__DEFAULT__JWT_SECRET
    say "generated a random JWT secret for this run (set AUTH__DEFAULT__JWT_SECRET to keep one)"
fi
say "toolkit compile"
"$TOOLKIT" compile
say "toolkit db migrate"
"$TOOLKIT" db migrate
say "toolkit doctor --strict"
"$TOOLKIT" doctor --strict

SERVE=("$TOOLKIT" serve --host "$HOST" --port "$PORT" --workers "${WEB_CONCURRENCY:-2}")

if [[ "$SMOKE" != 1 ]]; then
    say "toolkit serve: http://$HOST:$PORT/ (try /healthz); Ctrl-C stops it"
    exec "${SERVE[@]}"
fi

say "smoke: starting toolkit serve on $HOST:$PORT"
# The server's log (access log, the app's records, the mails of the `log` mailer) goes to
# stderr, so stdout holds only this script's report; a copy is kept for the smoke run,
# which reads the verification mail from it and scans it for secrets.
SERVER_LOG="$DEMO_DIR/.smoke-server.log"
: >"$SERVER_LOG"
"${SERVE[@]}" > >(tee -a "$SERVER_LOG" >&2) 2>&1 &
pid=$!
trap 'kill -KILL "$pid" 2>/dev/null || true' EXIT

fetch_rc=0
fetch_host="$HOST"
[[ "$fetch_host" == 0.0.0.0 ]] && fetch_host=127.0.0.1
"$VENV/bin/python" "$ROOT/scripts/smoke_fetch.py" "http://$fetch_host:$PORT" "$pid" 30 /healthz / \
    --accounts --notes --mail-log "$SERVER_LOG" || fetch_rc=$?

say "smoke: stopping toolkit serve (SIGTERM)"
kill -TERM "$pid" 2>/dev/null || true
for _ in $(seq 1 150); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
done
kill -0 "$pid" 2>/dev/null && die "toolkit serve did not exit within 15s of SIGTERM"
server_rc=0
wait "$pid" || server_rc=$?
trap - EXIT

((fetch_rc == 0)) || die "a smoke request failed (see above)"
((server_rc == 0)) || die "toolkit serve exited with status $server_rc after SIGTERM"
say "smoke: ok (server exited cleanly)"
