"""Generated API benchmarks: requests per second of a generated endpoint and its baselines.

A throw-away project is compiled from a one-entity schema (``manage.py compile_schema``),
migrated on an in-memory SQLite database (so disk syncs do not drown the figures) and
driven in a subprocess through Django's WSGI handler (no network, no test client), so
every figure is the cost of Django plus the view. Each endpoint is measured beside two
baselines doing the same database work:

- a hand-written plain Django view returning a ``JsonResponse`` (targets: GET >= 0.85x
  its requests per second; POST >= 0.95x, the plain view checking what the schema's
  ``CreateUser`` checks: both fields strings, the email's format with Django's
  ``validate_email`` and at most 255 characters, the name 1 to 100 characters, and a
  400 naming the field otherwise);
- django-ninja doing the same work with the same validation: pydantic schemas with the
  schema's length bounds and Django's ``validate_email``, a UUID path parameter, the same
  response fields (target: not slower, >= 1.0x);
- a default DRF ``ModelViewSet`` with a ``ModelSerializer`` (target: not slower, >= 1.0x).

Every side is routed alike, as the project template routes an app: one ``include()`` at
the root (``plain/``, ``ninja/``, ``drf/``; the generated routes at ``""`` as the template
mounts them), so each request resolves through the same nested ``ResolverMatch``; and
each side is timed on a URLconf where its mount comes first (``urls_<side>``), so none
pays for the prefix checks or patterns of another tried before it.

A last line times the compiler itself: the front end plus every backend (``BACKENDS``:
the five Django ones, ``sql``, ``openapi``, ``mcp`` and the app backends) on a
500-entity, 100-service schema (target: under 1.5 s of CPU).

Two endpoints: ``GET /v1/users/{id}`` (read one row) and ``POST /v1/users`` (validate a
JSON body, insert a row). Each figure is the best of 25 interleaved bursts of 100 requests
(the least disturbed one), so a busy machine shifts all four alike. Bursts are timed in
CPU time of the driver (``time.process_time``: one thread, no I/O, the database in
memory), so requests per second are per CPU second: time spent waiting for a core that
other processes hold is nobody's cost, and on a busy machine it was the larger part of a
wall-clock burst.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from bench.foundation import Result

ROOT = Path(__file__).resolve().parent.parent

SCHEMA = """\
entity User {
  id: uuid @primary
  email: string @validate(format: "email", max_len: 255)
  name: string @validate(min_len: 1, max_len: 100)
  created_at: timestamp @default(now())
}

service UserService {
  rpc CreateUser(
    email: string @validate(format: "email", max_len: 255),
    name: string @validate(min_len: 1, max_len: 100)
  ) -> User {
    http: POST "/v1/users"
    auth: none
  }

  rpc GetUser(id: uuid) -> User {
    http: GET "/v1/users/{id}"
    auth: none
  }

  rpc ListUsers() -> User {
    http: GET "/v1/users"
    auth: none
    paginated: true
  }
}
"""

HANDLERS = '''\
"""Bench handlers."""

from toolkit_batteries.api_runtime import crud
from toolkit_batteries.http import ApiError

from . import models


class UserService:
    list_users = crud.list_page(models.User, ("created_at", "id"))

    def create_user(self, request, *, email, name):
        return models.User.objects.create(email=email, name=name)

    def get_user(self, request, *, id):
        try:
            return models.User.objects.get(pk=id)
        except models.User.DoesNotExist:
            raise ApiError(404, "not_found", "no such user") from None
'''

BASELINES = '''\
"""The baselines: a plain Django view and a default DRF ModelViewSet, same database work."""

import base64
import datetime
import json
import uuid

from django.db.models import Q
from django.http import JsonResponse
from django.urls import include, path
from django.views.decorators.csrf import csrf_exempt
from django.core.validators import validate_email
from django.shortcuts import get_object_or_404
from ninja import Field, NinjaAPI, Schema
from pydantic import field_validator
from rest_framework import routers, serializers, viewsets

from api.models import User


def _user(user):
    return {
        "id": str(user.id),
        "email": user.email,
        "name": user.name,
        "created_at": user.created_at.isoformat(),
    }


def _invalid(field):
    return JsonResponse(
        {"error": {"code": "invalid_argument", "details": {field: ["invalid"]}}}, status=400
    )


@csrf_exempt
def plain_create(request):
    """The schema's CreateUser checks, by hand: strings, email format, both lengths."""
    try:
        data = json.loads(request.body)
    except ValueError:
        return _invalid("body")
    if not isinstance(data, dict):
        return _invalid("body")
    email, name = data.get("email"), data.get("name")
    if not isinstance(email, str) or len(email) > 255:
        return _invalid("email")
    try:
        validate_email(email)
    except Exception:
        return _invalid("email")
    if not isinstance(name, str) or not 1 <= len(name) <= 100:
        return _invalid("name")
    user = User.objects.create(email=email, name=name)
    return JsonResponse(_user(user), status=201)


