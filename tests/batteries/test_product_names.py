"""Provider adapters are named after what they talk to; the spec's neutral names still work.

A setting written with the neutral name (``cdn_a``) and one written with the product name
(``cloudflare``) must give the same adapter class, whose module and class carry the
product's name (``cdn/adapters/cloudflare.py: CloudflareCDN``). Where an adapter opens
without a server, both settings are opened through a container; the others are resolved
through the battery's adapter table (their own suites open them on real or local servers).
"""

from __future__ import annotations

from typing import Any

import pytest

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.doctor import Row
from toolkit_batteries.core.loading import resolve_adapter

#: (service, neutral name, product names, module, class) of every renamed provider adapter.
RENAMED = [
    ("cdn", "cdn_a", ("cloudflare",), "cdn.adapters.cloudflare", "CloudflareCDN"),
    ("geo", "geo_a", ("google",), "geo.adapters.google", "GoogleGeo"),
    ("geo", "geo_b", ("osm", "nominatim"), "geo.adapters.nominatim", "NominatimGeo"),
    ("secrets", "secretstore", ("vault", "openbao"), "secrets.adapters.vault", "VaultSecrets"),
    ("document", "remote", ("gotenberg",), "document.adapters.gotenberg", "GotenbergDocument"),
    ("storage", "objstore", ("s3",), "storage.adapters.s3", "S3Storage"),
    ("storage", "objstore_b", ("r2",), "storage.adapters.r2", "R2Storage"),
    ("media", "objstore", ("s3",), "media.adapters.s3", "S3Media"),
    (
        "search",
        "searchengine",
        ("meilisearch",),
        "search.adapters.meilisearch",
        "MeilisearchSearch",
    ),
    ("vectorstore", "vecengine", ("qdrant",), "vectorstore.adapters.qdrant", "QdrantVectorStore"),
]


@pytest.mark.parametrize(("service", "neutral", "products", "module", "name"), RENAMED)
def test_the_neutral_and_the_product_name_resolve_to_the_product_named_class(
    service: str, neutral: str, products: tuple[str, ...], module: str, name: str
) -> None:
    canonical, cls = resolve_adapter(service, neutral)
    assert canonical == neutral
    assert (cls.__module__, cls.__name__) == (f"toolkit_batteries.{module}", name)
    for product in products:
        # Any case, as every adapter name; the canonical name stays the neutral one.
        assert resolve_adapter(service, product.upper()) == (neutral, cls)


#: Blocks of adapters that open without reaching their server (nothing is sent at open).
OPENS_OFFLINE: list[tuple[str, str, str, dict[str, Any]]] = [
    ("cdn", "cdn_a", "cloudflare", {"api_token": "t0ken", "zone_id": "abc123"}),
    ("geo", "geo_a", "google", {"api_key": "k3y"}),
    ("geo", "geo_b", "nominatim", {"user_agent": "toolkit-tests/1 (ops@example.com)"}),
    ("document", "remote", "gotenberg", {"endpoint": "https://gotenberg.example.com"}),
]


@pytest.mark.parametrize(("service", "neutral", "product", "options"), OPENS_OFFLINE)
def test_a_setting_with_either_name_opens_the_same_adapter(
    service: str, neutral: str, product: str, options: dict[str, Any]
) -> None:
    opened: list[type] = []
    for adapter in (neutral, product):
        container = Container(Config.load({service: {"adapter": adapter, "options": options}}, {}))
        with container:
            obj = getattr(container, service)()
            opened.append(type(obj))
            assert obj.adapter_name == neutral  # errors and checks keep naming the neutral one
    assert opened[0] is opened[1]
    assert opened[0].__module__.endswith("." + product)


def test_the_storage_setting_with_either_name_derives_the_same_django_backend() -> None:
    from toolkit_batteries.storage.settings import django_storage_settings

    backends = {
        django_storage_settings({"storage": {"adapter": adapter, "options": options}})["default"][
            "BACKEND"
        ]
        for adapter, options in (
            ("objstore", {"region": "eu-west-1"}),
            ("s3", {"region": "eu-west-1"}),
        )
    }
    assert backends == {"toolkit_batteries.storage.adapters.s3.S3Storage"}


def test_the_first_class_paths_of_the_storage_adapters_still_load_the_same_classes() -> None:
    # A STORAGES entry written by hand, or a migration that serialized a FileField's
    # storage, names the first paths; they must keep loading the adapter.
    from toolkit_batteries.storage.adapters.objstore import ObjStoreStorage
    from toolkit_batteries.storage.adapters.objstore_b import ObjStoreBStorage
    from toolkit_batteries.storage.adapters.r2 import R2Storage
    from toolkit_batteries.storage.adapters.s3 import S3Storage

    assert ObjStoreStorage is S3Storage and ObjStoreBStorage is R2Storage


@pytest.mark.parametrize(
    ("service", "adapter", "shown"),
    [
        ("cdn", "cdn_a", "cloudflare"),
        ("geo", "geo_a", "google"),
        ("secrets", "secretstore", "vault"),
        ("storage", "objstore_b", "r2"),
        ("search", "sqlserver", "postgres"),
        ("search", "searchengine", "meilisearch"),
        ("vectorstore", "vecengine", "qdrant"),
        ("cdn", "noop", "noop"),
        # One neutral name, two batteries: each row shows its own battery's product.
        ("document", "remote", "gotenberg"),
        ("i18n", "remote", "remote"),
    ],
)
def test_doctor_shows_the_product_of_the_row_s_own_battery(
    service: str, adapter: str, shown: str
) -> None:
    row = Row(service, "default", adapter, ok=True)
    assert row.product == shown
    data = row.as_data()
    assert data["adapter"] == adapter  # --json keeps the canonical name
    assert data.get("product", adapter) == shown


def test_doctor_prints_product_names_in_one_aligned_column() -> None:
    from toolkit_batteries.core.doctor import Setup, check

    toolkit = {
        "cache": {"adapter": "memory"},
        # Reached on a closed local port: its row fails fast, and still shows its product.
        "cdn": {
            "adapter": "cdn_a",
            "options": {
                "api_token": "t0ken",
                "zone_id": "abc123",
                "base_url": "http://127.0.0.1:9/client/v4",
                "allow_insecure": True,
                "allow_private": True,
            },
        },
    }
    container = Container(Config.load(toolkit, {}))
    lines: list[str] = []
    with container:
        setup = Setup(container, {"cache", "cdn"}, set(), False, "test")
        rows, _ = check(setup, None, 5.0, lines.append)
    by_service = {row.service: row for row in rows}
    assert (by_service["cdn"].adapter, by_service["cdn"].product) == ("cdn_a", "cloudflare")
    printed = {line.split()[0]: line for line in lines if line.split()[:1] in (["cdn"], ["cache"])}
    assert "cloudflare" in printed["cdn"] and "cdn_a" not in printed["cdn"]
    # The mark column starts at the same place on every row, however long the product.
    marks = {line.index("✔") if "✔" in line else line.index("✘") for line in printed.values()}
    assert len(marks) == 1
