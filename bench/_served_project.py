"""The project ``bench/served.py`` loads: the template, compiled, with two baselines beside it.

:func:`build` renders the template project (``toolkit new``), adds :data:`BASELINES` as
``api/baselines.py`` and mounts it next to the generated routes, compiles the schema,
migrates and runs :data:`SEED` (a caller with a bearer token, notes of the caller's and
of other owners). The baselines do what the generated ``NoteService`` does for
``GET /v1/notes`` (a page after a signed cursor) and ``POST /v1/notes``:

* ``/plain/notes``: a hand-written Django view, authenticated by the toolkit's
  ``bearer_required`` (the same ``services.auth()`` verification, revocation store
  included), the same owner filter and keyset query, the same cursor signature, the same
  checks on the body (a JSON object whose ``title`` is a string of 1 to 200 characters)
  and the same JSON;
* ``/ninja/notes``: django-ninja with an ``HttpBearer`` verifying through
  ``services.auth()``, pydantic for the same checks and the same response fields.

(The leading underscore keeps this module out of ``python -m bench.run``'s groups.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

#: The console script of this interpreter's environment.
TOOLKIT = Path(sys.executable).parent / "toolkit"
#: The name of the rendered project (its settings package).
NAME = "shop"
#: Notes of the caller and of each of the other owners.
OWN_NOTES = 500
OTHER_OWNERS = 5
OTHER_NOTES = 2_000
#: Page size of the GET requests.
LIMIT = 20

BASELINES = '''\
"""Baselines of bench/served.py: the generated NoteService's work, by hand and by ninja."""

import base64
import binascii
import datetime
import json
import uuid

from django.core import signing
from django.db.models import Q
from django.http import HttpResponseNotAllowed, JsonResponse
from django.urls import path
from django.views.decorators.csrf import csrf_exempt
from ninja import Field, NinjaAPI, Query, Schema
from ninja.errors import HttpError
from ninja.security import HttpBearer
from toolkit_batteries import services
from toolkit_batteries.auth.base import AuthError
from toolkit_batteries.auth.decorators import bearer_required

from api.models import Note

MAX_BODY = 1_048_576
COMPACT = {"separators": (",", ":"), "ensure_ascii": False}


def _signer():
    # The generated views' cursor signature (salt and separator): the cursors are alike.
    return signing.Signer(sep=".", salt="toolkit.codegen.cursor")


def _stamp(value):
    return value.isoformat().replace("+00:00", "Z")


def _note(note):
    return {
        "id": str(note.id),
        "title": note.title,
        "owner": note.owner,
        "done": note.done,
        "created_at": _stamp(note.created_at),
    }


def _error(status, message, field=None):
    body = {"code": "invalid_argument", "message": message}
    if field:
        body["fields"] = {field: ["invalid"]}
    return JsonResponse({"error": body}, status=status)


def _position(signed):
    """Return the (created_at, id) a signed cursor points after; None when it is bad."""
    try:
        raw = _signer().unsign(signed)
        value = json.loads(base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)))
        return datetime.datetime.fromisoformat(value["at"]), uuid.UUID(value["id"])
    except (signing.BadSignature, binascii.Error, ValueError, KeyError, TypeError):
        return None


def _cursor_after(note):
    value = {"at": note.created_at.isoformat(), "id": str(note.id)}
    raw = json.dumps(value, separators=(",", ":"), sort_keys=True).encode()
    return _signer().sign(base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii"))


def _page(owner, cursor, limit):
    """The caller's notes after ``cursor`` by (created_at, id): rows and the next cursor."""
    notes = Note.objects.filter(owner=owner).order_by("created_at", "id")
    if cursor is not None:
        after, after_id = cursor
        notes = notes.filter(Q(created_at__gt=after) | Q(created_at=after, id__gt=after_id))
    rows = list(notes[: limit + 1])
    if len(rows) <= limit:
        return rows, None
    return rows[:limit], _cursor_after(rows[limit - 1])


def _plain_list(request, owner):
    raw = request.GET.get("limit")
    limit = int(raw) if raw is not None and raw.isascii() and raw.isdigit() else 0
    if raw is None:
        limit = 50
    if not 1 <= limit <= 200:
        return _error(400, "invalid parameter limit", "limit")
    cursor = None
    if request.GET.get("cursor"):
        cursor = _position(request.GET["cursor"])
        if cursor is None:
            return _error(400, "invalid parameter cursor", "cursor")
    rows, following = _page(owner, cursor, limit)
    body = {"items": [_note(n) for n in rows], "next_cursor": following}
    return JsonResponse(body, json_dumps_params=COMPACT)


def _plain_create(request, owner):
    if len(request.body) > MAX_BODY:
        return _error(413, "request body too large")
    try:
        data = json.loads(request.body)
    except ValueError:
        return _error(400, "invalid JSON body")
    title = data.get("title") if isinstance(data, dict) else None
    if not isinstance(title, str) or not 1 <= len(title) <= 200:
        return _error(400, "invalid request", "title")
    note = Note.objects.create(owner=owner, title=title, done=False)
    return JsonResponse(_note(note), json_dumps_params=COMPACT)


@csrf_exempt  # bearer tokens, not cookies
@bearer_required
def plain_notes(request):
    """GET: a page of the caller's notes; POST: a new note of the caller's."""
    owner = str(request.auth.subject)
    if request.method == "GET":
        return _plain_list(request, owner)
    if request.method == "POST":
        return _plain_create(request, owner)
    return HttpResponseNotAllowed(["GET", "POST"])


#: The plain view as an app of its own, included as the template includes one (``plain/``).
urlpatterns = [path("notes", plain_notes)]


class TokenBearer(HttpBearer):
    """ninja's bearer scheme, verified by the toolkit's auth service."""

    def authenticate(self, request, token):
        try:
            return services.auth().verify(token)
        except AuthError:
            return None


class NoteIn(Schema):
    title: str = Field(min_length=1, max_length=200)


class NoteOut(Schema):
    id: uuid.UUID
    title: str
    owner: str
    done: bool
    created_at: str

    @staticmethod
    def resolve_created_at(obj):
        return _stamp(obj.created_at)


class PageOut(Schema):
    items: list[NoteOut]
    next_cursor: str | None


ninja = NinjaAPI(urls_namespace="served-ninja", docs_url=None, auth=TokenBearer())


@ninja.get("/notes", response=PageOut)
def ninja_list(request, limit: int = Query(50, ge=1, le=200), cursor: str | None = None):
    position = None
    if cursor:
        position = _position(cursor)
        if position is None:
            raise HttpError(400, "invalid parameter cursor")
    rows, following = _page(str(request.auth.subject), position, limit)
    return {"items": rows, "next_cursor": following}


@ninja.post("/notes", response=NoteOut)
def ninja_create(request, payload: NoteIn):
    owner = str(request.auth.subject)
    return Note.objects.create(owner=owner, title=payload.title, done=False)
'''

SEED = f'''\
import datetime
import json
import os
import random
import uuid

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "{NAME}.settings")
import django

