"""URLs of the test project (none yet)."""

urlpatterns: list = []
