"""Open the crypto battery the real way on every adapter, for the contract.

``local`` needs only its key; ``kms`` gets a real boto3 client on moto's KMS server
(module-scoped), with one symmetric key for encryption and one HMAC key for signatures:
a KMS key does one or the other, so each variant yields an ``encrypting`` and a
``signing`` instance (the same object for ``local``).
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.crypto import register_kms_client, unregister_kms_client

VARIANTS = ("local", "kms")
LOCAL_KEY = "a:" + base64.b64encode(bytes(range(32))).decode()
OTHER_KEY = "b:" + base64.b64encode(bytes(range(32, 64))).decode()
REGION = "eu-west-1"


@dataclass
class Opened:
    variant: str
    encrypting: Any
    signing: Any
    #: An instance of the same adapter under another key (tokens must not cross).
    other: Any


@pytest.fixture(scope="module")
def kms_endpoint(moto_endpoint: str) -> str:
    """Moto's endpoint (one server for the session answers S3 and KMS alike)."""
    return moto_endpoint


@pytest.fixture
def kms_client(kms_endpoint: str) -> Iterator[Any]:
    import boto3

    client = boto3.client(
        "kms",
        region_name=REGION,
        endpoint_url=kms_endpoint,
        aws_access_key_id="AKIDEXAMPLETESTKMS",
        aws_secret_access_key="kms-test-secret-never-shown",
    )
    register_kms_client(client, instance="default")
    yield client
    unregister_kms_client("default")


def new_kms_key(client: Any, spec: str = "SYMMETRIC_DEFAULT") -> str:
    usage = "GENERATE_VERIFY_MAC" if spec.startswith("HMAC") else "ENCRYPT_DECRYPT"
    return client.create_key(KeySpec=spec, KeyUsage=usage)["KeyMetadata"]["Arn"]


def open_crypto(adapter: str, **options: Any) -> Any:
    settings = {"crypto": {"adapter": adapter, "options": options}}
    return Container(Config.load(settings, {})).crypto()


@pytest.fixture(params=VARIANTS)
def opened(request: pytest.FixtureRequest) -> Opened:
    if request.param == "local":
        local = open_crypto("local", key=LOCAL_KEY)
        return Opened("local", local, local, open_crypto("local", key=OTHER_KEY))
    client = request.getfixturevalue("kms_client")
    return Opened(
        "kms",
        open_crypto("kms", key_id=new_kms_key(client)),
        open_crypto("kms", key_id=new_kms_key(client, "HMAC_256")),
        open_crypto("kms", key_id=new_kms_key(client)),
    )