django.setup()
from accounts.models import Account
from api.models import Note
from toolkit_batteries import services

rng = random.Random(27)
start = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
owners = []
for n in range({OTHER_OWNERS + 1}):
    account = Account.objects.create(
        email=f"served{{n}}@example.com", name=f"Served {{n}}", password_hash="unused"
    )
    owners.append(str(account.id))
caller, others = owners[0], owners[1:]
rows = []
for i in range({OWN_NOTES}):
    rows.append((caller, i))
for owner in others:
    for i in range({OTHER_NOTES}):
        rows.append((owner, i))
rng.shuffle(rows)
Note.objects.bulk_create(
    [
        Note(
            id=uuid.UUID(int=rng.getrandbits(128), version=4),
            owner=owner,
            title=f"note {{i}}",
            done=i % 3 == 0,
            created_at=start + datetime.timedelta(seconds=n // 2),
        )
        for n, (owner, i) in enumerate(rows)
    ],
    batch_size=2000,
)
token = services.auth().issue(subject=caller, ttl=datetime.timedelta(hours=3)).token
print(json.dumps({{"caller": caller, "token": token}}))
'''


def toolkit(*args: str, cwd: Path, env: dict[str, str]) -> str:
    """Run ``toolkit args...`` (the installed console script); return stdout or raise."""
    done = subprocess.run(
        [str(TOOLKIT), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=600,
    )
    if done.returncode != 0:
        raise RuntimeError(f"toolkit {' '.join(args)}: {(done.stderr or done.stdout)[-2000:]}")
    return done.stdout


def build(where: Path, env: dict[str, str]) -> tuple[Path, dict[str, str]]:
    """Render, extend, compile, migrate and seed the project; return it and the seed's JSON."""
    project = where / NAME
    toolkit("new", NAME, "--dir", str(project), cwd=where, env=env)
    (project / "api" / "baselines.py").write_text(BASELINES)
    urls = project / NAME / "urls.py"
    text = urls.read_text()
    anchor = '        path("", include("api.generated.urls")),\n'
    if anchor not in text:
        raise RuntimeError(f"{urls}: the generated routes' include moved; update bench/served")
    # Each baseline is an include, as the template mounts its apps (``path("api/",
    # include("accounts.urls"))``) and the generated routes (the anchor): every side
    # resolves through one nested ResolverMatch. The baselines come just before the
    # generated include, as the template's apps do: a generated request pays their two
    # failed prefix checks (about a microsecond each), a baseline request none of the
    # generated patterns (that include, at "", would try them all first).
    text = text.replace(
        anchor,
        '        path("plain/", include("api.baselines")),\n'
        '        path("ninja/", baselines.ninja.urls),\n' + anchor,
    ).replace(
        "    from drf_spectacular.views import SpectacularAPIView\n",
        "    from drf_spectacular.views import SpectacularAPIView\n\n"
        "    from api import baselines\n",
    )
    urls.write_text(text)
    toolkit("compile", cwd=project, env=env)
    toolkit("db", "migrate", cwd=project, env=env)
    (project / "served_seed.py").write_text(SEED)
    seeded = subprocess.run(
        [sys.executable, "served_seed.py"],
        cwd=project,
        env={**env, "PYTHONPATH": str(project)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    if seeded.returncode != 0:
        raise RuntimeError(f"seed: {seeded.stderr[-2000:]}")
    return project, json.loads(seeded.stdout.strip().splitlines()[-1])


def serve_env(database_url: str, redis_url: str, workers: int) -> dict[str, str]:
    """Return the environment of a production ``toolkit serve`` with ``workers`` processes.

    What docs/deploy.md sets for several workers: the project's own keys, PostgreSQL and
    Redis (memory state is refused with more than one process), and plain HTTP on the
    loopback interface (no TLS redirect).
    """
    import secrets

    env = {
        k: v
        for k, v in os.environ.items()
        if k != "DJANGO_SETTINGS_MODULE" and not k.startswith("TOOLKIT_")
    }
    env.update(
        DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
        AUTH__DEFAULT__JWT_SECRET=secrets.token_urlsafe(48),
        DJANGO_SECURE_SSL_REDIRECT="0",
        TOOLKIT_DATABASE_URL=database_url,
        TOOLKIT_REDIS_URL=redis_url,
        WEB_CONCURRENCY=str(workers),
        PYTHONDONTWRITEBYTECODE="1",
    )
    return env
