"""The served curve (issue 27): the template project under ``toolkit serve``, over HTTP.

Why: the in-process benches (:mod:`bench.generated_api`) time Django and the view alone;
a deployment adds gunicorn, sockets, a connection per request, PostgreSQL and Redis, and
queueing once more clients than workers wait. Here the template project is rendered
(``toolkit new``), compiled, migrated on a fresh PostgreSQL database and seeded by
:mod:`bench._served_project` (which also mounts a hand-written view and a django-ninja
route doing the generated ``NoteService``'s work beside it), then served by ``toolkit
serve`` with one gunicorn worker per core (``WEB_CONCURRENCY``), in production mode with
Redis (what docs/deploy.md sets for several workers). wrk drives it at 8, 64 and 256
connections with a Lua script carrying the bearer token and the POST body:

* ``GET`` a page of 20 of the caller's notes after a signed cursor (owner filter, keyset);
* ``POST`` a note (the body validated, the row inserted with the caller as owner).

The three sides are measured in turns (the order reversed every round), each turn one
wrk run; a side's figure is its middle round by requests per second (of two, the better),
with that round's p50 and p99 from wrk's latency histogram.
Errors are summed over every round: non-2xx answers (counted by the Lua script) and
socket errors (connect, read, write, timeout; wrk's timeout is raised to 30 s so a slow
answer shows in p99 rather than as an error). Between runs the server is drained (wrk
leaves up to one queued request per connection, which gunicorn still serves), and the
web workers' CPU time per request is read from ``/proc`` and the access log: on a shared
machine it is steadier than requests per second. Targets, computed in the same run: the
generated side at least 0.95x the plain view's requests per second at every concurrency,
and no error at 256 connections.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from bench import _served_project as served

CONNECTIONS = (8, 64, 256)
SIDES = ("generated", "plain", "ninja")
PATHS = {"generated": "/v1/notes", "plain": "/plain/notes", "ninja": "/ninja/notes"}
OPS = ("GET", "POST")
POST_BODY = json.dumps({"title": "a note from wrk"})
#: Seconds per wrk run and rounds per side: default run, then ``--scale``.
DEFAULT_RUN = (4, 2)
SCALE_RUN = (10, 3)
TARGET = 0.95
POSTGRES = "postgresql://postgres@127.0.0.1:5432/postgres"
REDIS = "redis://127.0.0.1:6379/13"

LUA = """\
wrk.method = "%(method)s"
wrk.headers["Authorization"] = "Bearer %(token)s"
wrk.headers["Content-Type"] = "application/json"
%(body)s
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  bad = 0
end

function response(status, headers, body)
  if status < 200 or status > 299 then
    bad = bad + 1
  end
end

function done(summary, latency, requests)
  local non2xx = 0
  for _, thread in ipairs(threads) do
    non2xx = non2xx + thread:get("bad")
  end
  local e = summary.errors
  io.write(string.format(
    '{"requests": %%.0f, "duration_us": %%.0f, "connect": %%.0f, "read": %%.0f, ' ..
    '"write": %%.0f, "timeout": %%.0f, "status": %%.0f, "non2xx": %%.0f, ' ..
    '"p50_us": %%.0f, "p99_us": %%.0f}\\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.timeout,
    e.status, non2xx, latency:percentile(50), latency:percentile(99)))
