"""The ``vecengine`` adapter against a Qdrant server: the wire it sends and what it gets back.

The contract (``test_contract.py``, variant ``vecengine-server``) proves the answers; this
module proves the requests: the key in Qdrant's ``api-key`` header, writes that wait,
collections with the three named vectors, filters on ``metadata.*`` in the form Qdrant
takes; and how refusals surface. The first part checks the stand-in itself refuses what
Qdrant refuses, with Qdrant's error body, so an adapter sending such a request would fail.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Iterator

import httpx
import pytest
from qdrant_client import QdrantClient, models
from qdrant_client.http.exceptions import UnexpectedResponse

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import ServiceUnavailableError
from toolkit_batteries.vectorstore.adapters.qdrant import point_id

from .conftest import DIMENSION, open_quietly, random_vectors, server_block
from .qdrant_server import QdrantServer

KEY = "qk-server-test-5be3a1"
NAME = "toolkit_default__docs"


@pytest.fixture
def server() -> Iterator[QdrantServer]:
    with QdrantServer(KEY) as started:
        yield started  # type: ignore[misc]


@pytest.fixture
def http(server: QdrantServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, headers={"api-key": KEY}, timeout=5) as client:
        yield client


def create(http: httpx.Client, name: str = NAME) -> None:
    vectors = {
        "ip": {"size": DIMENSION, "distance": "Dot"},
        "cosine": {"size": DIMENSION, "distance": "Cosine"},
    }
    assert http.put(f"/collections/{name}", json={"vectors": vectors}).status_code == 200


def direct_client(server: QdrantServer) -> QdrantClient:
    """Return qdrant-client on ``server``, as the adapter builds it (REST, no version probe).

    (Without ``check_compatibility=False`` the client probes ``GET /`` from a thread that
    may outlive the test's server.)
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Api key is used with an insecure connection")
        return QdrantClient(
            url=server.url, api_key=KEY, prefer_grpc=False, check_compatibility=False
        )


def refusal(response: httpx.Response, status: int) -> str:
    """Assert Qdrant's error body at ``status``; return its message."""
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) >= {"status", "time"} and isinstance(body["time"], float)
    return body["status"]["error"]


# ---------------------------------------------------------------------- the stand-in


def test_a_missing_or_wrong_key_is_refused_with_qdrants_plain_text_401(server, http):
    anonymous = httpx.get(f"{server.url}/collections", timeout=5)
    assert anonymous.status_code == 401
    assert anonymous.text == "Must provide an API key or an Authorization bearer token"
    wrong = httpx.get(f"{server.url}/collections", headers={"api-key": "nope"}, timeout=5)
    assert (wrong.status_code, wrong.text) == (401, "Invalid API key or JWT")
    bearer = httpx.get(
        f"{server.url}/collections", headers={"Authorization": f"Bearer {KEY}"}, timeout=5
    )
    assert bearer.status_code == 200 and bearer.json()["result"] == {"collections": []}
    assert httpx.get(f"{server.url}/", timeout=5).status_code == 200  # whitelisted


def test_bodies_that_are_not_json_are_refused(server, http):
    create(http)
    url = f"/collections/{NAME}/points/count"
    plain = http.post(url, content=b'{"exact": true}', headers={"Content-Type": "text/plain"})
    assert refusal(plain, 400) == "Content type error"
    broken = http.post(url, content=b"{exact", headers={"Content-Type": "application/json"})
    assert refusal(broken, 400).startswith("Format error in JSON body:")
    nan = http.put(
        f"/collections/{NAME}/points?wait=true",
        content=b'{"points": [{"id": 1, "vector": {"ip": [NaN, 0, 0, 0, 0, 0, 0, 0]}}]}',
        headers={"Content-Type": "application/json"},
    )
    assert refusal(nan, 400).startswith("Format error in JSON body:")
    server.max_body = 64
    big = http.post(url, json={"exact": True, "filter": {"must": [{"key": "x" * 80}]}})
    assert "is larger than allowed" in refusal(big, 400)


