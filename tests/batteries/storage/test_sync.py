"""policy_sync / sync_fail against the object store (moto's S3 server), and on local."""

from __future__ import annotations

import json
import logging

import pytest

from toolkit_batteries.storage import PolicySyncError

from .conftest import fetch, make_buckets, open_storage, raw_client, storage_block, unique


def public_read(bucket: str) -> dict:
    return {bucket: {"read": {"public": True}}}


def test_auto_pushes_public_read_and_removes_it(request, tmp_path, moto_endpoint):
    public, private = make_buckets("objstore", request, 2)
    client = raw_client(moto_endpoint)
    client.put_bucket_policy(
        Bucket=private,
        Policy=json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [
                    {
                        "Effect": "Allow",
                        "Principal": "*",
                        "Action": ["s3:GetObject"],
                        "Resource": [f"arn:aws:s3:::{private}/*"],
                    }
                ],
            }
        ),
    )
    client.put_object(Bucket=public, Key="open.txt", Body=b"open")
    unsigned = f"{moto_endpoint}/{public}/open.txt"
    assert fetch(unsigned)[0] == 403  # private before the sync
    policy = {**public_read(public), private: {"read": {"allow": ["*"]}}}
    block = storage_block(
        "objstore",
        request=request,
        tmp_path=tmp_path,
        instance=unique(),
        policy=policy,
        policy_sync="auto",
    )
    container, storage = open_storage(block, unique())
    document = json.loads(client.get_bucket_policy(Bucket=public)["Policy"])
    statement = document["Statement"][0]
    assert statement["Principal"] == "*" and "s3:GetObject" in statement["Action"]
    assert "s3:PutObject" not in statement["Action"]
    assert fetch(unsigned) == (200, b"open")  # the store now serves it unsigned
    with pytest.raises(client.exceptions.ClientError):
        client.get_bucket_policy(Bucket=private)  # nothing public: the policy is removed
    link = storage.bucket(public).url("open.txt")
    assert "X-Amz-Signature" not in link and fetch(link) == (200, b"open")
    container.close()


def test_manual_pushes_nothing_until_asked(request, tmp_path, moto_endpoint):
    (bucket,) = make_buckets("objstore", request, 1)
    client = raw_client(moto_endpoint)
    block = storage_block(
        "objstore",
        request=request,
        tmp_path=tmp_path,
        instance=unique(),
        policy=public_read(bucket),
    )
    container, storage = open_storage(block, unique())
    with pytest.raises(client.exceptions.ClientError):
        client.get_bucket_policy(Bucket=bucket)
    outcomes = storage.sync_policy()
    assert [(o.bucket, o.ok) for o in outcomes] == [(bucket, True)]
    assert client.get_bucket_policy(Bucket=bucket)["Policy"]
    container.close()


def unpushable_block(variant: str, request, tmp_path, sync_fail: str) -> dict:
    """Return a block whose policy names a bucket that does not exist (the push fails)."""
    return storage_block(
        variant,
        request=request,
        tmp_path=tmp_path,
        instance=unique(),
        policy=public_read("missing-" + unique()),
        policy_sync="auto",
        sync_fail=sync_fail,
    )


def test_sync_fail_warn_logs_and_opens(request, tmp_path, caplog):
    block = unpushable_block("objstore", request, tmp_path, sync_fail="warn")
    with caplog.at_level(logging.WARNING, logger="toolkit.storage"):
        container, storage = open_storage(block, unique())
    assert storage is not None
    assert any("could not be pushed" in r.getMessage() for r in caplog.records)
    container.close()


@pytest.mark.parametrize("variant", ["objstore", "objstore_b"])
def test_sync_fail_require_fails_the_open(request, tmp_path, variant):
    block = unpushable_block(variant, request, tmp_path, sync_fail="require")
    with pytest.raises(PolicySyncError):
        open_storage(block, unique())


def test_objstore_b_refuses_public_but_checks_private(request, tmp_path):
    first, second = make_buckets("objstore_b", request, 2)
    block = storage_block(
        "objstore_b",
        request=request,
        tmp_path=tmp_path,
        instance=unique(),
        policy={first: {"read": {"public": True}}, second: {"read": {"allow": ["*"]}}},
    )
    container, storage = open_storage(block, unique())
    outcomes = {o.bucket: o for o in storage.sync_policy()}
    assert not outcomes[first].ok and outcomes[first].reason == "PolicySyncError"
    assert outcomes[second].ok
    container.close()


def test_local_sync_is_enforced_by_the_view(request, tmp_path):
    block = storage_block(
        "local",
        request=request,
        tmp_path=tmp_path,
        instance=unique(),
        policy=public_read("pics"),
        policy_sync="auto",
        sync_fail="require",
    )
    container, storage = open_storage(block, unique())
    assert [(o.bucket, o.ok) for o in storage.sync_policy()] == [("pics", True)]
    container.close()


def test_manage_command_syncs_by_hand(request, tmp_path, settings, moto_endpoint):
    import io

    from django.core.management import CommandError, call_command

    (bucket,) = make_buckets("objstore", request, 1)
    missing = "missing-" + unique()
    instance = unique()
    block = storage_block(
        "objstore",
        request=request,
        tmp_path=tmp_path,
        instance=instance,
        policy={**public_read(bucket), **public_read(missing)},
    )
    settings.TOOLKIT = {"storage": {instance: block}}
    out = io.StringIO()
    with pytest.raises(CommandError, match="1 bucket policy sync"):
        call_command("storage_sync_policy", instance, stdout=out)
    assert f"bucket {bucket}: synced" in out.getvalue()
    assert f"bucket {missing}: FAILED" in out.getvalue()
    assert raw_client(moto_endpoint).get_bucket_policy(Bucket=bucket)["Policy"]


def test_ping(opened):
    opened.storage.ping()
    opened.storage.bucket(opened.buckets[0]).ping()
