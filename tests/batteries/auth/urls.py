"""Views of the auth HTTP tests: DRF views and plain Django views behind bearer auth."""

from __future__ import annotations

from django.http import JsonResponse
from django.urls import path
from rest_framework.response import Response
from rest_framework.views import APIView

from toolkit_batteries.auth.decorators import bearer_required
from toolkit_batteries.auth.drf import BearerAuthentication, BearerRequired


class MeView(APIView):
    authentication_classes = [BearerAuthentication]
    permission_classes = [BearerRequired]

    def get(self, request):
        return Response(
            {"id": request.user.id, "pk": request.user.pk, "roles": list(request.auth.roles)}
        )


class AdminView(MeView):
    required_roles = ("admin",)


@bearer_required
def plain_me(request):
    return JsonResponse({"id": request.user.id, "roles": list(request.auth.roles)})


@bearer_required(roles=("admin",))
def plain_admin(request):
    return JsonResponse({"id": request.user.id})


urlpatterns = [
    path("api/me", MeView.as_view()),
    path("api/admin", AdminView.as_view()),
    path("plain/me", plain_me),
    path("plain/admin", plain_admin),
]