def _after(created_at, id):
    return Q(created_at__gt=created_at) | Q(created_at=created_at, id__gt=id)


def plain_list(request):
    """The same keyset page by hand: (created_at, id) order, an opaque unsigned cursor."""
    try:
        limit = int(request.GET.get("limit") or 50)
    except ValueError:
        return _invalid("limit")
    rows = User.objects.order_by("created_at", "id")
    cursor = request.GET.get("cursor")
    if cursor:
        try:
            stamp, ident = json.loads(base64.urlsafe_b64decode(cursor))
            rows = rows.filter(
                _after(datetime.datetime.fromisoformat(stamp), uuid.UUID(ident))
            )
        except ValueError:
            return _invalid("cursor")
    found = list(rows[: limit + 1])
    following = None
    if len(found) > limit:
        last = found[limit - 1]
        key = json.dumps([last.created_at.isoformat(), str(last.id)]).encode()
        following = base64.urlsafe_b64encode(key).decode()
    return JsonResponse({"items": [_user(u) for u in found[:limit]], "next_cursor": following})


def plain_get(request, id):
    try:
        user = User.objects.get(pk=uuid.UUID(id))
    except (ValueError, User.DoesNotExist):
        return JsonResponse({"error": {"code": "not_found"}}, status=404)
    return JsonResponse(_user(user))


class UserModelSerializer(serializers.ModelSerializer):
    class Meta:
        model = User
        fields = "__all__"


class UserViewSet(viewsets.ModelViewSet):
    queryset = User.objects.all()
    serializer_class = UserModelSerializer


router = routers.DefaultRouter()
router.register("users", UserViewSet)


class UserIn(Schema):
    """What the schema's CreateUser validates: email format and length, name length."""

    email: str = Field(max_length=255)
    name: str = Field(min_length=1, max_length=100)

    @field_validator("email")
    @classmethod
    def _email(cls, value):
        try:
            validate_email(value)
        except Exception:
            raise ValueError("Enter a valid email address.") from None
        return value


class UserOut(Schema):
    id: uuid.UUID
    email: str
    name: str
    created_at: datetime.datetime


ninja = NinjaAPI(urls_namespace="bench-ninja")


@ninja.post("/users", response=UserOut)
def ninja_create(request, payload: UserIn):
    return User.objects.create(email=payload.email, name=payload.name)


@ninja.get("/users/{id}", response=UserOut)
def ninja_get(request, id: uuid.UUID):
    return get_object_or_404(User, pk=id)


#: The plain views as an app of their own: the generated module's order (item route first).
plain_urlpatterns = [
    path("users/<str:id>", plain_get),
    path("users", plain_create),
    path("list", plain_list),
]

# Every side is one include at the root, mounted as the template mounts an app
# (path("api/", include("accounts.urls"))) and the generated routes (path("", include(
# "api.generated.urls"))): each request resolves through one nested ResolverMatch.
MOUNTS = {
    "generated": path("", include("api.generated.urls")),
    "plain": path("plain/", include(plain_urlpatterns)),
    "ninja": path("ninja/", ninja.urls),
    "drf": path("drf/", include(router.urls)),
}


def urlconf(first):
    """The mounts, ``first`` first: the URLconf ``urls_<first>`` the driver times it on.

    Django tries the mounts in order, and a request pays for every mount tried before its
    own (a failed prefix check, or the generated include's patterns, all tried, since it
    is mounted at ""). Each side is timed on the URLconf where it comes first, so none
    pays for another's failures.
    """
    return [MOUNTS[first], *(mount for side, mount in MOUNTS.items() if side != first)]


