"""The CDN stand-in refuses what the purge API refuses, so a malformed purge fails its test."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from .server import PurgeServer

TOKEN, ZONE = "cdn-strict-token-0123456789", "0123456789abcdef0123456789abcdef"


def purge(server: PurgeServer, body: bytes, content_type: str = "application/json") -> int:
    request = urllib.request.Request(
        f"{server.url}/zones/{ZONE}/purge_cache",  # url ends with the API root
        data=body,
        method="POST",
        headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": content_type},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status
    except urllib.error.HTTPError as refused:
        return refused.code


@pytest.mark.parametrize(
    "body",
    [
        {"purge_everything": False},
        {"purge_everything": "yes"},
        {"files": []},
        {"files": [""]},
        {"files": ["https://a.example/x"] * 31},
        {"files": ["https://a.example/x"], "tags": ["t"]},
        {},
    ],
    ids=[
        "everything-false",
        "everything-string",
        "no-files",
        "empty-url",
        "31-files",
        "two-kinds",
        "empty",
    ],
)
def test_malformed_purges_are_refused(body):
    with PurgeServer(TOKEN, ZONE) as server:
        assert purge(server, json.dumps(body).encode()) == 400


def test_a_well_formed_purge_passes_and_form_encoding_does_not():
    with PurgeServer(TOKEN, ZONE) as server:
        good = json.dumps({"purge_everything": True}).encode()
        assert purge(server, good) == 200
        assert purge(server, good, "application/x-www-form-urlencoded") == 400
