"""``objstore`` against moto's S3 server with its IAM authentication on.

The suite's shared moto server (``moto_endpoint``) accepts any credentials, so a signing
bug would pass there. Here a separate ``moto_server`` process starts with
``INITIAL_NO_AUTH_ACTION_COUNT=4``: the first four requests (made by the fixture) create an
IAM user with an ``s3:*`` policy and its access key, and from then on every request must be
signed with a key IAM knows, by its secret.

moto answers presigned (query-string) requests with a 500 while authentication is on, so
what a presigned URL grants is checked with botocore's own SigV4 query signer instead: the
test recomputes the signature of the URL the adapter made, with the real secret and the
URL's own timestamp, and compares; a tampered URL does not match and an expired one is past
its ``X-Amz-Date`` + ``X-Amz-Expires``.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import pytest

from tests.ports import accepting, free_port
from tests.support.processes import venv_script

from .conftest import open_storage, unique

REGION = "us-east-1"


class AuthMoto:
    """One ``moto_server`` process with IAM authentication on after four set-up calls."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        moto = venv_script("moto_server", "moto[server] (dev extra)")
        env = {**os.environ, "INITIAL_NO_AUTH_ACTION_COUNT": "4"}
        self.process = subprocess.Popen(
            [moto, "-H", "127.0.0.1", "-p", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
        deadline = time.monotonic() + 60
        while not accepting(self.port):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("moto_server did not start")
            time.sleep(0.05)
        iam = self.client("iam", "bootstrap", "bootstrap")
        iam.create_user(UserName="app")
        policy = iam.create_policy(
            PolicyName="objects",
            PolicyDocument=json.dumps(
                {
                    "Version": "2012-10-17",
                    "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}],
                }
            ),
        )
        iam.attach_user_policy(UserName="app", PolicyArn=policy["Policy"]["Arn"])
        key = iam.create_access_key(UserName="app")["AccessKey"]
        self.access_key, self.secret_key = key["AccessKeyId"], key["SecretAccessKey"]

    def client(self, service: str, access_key: str, secret_key: str) -> Any:
        import boto3
        from botocore.config import Config

        return boto3.client(
            service,
            region_name=REGION,
            endpoint_url=self.url,
            aws_access_key_id=access_key,
            aws_secret_access_key=secret_key,
            config=Config(signature_version="s3v4", retries={"max_attempts": 1}),
        )

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=10)


@pytest.fixture(scope="module")
def auth_moto() -> Iterator[AuthMoto]:
    server = AuthMoto()
    try:
        yield server
    finally:
        server.stop()


def open_objstore(server: AuthMoto, bucket: str, **keys: str) -> tuple[Any, Any]:
    options = {
        "endpoint": server.url,
        "region": REGION,
        "access_key_id": keys.get("access_key_id", server.access_key),
        "secret_access_key": keys.get("secret_access_key", server.secret_key),
        "allow_insecure": True,
        "allow_private": True,
    }
    container, storage = open_storage({"adapter": "objstore", "options": options}, unique("s3a"))
    return container, storage.bucket(bucket)


@pytest.fixture
def bucket(auth_moto: AuthMoto) -> str:
    name = unique("auth")
    auth_moto.client("s3", auth_moto.access_key, auth_moto.secret_key).create_bucket(Bucket=name)
    return name


def test_the_right_key_reads_and_writes(auth_moto, bucket):
    container, storage = open_objstore(auth_moto, bucket)
    try:
        storage.put("notes/a.txt", b"signed and accepted")
        assert storage.get("notes/a.txt") == b"signed and accepted"
        raw = auth_moto.client("s3", auth_moto.access_key, auth_moto.secret_key)
        assert raw.get_object(Bucket=bucket, Key="notes/a.txt")["Body"].read() == (
            b"signed and accepted"
        )
    finally:
        container.close()


@pytest.mark.parametrize(
    ("keys", "code"),
    [
        ({"secret_access_key": "not-the-secret-of-this-key-0123456789"}, "SignatureDoesNotMatch"),
        (
            {"access_key_id": "AKIAUNKNOWNKEY000000", "secret_access_key": "whatever-secret-0123"},
            "InvalidAccessKeyId",
        ),
    ],
    ids=["wrong-secret", "unknown-key"],
)
def test_a_wrong_key_is_refused_and_nothing_is_written(auth_moto, bucket, keys, code):
    from botocore.exceptions import ClientError

    container, storage = open_objstore(auth_moto, bucket, **keys)
    try:
        # As with django-storages, the store's refusal surfaces as botocore's ClientError.
        with pytest.raises(ClientError) as caught:
            storage.put("notes/b.txt", b"must not land")
        assert caught.value.response["Error"]["Code"] == code
        assert keys["secret_access_key"] not in str(caught.value)
        assert auth_moto.secret_key not in str(caught.value)
    finally:
        container.close()
    raw = auth_moto.client("s3", auth_moto.access_key, auth_moto.secret_key)
    assert raw.list_objects_v2(Bucket=bucket).get("KeyCount", 0) == 0


# ------------------------------------------------------------------ presigned URLs


def signature_of(url: str, server: AuthMoto) -> str:
    """Recompute ``url``'s SigV4 query signature with botocore, at the URL's own timestamp."""
    from botocore.auth import S3SigV4QueryAuth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)]
    unsigned = [(k, v) for k, v in query if k != "X-Amz-Signature"]
    fields = dict(query)
    auth = S3SigV4QueryAuth(
        Credentials(server.access_key, server.secret_key),
        "s3",
        REGION,
        expires=int(fields["X-Amz-Expires"]),
    )
    request = AWSRequest(
        method="GET", url=urlunsplit(parts._replace(query=urlencode(unsigned))), headers={}
    )
    request.context["timestamp"] = fields["X-Amz-Date"]
    canonical = auth.canonical_request(request)
    return auth.signature(auth.string_to_sign(request, canonical), request)


