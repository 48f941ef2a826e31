"""URLs of the codegen test project: the generated routes and the served OpenAPI document."""

from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

urlpatterns = [
    path("api/schema/", SpectacularAPIView.as_view(urlconf="api.generated.urls"), name="schema"),
    path("", include("api.generated.urls")),
]