end
"""


def _request(
    base: str, method: str, path: str, token: str | None, body: str | None = None
) -> tuple[int, Any]:
    """One request with urllib; return (status, parsed JSON or None)."""
    request = urllib.request.Request(
        base + path, data=body.encode() if body else None, method=method
    )
    request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            status, raw = answer.status, answer.read()
    except urllib.error.HTTPError as refused:
        status, raw = refused.code, refused.read()
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, None


def _stop(server: subprocess.Popen[str]) -> int:
    if server.poll() is None:
        server.send_signal(signal.SIGTERM)
    try:
        return server.wait(timeout=60)
    except subprocess.TimeoutExpired:
        server.kill()
        return server.wait()


def _agree(base: str, token: str, caller: str, query: str) -> None:
    """Check the three sides answer alike (and refuse a missing token) before any load."""
    pages, created = {}, {}
    for side, path in PATHS.items():
        status, page = _request(base, "GET", path + query, token)
        if status != 200 or any(item["owner"] != caller for item in page["items"]):
            raise RuntimeError(f"{side} GET: {status} {page!r:.300}")
        pages[side] = page
        status, note = _request(base, "POST", path, token, POST_BODY)
        if status != 200 or note["owner"] != caller or note["title"] != "a note from wrk":
            raise RuntimeError(f"{side} POST: {status} {note!r:.300}")
        created[side] = sorted(note)
        if _request(base, "GET", path + query, None)[0] != 401:
            raise RuntimeError(f"{side} answers without a bearer token")
        if _request(base, "POST", path, token, json.dumps({"title": ""}))[0] not in (400, 422):
            raise RuntimeError(f"{side} accepts an empty title")
    if not all(page == pages["generated"] for page in pages.values()):
        raise RuntimeError(f"the sides answer different pages: {pages!r:.600}")
    if len(pages["generated"]["items"]) != served.LIMIT:
        raise RuntimeError("the page is not full: seed more notes")
    if not all(keys == created["generated"] for keys in created.values()):
        raise RuntimeError(f"the sides answer different notes: {created!r}")


def _wrk(url: str, script: Path, connections: int, seconds: int) -> dict[str, float]:
    """Run wrk once; return the JSON its script's ``done`` prints."""
    done = subprocess.run(
        [
            "wrk",
            f"-t{min(2, connections)}",
            f"-c{connections}",
            f"-d{seconds}s",
            "--timeout",
            "30s",
            "--latency",
            "-s",
            str(script),
            url,
        ],
        capture_output=True,
        text=True,
        timeout=seconds + 120,
    )
    found = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not found:
        raise RuntimeError(f"wrk failed: {done.stderr.strip()[-500:] or done.stdout[-500:]}")
    return json.loads(found[-1])


def _scripts(folder: Path, token: str) -> dict[str, Path]:
    scripts = {}
    for op in OPS:
        body = f"wrk.body = [[{POST_BODY}]]" if op == "POST" else ""
        path = folder / f"{op.lower()}.lua"
        path.write_text(LUA % {"method": op, "token": token, "body": body})
        scripts[op] = path
    return scripts


class _Served:
    """The running server as the bench sees it: its workers' CPU time and its access log."""

    def __init__(self, base: str, arbiter: int, log: Path, workers: int) -> None:
        self.base = base
        self.arbiter = arbiter
        self.log = log
        self.offset = 0
        deadline = time.monotonic() + 60
        self.workers = self._children()
        while len(self.workers) < workers and time.monotonic() < deadline:
            time.sleep(0.2)  # /healthz answered: one worker is up, the others still boot
            self.workers = self._children()

    def _children(self) -> set[int]:
        found = set()
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rpartition(")")[2].split()
            except OSError:
                continue
            if int(fields[1]) == self.arbiter:
                found.add(int(stat.parent.name))
        return found

    def cpu(self) -> float:
        """Return the CPU seconds (user + system) the web workers have used so far."""
        total = 0
        for pid in self.workers:
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
            except OSError:
                raise RuntimeError("a gunicorn worker died during the run") from None
            total += int(fields[11]) + int(fields[12])
        return total / os.sysconf("SC_CLK_TCK")

    def drain(self) -> None:
        """Wait until the requests wrk left queued are served (the accept queue is FIFO).

        When wrk stops, up to one request per connection still waits in the listen
        backlog, and gunicorn serves it although its client is gone: without this the next
        run would start on a busy server.
        """
        if _request(self.base, "GET", "/healthz", None)[0] != 200:
            raise RuntimeError("toolkit serve stopped answering /healthz")

    def served(self, path: str) -> tuple[int, int]:
        """Return (requests to ``path``, of which not 2xx) in the access log since last call."""
        with self.log.open("rb") as log:
            log.seek(self.offset)
            text = log.read().decode(errors="replace")
        complete = text.rpartition("\n")[0]
        self.offset += len(complete.encode()) + (1 if complete else 0)
        count = bad = 0
        for match in _ACCESS.finditer(complete):
            if match["path"] == path:
                count += 1
                bad += not match["status"].startswith("2")
        return count, bad


#: One access log line's request path and status (serving.ACCESS_LOG_FORMAT).
_ACCESS = re.compile(r'"(?:GET|POST) (?P<path>\S+) HTTP/[\d.]+" (?P<status>\d{3}) ')