# The default URLconf (bench/_api_curve.py compares generated and plain on it): the plain
# app before the generated include, as the template puts its apps before it. A generated
# request pays one failed prefix check ("plain/"), a plain one nothing.
urlpatterns = urlconf("plain")
'''

#: The sides: the generated routes and the baselines (``MOUNTS`` in :data:`BASELINES`).
SIDES = ("generated", "plain", "ninja", "drf")

#: The start of every driver: Django on the bench project, its schema compiled and migrated.
DRIVER_SETUP = """\
os.environ["DJANGO_SETTINGS_MODULE"] = "bench_settings"
import django

django.setup()
from django.core.handlers.wsgi import WSGIHandler
from django.core.management import call_command

call_command("compile_schema", verbosity=0)
call_command("migrate", verbosity=0)
from api.models import User
"""

DRIVER = (
    """\
import io
import json
import os
import sys
import time

"""
    + DRIVER_SETUP
    + """from django.test.utils import override_settings

handler = WSGIHandler()
user = User.objects.create(email="bench@example.com", name="Bench")
BODY = json.dumps({"email": "new@example.com", "name": "New"}).encode()


def environ(method, path, body=b""):
    return {
        "REQUEST_METHOD": method, "PATH_INFO": path, "QUERY_STRING": "",
        "SERVER_NAME": "bench", "SERVER_PORT": "80", "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(body), "CONTENT_LENGTH": str(len(body)),
        "CONTENT_TYPE": "application/json", "wsgi.errors": sys.stderr,
    }


def run(side, method, path, body, n):
    status = []
    def start(s, headers): status.append(s)
    # The side's own URLconf (urlconf() in bench_urls): no other mount is tried first.
    with override_settings(ROOT_URLCONF=f"urls_{side}"):
        b"".join(handler(environ(method, path, body), start))  # builds its resolver
        began = time.process_time()
        for _ in range(n):
            b"".join(handler(environ(method, path, body), start))
        elapsed = time.process_time() - began
    assert status[-1].startswith(("200", "201")), (path, status[-1])
    return n / elapsed


uid = str(user.id)
cases = {
    "get": {
        "generated": ("GET", f"/v1/users/{uid}", b""),
        "plain": ("GET", f"/plain/users/{uid}", b""),
        "ninja": ("GET", f"/ninja/users/{uid}", b""),
        "drf": ("GET", f"/drf/users/{uid}/", b""),
    },
    "post": {
        "generated": ("POST", "/v1/users", BODY),
        "plain": ("POST", "/plain/users", BODY),
        "ninja": ("POST", "/ninja/users", BODY),
        "drf": ("POST", "/drf/users/", BODY),
    },
}
n = int(sys.argv[1])
best = {op: {k: 0.0 for k in c} for op, c in cases.items()}
for op, variants in cases.items():
    for name, args in variants.items():
        run(name, *args, 50)  # warm up
    # Short bursts, interleaved, best of many: robust on a busy machine.
    for _ in range(int(sys.argv[2])):
        for name, args in variants.items():
            best[op][name] = max(best[op][name], run(name, *args, n))
print(json.dumps(best))
"""
)


def _measure(requests: int = 100, rounds: int = 25) -> dict[str, dict[str, float]]:
    """Build the bench project, run the driver, return requests/second per endpoint."""
    return _in_project(DRIVER, [str(requests), str(rounds)])


def _in_project(driver: str, args: list[str]) -> dict:
    """Write the bench project, run ``driver`` in it, return the JSON it prints last."""
    with tempfile.TemporaryDirectory(prefix="toolkit-bench-api-") as tmp:
        project = Path(tmp)
        (project / "schema").mkdir()
        (project / "schema" / "app.toolkit").write_text(SCHEMA)
        (project / "api").mkdir()
        (project / "api" / "__init__.py").write_text("")
        (project / "api" / "handlers.py").write_text(HANDLERS)
        (project / "bench_urls.py").write_text(BASELINES)
        for side in SIDES:  # the URLconf each side is timed on: its own mount first
            (project / f"urls_{side}.py").write_text(
                f"from bench_urls import urlconf\n\nurlpatterns = urlconf({side!r})\n"
            )
        (project / "bench_settings.py").write_text(
            textwrap.dedent(
                f"""\
                from pathlib import Path
                BASE_DIR = Path({str(project)!r})
                SECRET_KEY = "bench"
                DEBUG = False
                USE_TZ = True
                ALLOWED_HOSTS = ["*"]
                ROOT_URLCONF = "bench_urls"
                DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
                INSTALLED_APPS = [
                    "django.contrib.contenttypes",
                    "django.contrib.auth",
                    "rest_framework",
                    "toolkit_batteries",
                    "toolkit_batteries.api_runtime",
                    "ninja",
                    "api",
                ]
                MIDDLEWARE = []
                DATABASES = {{
                    "default": {{"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}}
                }}
                """
            )
        )
        (project / "driver.py").write_text(driver)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(project), str(ROOT)])}
        env.pop("DJANGO_SETTINGS_MODULE", None)
        done = subprocess.run(
            [sys.executable, "driver.py", *args],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=3600,
        )
        if done.returncode != 0:
            raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr else "failed")
        return json.loads(done.stdout.strip().splitlines()[-1])


_CACHE: dict[str, dict[str, float]] = {}


def _figures() -> dict[str, dict[str, float]]:
    if not _CACHE:
        _CACHE.update(_measure())
    return _CACHE


def _ratio(op: str, path: str, base: str, label: str, target: float) -> Result:
    f = _figures()[op]
    ratio = f["generated"] / f[base]
    return Result(
        f"generated {op.upper()} {path} vs {label}",
        f["generated"],
        f[base],
        "req/s",
        f">= {target}x",
        ratio >= target,
    )


def bench_get_vs_plain() -> Result:
    """GET one row: generated endpoint vs a plain ``JsonResponse`` view."""
    return _ratio("get", "/v1/users/{id}", "plain", "plain view", 0.85)


def bench_get_vs_ninja() -> Result:
    """GET one row: generated endpoint vs django-ninja (UUID path parameter, same fields)."""
    return _ratio("get", "/v1/users/{id}", "ninja", "django-ninja", 1.0)


def bench_get_vs_drf() -> Result:
    """GET one row: generated endpoint vs a default DRF ``ModelViewSet``."""
    return _ratio("get", "/v1/users/{id}", "drf", "ModelViewSet", 1.0)


def bench_post_vs_plain() -> Result:
    """POST a row: generated endpoint vs a plain ``JsonResponse`` view."""
    return _ratio("post", "/v1/users", "plain", "plain view (same validation)", 0.95)


def bench_post_vs_ninja() -> Result:
    """POST a row: generated endpoint vs django-ninja with the same validation."""
    return _ratio("post", "/v1/users", "ninja", "django-ninja", 1.0)


def bench_post_vs_drf() -> Result:
    """POST a row: generated endpoint vs a default DRF ``ModelViewSet``."""
    return _ratio("post", "/v1/users", "drf", "ModelViewSet", 1.0)


def bench_compile_all_backends() -> Result:
    """CPU time of the front end plus every backend on a 500-entity schema.

    The schema is ``bench.schema_gen.big_schema_text(500, 100)`` (500 entities, 100
    services), compiled into a fresh app (``0001_initial`` included) and through ``sql``,
    ``openapi``, ``mcp`` and the app backends; the baseline is the front end alone (parse,
    resolve, validate), measured in the same run. Best of three.
    """
    import time

    from bench.schema_gen import big_schema_text
    from toolkit_codegen.backends import BACKENDS, BackendOptions, generate
    from toolkit_codegen.compiler import load_sources

    text = big_schema_text(500, 100)
    front, total = [], []
    for _ in range(3):
        start = time.process_time()
        loaded = load_sources({"app.toolkit": text})
        middle = time.process_time()
        for backend in BACKENDS:
            generate(backend, loaded.schema, BackendOptions())
        end = time.process_time()
        front.append(middle - start)
        total.append(end - start)
    value, baseline = min(total) * 1000, min(front) * 1000
    return Result(
        "compile 500 entities: front end + every backend",
        value,
        baseline,
        "ms",
        "< 1500 ms",
        value < 1500,
    )


BENCHMARKS = [
    bench_get_vs_plain,
    bench_get_vs_ninja,
    bench_get_vs_drf,
    bench_post_vs_plain,
    bench_post_vs_ninja,
    bench_post_vs_drf,
    bench_compile_all_backends,
]


def bench_list_curve() -> object:
    """List page 1 vs page 1,000 and POST by table size (``bench/_api_curve.py``)."""
    from bench._api_curve import curve

    return curve()


BENCHMARKS.append(bench_list_curve)


if __name__ == "__main__":
    for bench in BENCHMARKS:
        print(bench().line())
