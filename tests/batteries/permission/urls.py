"""Views of the permission HTTP tests: DRF views and plain Django views."""

from __future__ import annotations

from django.contrib import admin
from django.contrib.admin.models import LogEntry
from django.contrib.auth.decorators import permission_required
from django.contrib.auth.mixins import PermissionRequiredMixin
from django.http import Http404, JsonResponse
from django.urls import path
from django.views import View
from rest_framework.authentication import SessionAuthentication
from rest_framework.generics import GenericAPIView
from rest_framework.permissions import DjangoObjectPermissions
from rest_framework.response import Response
from rest_framework.serializers import ModelSerializer
from rest_framework.views import APIView
from rest_framework.viewsets import GenericViewSet, ModelViewSet

from toolkit_batteries.auth.decorators import bearer_required
from toolkit_batteries.auth.drf import BearerAuthentication
from toolkit_batteries.permission.decorators import require_permission
from toolkit_batteries.permission.drf import HasPermission

#: The posts the views serve (id -> post); the tests own the authors.
POSTS: dict[str, dict[str, str]] = {
    "p-alice": {"id": "p-alice", "author_id": "u-alice"},
    "p-bob": {"id": "p-bob", "author_id": "u-bob"},
}


class PostList(APIView):
    authentication_classes = [BearerAuthentication]
    permission_classes = [HasPermission]
    permission_action = {"get": "post.list", "post": "post.create"}

    def get(self, request):
        return Response({"posts": sorted(POSTS)})

    def post(self, request):
        return Response({"created": True}, status=201)


class PostDetail(GenericAPIView):
    authentication_classes = [BearerAuthentication]
    permission_classes = [HasPermission]
    permission_action = {"get": "post.read", "put": "post.edit", "delete": "post.delete"}
    lookup_url_kwarg = "pk"

    def get_object(self):
        obj = POSTS.get(self.kwargs["pk"])
        if obj is None:
            raise Http404
        self.check_object_permissions(self.request, obj)
        return obj

    def get(self, request, pk):
        return Response(self.get_object())

    def put(self, request, pk):
        return Response({"edited": self.get_object()["id"]})

    def delete(self, request, pk):
        self.get_object()
        return Response(status=204)


class PostViewSet(GenericViewSet):
    authentication_classes = [BearerAuthentication]
    permission_classes = [HasPermission]
    permission_action = {"list": "post.list", "retrieve": "post.read", "publish": "post.publish"}

    def get_object(self):
        obj = POSTS.get(self.kwargs["pk"])
        if obj is None:
            raise Http404
        self.check_object_permissions(self.request, obj)
        return obj

    def list(self, request):
        return Response({"posts": sorted(POSTS)})

    def retrieve(self, request, pk):
        return Response(self.get_object())

    def publish(self, request, pk):
        return Response({"published": self.get_object()["id"]})


class Unmapped(PostList):
    permission_action = {"get": "post.list"}


@require_permission("post.list")
def plain_list(request):
    return JsonResponse({"posts": sorted(POSTS), "subject": request.auth.subject})


def load_post(request, pk):
    return POSTS.get(pk)


@require_permission("post.edit", resource=load_post)
def plain_edit(request, pk):
    return JsonResponse({"edited": request.permission_resource["id"]})


@require_permission("post.edit", resource=LogEntry, lookup="entry")
def plain_edit_entry(request, entry):
    return JsonResponse({"edited": request.permission_resource.pk})


@bearer_required
@require_permission("post.list")
def behind_bearer_required(request):
    return JsonResponse({"subject": request.auth.subject})


# -- Django's own permission machinery, answered through PermissionBackend ----------------


class EntrySerializer(ModelSerializer):
    class Meta:
        model = LogEntry
        fields = ["id", "object_repr", "user"]
        read_only_fields = ["user"]


class EntryViewSet(ModelViewSet):
    """DRF's DjangoObjectPermissions: ``admin.change_logentry`` on the entry, and so on."""

    authentication_classes = [BearerAuthentication, SessionAuthentication]
    permission_classes = [DjangoObjectPermissions]
    queryset = LogEntry.objects.order_by("pk")
    serializer_class = EntrySerializer


@permission_required("reports.view", raise_exception=True)
def django_report(request):
    return JsonResponse({"report": "ok"})


class DjangoReportView(PermissionRequiredMixin, View):
    permission_required = "reports.view"
    raise_exception = True

    def get(self, request):
        return JsonResponse({"report": "ok"})


urlpatterns = [
    path("entries", EntryViewSet.as_view({"get": "list"})),
    path(
        "entries/<int:pk>",
        EntryViewSet.as_view({"get": "retrieve", "patch": "partial_update", "delete": "destroy"}),
    ),
    path("django/report", django_report),
    path("django/report-view", DjangoReportView.as_view()),
    path("admin/", admin.site.urls),
    path("api/posts", PostList.as_view()),
    path("api/posts/<str:pk>", PostDetail.as_view()),
    path("api/unmapped", Unmapped.as_view()),
    path("vs/posts", PostViewSet.as_view({"get": "list"})),
    path("vs/posts/<str:pk>", PostViewSet.as_view({"get": "retrieve", "post": "publish"})),
    path("plain/posts", plain_list),
    path("plain/posts/<str:pk>/edit", plain_edit),
    path("plain/entries/<int:entry>/edit", plain_edit_entry),
    path("plain/stacked", behind_bearer_required),
]
