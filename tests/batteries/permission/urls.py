"""Views of the permission HTTP tests: DRF views and plain Django views."""

from __future__ import annotations

from django.contrib.admin.models import LogEntry
from django.http import Http404, JsonResponse
from django.urls import path
from rest_framework.generics import GenericAPIView
from rest_framework.response import Response
from rest_framework.views import APIView
from rest_framework.viewsets import GenericViewSet

from toolkit_batteries.auth.decorators import bearer_required
from toolkit_batteries.auth.drf import BearerAuthentication
from toolkit_batteries.permission.decorators import permission_required
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


@permission_required("post.list")
def plain_list(request):
    return JsonResponse({"posts": sorted(POSTS), "subject": request.auth.subject})


def load_post(request, pk):
    return POSTS.get(pk)


@permission_required("post.edit", resource=load_post)
def plain_edit(request, pk):
    return JsonResponse({"edited": request.permission_resource["id"]})


@permission_required("post.edit", resource=LogEntry, lookup="entry")
def plain_edit_entry(request, entry):
    return JsonResponse({"edited": request.permission_resource.pk})


@bearer_required
@permission_required("post.list")
def behind_bearer_required(request):
    return JsonResponse({"subject": request.auth.subject})


urlpatterns = [
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
