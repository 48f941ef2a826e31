"""URLs of the test project: the health endpoints every project wires."""

from django.urls import path

from toolkit_batteries.http.health import healthz, readyz

urlpatterns: list = [path("healthz", healthz), path("readyz", readyz)]