def test_unknown_fields_wrong_types_and_bad_ids_are_format_errors(http):
    create(http)
    points = f"/collections/{NAME}/points"
    unknown = http.post(f"{points}/query", json={"query": [0.0] * DIMENSION, "top": 3})
    assert "unknown field `top`" in refusal(unknown, 400)
    float_match = http.post(
        f"{points}/count",
        json={"filter": {"must": [{"key": "metadata.score", "match": {"value": 2.5}}]}},
    )
    assert "untagged enum Match" in refusal(float_match, 400)
    bad_id = http.put(
        f"{points}?wait=true", json={"points": [{"id": "doc-1", "vector": {"ip": [0.0] * 8}}]}
    )
    assert "not a valid point ID" in refusal(bad_id, 400)
    no_vector = http.put(f"{points}?wait=true", json={"points": [{"id": 1}]})
    assert "missing field `vector`" in refusal(no_vector, 400)
    assert http.post(f"{points}/count", json={"exact": True}).json()["result"] == {"count": 0}


def test_vector_names_dimensions_and_ranges_are_checked(http):
    create(http)
    points = f"/collections/{NAME}/points"
    short = http.put(f"{points}?wait=true", json={"points": [{"id": 1, "vector": {"ip": [1.0]}}]})
    assert refusal(short, 400) == "Wrong input: Vector dimension error: expected dim: 8, got 1"
    unnamed = http.put(f"{points}?wait=true", json={"points": [{"id": 1, "vector": [0.0] * 8}]})
    assert refusal(unnamed, 400) == "Wrong input: Not existing vector name error: "
    using = http.post(f"{points}/query", json={"query": [1.0] * 8, "using": "l2"})
    assert refusal(using, 400) == "Wrong input: Not existing vector name error: l2"
    zero_limit = http.post(f"{points}/query", json={"query": [1.0] * 8, "using": "ip", "limit": 0})
    assert refusal(zero_limit, 422).startswith("Validation error in JSON body: [limit")
    tiny = http.put("/collections/tiny", json={"vectors": {"size": 0, "distance": "Dot"}})
    assert refusal(tiny, 422).startswith("Validation error in JSON body: [vectors.size")
    cosh = http.put("/collections/odd", json={"vectors": {"size": 4, "distance": "Cosh"}})
    assert "unknown variant `Cosh`" in refusal(cosh, 400)


def test_missing_and_existing_collections(http):
    missing = http.post("/collections/nowhere/points/count", json={"exact": True})
    assert refusal(missing, 404) == "Not found: Collection `nowhere` doesn't exist!"
    assert refusal(http.get("/collections/nowhere"), 404).startswith("Not found")
    assert http.get("/collections/nowhere/exists").json()["result"] == {"exists": False}
    create(http)
    again = http.put(f"/collections/{NAME}", json={"vectors": {"size": 8, "distance": "Dot"}})
    assert refusal(again, 409) == f"Wrong input: Collection `{NAME}` already exists!"


def test_a_write_without_wait_is_acknowledged_and_applied_later(server):
    client = direct_client(server)
    try:
        client.create_collection(
            NAME, vectors_config={"ip": models.VectorParams(size=2, distance=models.Distance.DOT)}
        )
        point = models.PointStruct(id=7, vector={"ip": [1.0, 0.0]}, payload={"k": "v"})
        answer = client.upsert(NAME, points=[point], wait=False)
        assert answer.status == models.UpdateStatus.ACKNOWLEDGED
        assert client.count(NAME).count == 0  # not applied yet: a reader must wait
        assert server.settle() == 1
        assert client.count(NAME).count == 1
        with pytest.raises(UnexpectedResponse) as info:  # the client reads Qdrant's body
            client.get_collection("nowhere")
        assert info.value.status_code == 404
        assert info.value.structured()["status"]["error"].startswith("Not found")
    finally:
        client.close()


def test_cosine_vectors_are_stored_normalized_and_euclid_scores_are_distances(server):
    client = direct_client(server)
    try:
        config = {
            "c": models.VectorParams(size=2, distance=models.Distance.COSINE),
            "e": models.VectorParams(size=2, distance=models.Distance.EUCLID),
        }
        client.create_collection(NAME, vectors_config=config)
        client.upsert(
            NAME, points=[models.PointStruct(id=1, vector={"c": [3.0, 4.0], "e": [3.0, 4.0]})]
        )
        (record,) = client.retrieve(NAME, ids=[1], with_vectors=True)
        assert record.vector["c"] == pytest.approx([0.6, 0.8])
        assert record.vector["e"] == [3.0, 4.0]
        (hit,) = client.query_points(NAME, query=[0.0, 0.0], using="e").points
        assert hit.score == pytest.approx(5.0)
    finally:
        client.close()


