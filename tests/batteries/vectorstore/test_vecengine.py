"""What only the ``vecengine`` adapter has: where the engine runs and how its URL is checked."""

from __future__ import annotations

import logging

import pytest

from tests.ports import free_port
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import InvalidOptionsError, ServiceUnavailableError
from toolkit_batteries.vectorstore import DimensionMismatchError

from .conftest import DIMENSION, random_vectors

API_KEY = "qk-very-secret-4711"


def container_for(**options) -> Container:
    options.setdefault("dimension", DIMENSION)
    return Container(Config.load({"vectorstore": {"adapter": "qdrant", "options": options}}, {}))


def test_a_file_url_persists_across_reopen(tmp_path):
    url = (tmp_path / "engine").as_uri()
    container = container_for(url=url)
    container.vectorstore().upsert([("a", random_vectors(1)[0], {"k": "v"})], namespace="docs")
    container.close()
    container = container_for(url=url)
    try:
        store = container.vectorstore()
        assert store.count(namespace="docs") == 1
        assert store.get(["a"], namespace="docs")[0].metadata == {"k": "v"}
    finally:
        container.close()


def test_a_collection_of_another_dimension_is_refused(tmp_path):
    url = (tmp_path / "engine").as_uri()
    container = container_for(url=url)
    container.vectorstore().upsert([("a", random_vectors(1)[0])])
    container.close()
    container = container_for(url=url, dimension=4)
    try:
        with pytest.raises(DimensionMismatchError, match="has 8 dimensions"):
            container.vectorstore().upsert([("b", [1.0, 0.0, 0.0, 0.0])])
    finally:
        container.close()


def test_an_http_url_needs_allow_insecure():
    container = container_for(url="http://127.0.0.1:6333", api_key=API_KEY)
    try:
        with pytest.raises(InvalidOptionsError, match=r'"url".*allow_insecure') as info:
            container.vectorstore()
        assert API_KEY not in str(info.value)
    finally:
        container.close()


@pytest.mark.parametrize(
    "url", ["https://user:pw@vectors.example:6333", "https://vectors.example?x=1", "file:relative"]
)
def test_urls_with_credentials_queries_or_relative_paths_are_refused(url):
    container = container_for(url=url)
    try:
        with pytest.raises(InvalidOptionsError, match='"url"') as info:
            container.vectorstore()
        assert "pw" not in str(info.value)
    finally:
        container.close()


def test_a_server_that_is_down_is_unavailable_and_the_key_never_shows(caplog):
    port = free_port()
    caplog.set_level(logging.DEBUG)
    container = container_for(url=f"http://127.0.0.1:{port}", api_key=API_KEY, allow_insecure=True)
    try:
        store = container.vectorstore()
        assert API_KEY not in repr(store)
        with pytest.raises(ServiceUnavailableError) as info:
            store.ping()
        with pytest.raises(ServiceUnavailableError):
            store.upsert([("a", random_vectors(1)[0])])
        message = str(info.value)
        assert "vectorstore.default" in message and str(port) not in message
    finally:
        container.close()
    assert "allow_insecure" in caplog.text
    assert API_KEY not in caplog.text


def test_a_closed_store_refuses_calls():
    container = container_for()
    store = container.vectorstore()
    store.upsert([("a", random_vectors(1)[0])])
    container.close()
    with pytest.raises(ServiceUnavailableError, match="closed"):
        store.count()