def expired(url: str, now: dt.datetime) -> bool:
    fields = dict(parse_qsl(urlsplit(url).query))
    signed_at = dt.datetime.strptime(fields["X-Amz-Date"], "%Y%m%dT%H%M%SZ").replace(tzinfo=dt.UTC)
    return now > signed_at + dt.timedelta(seconds=int(fields["X-Amz-Expires"]))


def test_a_presigned_url_carries_a_signature_botocore_accepts(auth_moto, bucket):
    container, storage = open_objstore(auth_moto, bucket)
    try:
        storage.put("report.pdf", b"%PDF-1.7")
        url = storage.presign("report.pdf", expires=60)
    finally:
        container.close()
    fields = dict(parse_qsl(urlsplit(url).query))
    assert fields["X-Amz-Credential"].startswith(auth_moto.access_key + "/")
    assert fields["X-Amz-Signature"] == signature_of(url, auth_moto)
    assert not expired(url, dt.datetime.now(dt.UTC))
    assert expired(url, dt.datetime.now(dt.UTC) + dt.timedelta(seconds=61))


def test_a_tampered_presigned_url_does_not_verify(auth_moto, bucket):
    container, storage = open_objstore(auth_moto, bucket)
    try:
        url = storage.presign("report.pdf", expires=60)
    finally:
        container.close()
    assert dict(parse_qsl(urlsplit(url).query))["X-Amz-Signature"] == signature_of(url, auth_moto)
    other_object = url.replace("/report.pdf?", "/salaries.pdf?")
    longer = url.replace("X-Amz-Expires=60", "X-Amz-Expires=86400")
    for tampered in (other_object, longer):
        claimed = dict(parse_qsl(urlsplit(tampered).query))["X-Amz-Signature"]
        assert claimed != signature_of(tampered, auth_moto)