# ---------------------------------------------------------------------- the adapter


def open_store(server: QdrantServer, **options) -> tuple[Container, object]:
    container = Container(Config.load({"vectorstore": server_block(server, **options)}, {}))
    return container, open_quietly(container)


def test_the_adapter_sends_its_key_and_waits_for_every_write(server):
    container, store = open_store(server)
    try:
        store.upsert([("a", random_vectors(1)[0]), ("b", [0.0] * DIMENSION)], namespace="docs")
        store.delete(["a"], namespace="docs")
    finally:
        container.close()
    received = server.requests()
    assert received and all(r.header("api-key") == KEY for r in received)
    writes = [r for r in received if r.method == "PUT" and r.path.endswith("/points")]
    writes += server.requests("POST", f"/collections/{NAME}/points/delete")
    assert len(writes) == 2 and all(r.query["wait"] == ["true"] for r in writes)
    assert server.pending == []
    (created,) = server.requests("PUT", f"/collections/{NAME}")
    assert created.json()["vectors"] == {
        "cosine": {"size": DIMENSION, "distance": "Cosine"},
        "l2": {"size": DIMENSION, "distance": "Euclid"},
        "ip": {"size": DIMENSION, "distance": "Dot"},
    }
    points = {p["payload"]["id"]: p for p in writes[0].json()["points"]}
    assert points["a"]["id"] == point_id("a")
    assert set(points["a"]["vector"]) == {"cosine", "l2", "ip"}
    assert set(points["b"]["vector"]) == {"l2", "ip"}  # a zero vector has no direction


def test_filters_reach_qdrant_as_match_for_exact_values_and_range_for_floats(server):
    container, store = open_store(server)
    try:
        store.upsert([("a", random_vectors(1)[0], {"lang": "en", "score": 0.5, "n": 3})])
        found = store.query(
            random_vectors(1, seed=3)[0], k=3, filter={"lang": "en", "score": 0.5, "n": 3}
        )
        assert [m.id for m in found] == ["a"]
    finally:
        container.close()
    (query,) = server.requests("POST", "/collections/toolkit_default__default/points/query")
    assert query.json()["filter"]["must"] == [
        {"key": "metadata.lang", "match": {"value": "en"}},
        {"key": "metadata.score", "range": {"gte": 0.5, "lte": 0.5}},
        {"key": "metadata.n", "match": {"value": 3}},
    ]
    assert query.json()["using"] == "cosine" and query.json()["limit"] == 3


def test_dropping_a_namespace_deletes_its_collection(server):
    container, store = open_store(server)
    try:
        store.upsert([("a", random_vectors(1)[0])], namespace="docs")
        assert NAME in server.collections
        assert store.drop_namespace("docs") == 1
        assert NAME not in server.collections
    finally:
        container.close()


def test_a_rejected_key_is_reported_as_such_and_never_shown(server, caplog):
    caplog.set_level(logging.DEBUG)
    container, store = open_store(server, api_key="qk-wrong-key-77")
    try:
        with pytest.raises(ServiceUnavailableError, match=r"HTTP 401: auth") as info:
            store.count()
        message = str(info.value)
        assert "qk-wrong-key-77" not in message and server.url not in message
    finally:
        container.close()
    assert "qk-wrong-key-77" not in caplog.text


def test_a_server_refusal_names_its_status_not_its_body(server):
    container, store = open_store(server)
    try:
        store.upsert([("a", random_vectors(1)[0])])
        server.failures.append(
            (503, {"status": {"error": "Service internal error: a-b-c"}, "time": 0.0})
        )
        with pytest.raises(ServiceUnavailableError, match=r"HTTP 503: unavailable") as info:
            store.count()
        assert "a-b-c" not in str(info.value)
    finally:
        container.close()


def test_an_api_key_over_plain_http_draws_the_clients_warning(server):
    container = Container(Config.load({"vectorstore": server_block(server)}, {}))
    try:
        with pytest.warns(UserWarning, match="insecure connection"):
            container.vectorstore()
    finally:
        container.close()