def _load(server: _Served, scripts: dict[str, Path], query: str, seconds: int, rounds: int) -> dict:
    """Drive every side at every concurrency; return the middle rounds, errors and CPU."""
    urls = {
        (op, side): server.base + path + (query if op == "GET" else "")
        for op in OPS
        for side, path in PATHS.items()
    }
    for (op, _side), url in urls.items():
        _wrk(url, scripts[op], 8, 1)  # warm every worker's code path
    server.drain()
    server.served("")
    runs: dict[str, list[dict[str, Any]]] = {}
    totals: dict[str, list[float]] = {}
    # Every GET before any POST: the POSTs add tens of thousands of the caller's notes, and
    # a GET measured after them reads a bigger table than the GET it is compared with.
    for op in OPS:
        for connections in CONNECTIONS:
            for round_ in range(rounds):
                order = SIDES if round_ % 2 == 0 else tuple(reversed(SIDES))
                for side in order:
                    before = server.cpu()
                    run = _wrk(urls[op, side], scripts[op], connections, seconds)
                    server.drain()
                    used = server.cpu() - before
                    count, bad = server.served(PATHS[side])
                    run["rps"] = run["requests"] / (run["duration_us"] / 1e6)
                    key = f"{side} {op} {connections}"
                    errors = sum(run[k] for k in ("connect", "read", "write", "timeout"))
                    # non-2xx: what wrk received, and what the server answered after wrk left
                    total = totals.setdefault(key, [0, 0, 0.0])
                    total[0] += int(errors + max(run["non2xx"], bad))
                    total[1] += count
                    total[2] += used
                    runs.setdefault(key, []).append(run)
    best: dict[str, Any] = {}
    for key, done in runs.items():
        # The middle run by requests per second (of two, the better): one lucky or
        # unlucky window of the machine's other work decides nothing.
        run = best[key] = sorted(done, key=lambda r: r["rps"])[len(done) // 2]
        errors, count, used = totals[key]
        run["errors"] = int(errors)
        run["cpu_ms"] = 1000 * used / max(count, 1)
    return best


def measure() -> dict[str, Any]:
    """Build, serve and load the project; return the figures and the run's facts."""
    from tests.cli.test_end_to_end import _wait_until_up
    from tests.ports import free_port
    from tests.support.databases import empty_postgres_database

    if shutil.which("wrk") is None:
        raise RuntimeError("wrk is not installed (scripts/system-packages.sh installs it)")
    from bench._curves import scale_requested

    seconds, rounds = SCALE_RUN if scale_requested() else DEFAULT_RUN
    workers = os.cpu_count() or 1
    with (
        tempfile.TemporaryDirectory(prefix="toolkit-bench-served-") as tmp,
        empty_postgres_database(POSTGRES, "toolkit_served") as database,
    ):
        folder = Path(tmp)
        env = served.serve_env(database, REDIS, workers)
        project, seed = served.build(folder, env)
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        log = (folder / "serve.log").open("wb")
        server = subprocess.Popen(
            [str(served.TOOLKIT), "serve", "--host", "127.0.0.1", "--port", str(port)],
            cwd=project,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            text=True,
        )
        try:
            _wait_until_up(base, server, limit=120)
            token = seed["token"]
            first = _request(base, "GET", f"/v1/notes?limit={served.LIMIT}", token)[1]
            query = f"?limit={served.LIMIT}&cursor={first['next_cursor']}"
            _agree(base, token, seed["caller"], query)
            best = _load(
                _Served(base, server.pid, folder / "serve.log", workers),
                _scripts(folder, token),
                query,
                seconds,
                rounds,
            )
        finally:
            stopped = _stop(server)
            log.close()
        text = (folder / "serve.log").read_text(errors="replace")
    return {
        "best": best,
        "seconds": seconds,
        "rounds": rounds,
        "workers": workers,
        "stopped": stopped,
        "tracebacks": text.count("Traceback"),
        "worker_timeouts": text.count("WORKER TIMEOUT"),
        "load": os.getloadavg()[0],
    }


def curve() -> Any:
    """Measure, write the ``served`` section and return the bench lines."""
    from bench._curves import Line, Lines, Point, write_section

    found = measure()
    best = found["best"]
    points: list[Point] = []
    lines: list[Line] = []
    for op in OPS:
        for side in SIDES:
            for connections in CONNECTIONS:
                run = best[f"{side} {op} {connections}"]
                extra = {
                    "req/s": f"{run['rps']:.0f}",
                    "worker CPU ms/req": f"{run['cpu_ms']:.2f}",
                    "errors": str(run["errors"]),
                }
                points.append(
                    Point(
                        f"{side} {op}",
                        connections,
                        run["p50_us"] / 1000,
                        run["p99_us"] / 1000,
                        extra,
                    )
                )
        for connections in CONNECTIONS:
            mine, plain, ninja = (best[f"{s} {op} {connections}"] for s in SIDES)
            lines.append(
                Line(
                    f"served {op} generated vs plain, {connections} conns",
                    mine["rps"],
                    plain["rps"],
                    "req/s",
                    f">= {TARGET}x plain",
                    mine["rps"] >= TARGET * plain["rps"],
                )
            )
            lines.append(
                Line(
                    f"served {op} generated vs ninja, {connections} conns",
                    mine["rps"],
                    ninja["rps"],
                    "req/s",
                )
            )
            lines.append(
                Line(
                    f"served {op} generated worker CPU/request (plain: baseline), {connections}",
                    mine["cpu_ms"],
                    plain["cpu_ms"],
                    "ms",
                )
            )
            lines.append(
                Line(
                    f"served {op} generated p99 (plain: baseline), {connections} conns",
                    mine["p99_us"] / 1000,
                    plain["p99_us"] / 1000,
                    "ms",
                )
            )
    errors = sum(best[f"{s} {op} 256"]["errors"] for s in SIDES for op in OPS)
    answered = all(best[f"{s} {op} 256"]["requests"] > 0 for s in SIDES for op in OPS)
    lines.append(
        Line(
            "served errors at 256 conns, every side",
            errors,
            None,
            "errors",
            "0 (and every side answered)",
            errors == 0 and answered,
        )
    )
    write_section(
        "served",
        "served: toolkit serve over HTTP (wrk), generated vs plain vs ninja, by connections",
        points,
        _notes(found),
        columns=["req/s", "worker CPU ms/req", "errors"],
        xlabel="connections",
    )
    return Lines(lines)


def _notes(found: dict[str, Any]) -> str:
    return (
        "`python -m bench.run served`: the template project (`toolkit new`, compiled, "
        "migrated) under `toolkit serve` in production mode, gunicorn sync workers, "
        f"`WEB_CONCURRENCY={found['workers']}` (one per core), PostgreSQL and Redis on the "
        "same machine (the template's defaults: each worker keeps its PostgreSQL connection "
        "between requests, `TOOLKIT_DB_CONN_MAX_AGE=60`, no `DB__DEFAULT__MAX_CONNS` pool), "
        "wrk on it too (2 threads, `--timeout 30s`). "
        f"{served.OWN_NOTES} notes of the caller's and {served.OTHER_NOTES:,} of each of "
        f"{served.OTHER_OWNERS} other owners. `GET`: a page of {served.LIMIT} after a "
        "signed cursor; `POST`: a new note. *plain*: a hand-written view "
        "(`bearer_required`, the same owner filter, keyset query, cursor signature, body "
        "checks and JSON); *ninja*: django-ninja with an `HttpBearer` on the same auth "
        "service and pydantic for the checks (`bench/_served_project.py`); the three "
        "answer the same page before the load starts. Each side is mounted with "
        "`include()`, as the template mounts an app: the baselines' (`plain/`, `ninja/`) "
        "just before the generated routes' (at the root), so a generated request also pays "
        "their two failed prefix checks. "
        f"Each side: the middle of {found['rounds']} wrk runs (by req/s; of two, the "
        f"better) of {found['seconds']} s per "
        "concurrency (sides in turns, order reversed every round, the server drained "
        "between runs, every GET run before the first POST so all GETs read the same "
        "rows); p50/p99 from that run (a p99 near the run's length means the "
        "queue, connections / req/s, was longer than the run); errors (non-2xx, from wrk "
        "and from the access log, and socket errors) summed over every run; worker CPU "
        "per request: the gunicorn workers' user + system time over every run, divided "
        "by the requests the access log shows (the PostgreSQL backends' time is not in "
        f"it). Server log: {found['tracebacks']} tracebacks, {found['worker_timeouts']} "
        f"worker timeouts; `toolkit serve` exited {found['stopped']} on SIGTERM. "
        "Requests per second are the machine's share of two busy cores: compare sides, "
        "not runs."
    )


def bench_served_curve() -> Any:
    """Compare generated, plain and ninja under ``toolkit serve`` at 8, 64, 256 connections."""
    return curve()


BENCHMARKS = [bench_served_curve]


if __name__ == "__main__":
    print(curve().line())
