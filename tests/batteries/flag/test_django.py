"""The template tag through Django's template engine; the DRF helpers through APIView."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import AnonymousUser, User
from django.template import engines
from django.test import RequestFactory, override_settings
from rest_framework.response import Response
from rest_framework.test import APIRequestFactory, force_authenticate
from rest_framework.views import APIView

from toolkit_batteries.flag import flag_enabled, flag_value
from toolkit_batteries.flag.drf import FlagRequired, require_flag

from .test_contract import in_rollout

FLAGS = {
    "beta": {"rollout": 50, "tenants": {"acme": True}},
    "theme": {"value": "dark", "tenants": {"acme": {"value": "light"}}},
}


@pytest.fixture
def flags(tmp_path):
    path = tmp_path / "flags.json"
    path.write_text(json.dumps({"flags": FLAGS}), encoding="utf-8")
    toolkit = {"flag": {"adapter": "static", "options": {"static": {"path": str(path)}}}}
    with override_settings(TOOLKIT=toolkit):
        yield


def user(pk: int) -> User:
    return User(pk=pk, username=f"u{pk}")


#: Users on each side of the 50 % rollout.
INSIDE = next(pk for pk in range(1, 100) if in_rollout("beta", str(pk), 50))
OUTSIDE = next(pk for pk in range(1, 100) if not in_rollout("beta", str(pk), 50))

PAGE = (
    "{% load toolkit_flags %}"
    '{% flag "beta" as on %}{% flag_value "theme" default="none" as theme %}'
    "{% if on %}BETA{% else %}CLASSIC{% endif %}/{{ theme }}"
)


def render(request) -> str:
    return engines["django"].from_string(PAGE).render({}, request)


def test_the_template_tag_uses_the_request_user_and_tenant(flags):
    request = RequestFactory().get("/")
    request.user = user(INSIDE)
    assert render(request) == "BETA/dark"
    request.user = user(OUTSIDE)
    assert render(request) == "CLASSIC/dark"
    request.user = AnonymousUser()
    assert render(request) == "CLASSIC/dark"
    request.tenant = "acme"
    assert render(request) == "BETA/light"


def test_the_template_tag_without_a_request(flags):
    assert engines["django"].from_string(PAGE).render({}) == "CLASSIC/dark"


class BetaView(APIView):
    permission_classes = [require_flag("beta")]

    def get(self, request):
        return Response({"theme": flag_value(request, "theme")})


class ReportView(APIView):
    permission_classes = [FlagRequired]
    required_flags = ("beta",)

    def get(self, request):
        return Response({"beta": flag_enabled(request, "beta")})


def call(view, pk: int | None, tenant: str | None = None):
    request = APIRequestFactory().get("/beta/")
    if pk is not None:
        force_authenticate(request, user=user(pk))
    if tenant is not None:
        request.tenant = tenant
    return view.as_view()(request)


def test_the_permission_class_through_a_real_apiview_request(flags):
    allowed = call(BetaView, INSIDE)
    assert allowed.status_code == 200 and allowed.data == {"theme": "dark"}
    assert call(BetaView, OUTSIDE).status_code == 403
    assert call(BetaView, None).status_code in (401, 403)
    tenant = call(BetaView, OUTSIDE, tenant="acme")
    assert tenant.status_code == 200 and tenant.data == {"theme": "light"}


def test_required_flags_on_the_view(flags):
    response = call(ReportView, INSIDE)
    assert response.status_code == 200 and response.data == {"beta": True}
    assert call(ReportView, OUTSIDE).status_code == 403


def test_require_flag_needs_a_name():
    with pytest.raises(ValueError):
        require_flag()
