"""The typed access policy: every combination of the rules, then enforcement on each adapter.

The matrix runs each operation with every ``public`` x ``allow`` x ``deny`` x subject
combination against an oracle written from the spec's words (deny wins; ``*`` is any
authenticated subject; ``anonymous`` an unauthenticated caller).
"""

from __future__ import annotations

import itertools

import pytest
from django.core.files.base import ContentFile

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.storage import AccessDeniedError, AccessPolicy, subject_of

from .conftest import fetch, make_buckets, open_storage, storage_block, unique

OPERATIONS = ("read", "write", "update", "delete")
LISTS = ((), ("u1",), ("*",), ("anonymous",), ("u1", "anonymous"))
SUBJECTS = (None, "u1", "u2")


def _matches(entries, subject):
    if subject is None:
        return "anonymous" in entries
    return subject in entries or "*" in entries


def oracle(public, allow, deny, subject):
    if _matches(deny, subject):
        return False
    return public or _matches(allow, subject)


def decoded(policy: dict) -> AccessPolicy:
    options = (
        Config.load({"storage": {"options": {"policy": policy}}}, {})
        .service("storage", "default")
        .options
    )
    return AccessPolicy(options.policy)


MATRIX = list(itertools.product(OPERATIONS, (False, True), LISTS, LISTS, SUBJECTS))


@pytest.mark.parametrize(("operation", "public", "allow", "deny", "subject"), MATRIX)
def test_policy_matrix(operation, public, allow, deny, subject):
    rule = {"public": public, "allow": list(allow), "deny": list(deny)}
    policy = decoded({"photos": {operation: rule}})
    expected = oracle(public, allow, deny, subject)
    assert policy.allows("photos", operation, subject) is expected
    # The other operations of the bucket stay closed (nothing set for them).
    for other in set(OPERATIONS) - {operation}:
        assert policy.allows("photos", other, subject) is False
    # The same rule under Default governs an unlisted bucket.
    fallback = decoded({"Default": {operation: rule}})
    assert fallback.allows("elsewhere", operation, subject) is expected


def test_bucket_entry_replaces_default():
    policy = decoded(
        {"Default": {"read": {"public": True}}, "private": {"read": {"allow": ["u1"]}}}
    )
    assert policy.allows("anything", "read", None)
    assert not policy.allows("private", "read", None)
    assert policy.allows("private", "read", "u1")


def test_unlisted_bucket_without_default_is_closed():
    policy = decoded({"photos": {"read": {"public": True}}})
    for operation in OPERATIONS:
        for subject in SUBJECTS:
            assert not policy.allows("other", operation, subject)


def test_legacy_mode_refuses_every_subject():
    policy = AccessPolicy({})
    assert policy.legacy
    for operation, subject in itertools.product(OPERATIONS, SUBJECTS):
        assert not policy.allows("b", operation, subject)
    with pytest.raises(AccessDeniedError):
        policy.check("b", "read", "u1")


def test_unknown_version_refused():
    with pytest.raises(InvalidOptionsError) as caught:
        decoded({"photos": {"version": "9", "read": {"public": True}}})
    assert "policy.photos.version" in str(caught.value)


def test_subject_of():
    class User:
        def __init__(self, pk, authenticated):
            self.pk, self.is_authenticated = pk, authenticated

    class Request:
        def __init__(self, user):
            self.user = user

    assert subject_of(None) is None and subject_of("") is None
    assert subject_of("u7") == "u7"
    assert subject_of(User(7, True)) == "7"
    assert subject_of(User(None, False)) is None
    assert subject_of(Request(User(9, True))) == "9"
    assert subject_of(Request(User(None, False))) is None


POLICY = {
    "read": {"allow": ["*"], "deny": ["banned"]},
    "write": {"allow": ["writer", "owner"]},
    "update": {"allow": ["owner"]},
    "delete": {"allow": ["owner"], "deny": ["writer"]},
}


@pytest.fixture(params=("local", "objstore", "objstore_b"))
def governed(request, tmp_path, settings):
    instance = unique()
    (bucket,) = make_buckets(request.param, request, 1)
    block = storage_block(
        request.param,
        request=request,
        tmp_path=tmp_path,
        instance=instance,
        policy={bucket: POLICY},
    )
    settings.TOOLKIT = {"storage": {instance: block}}
    container, storage = open_storage(block, instance)
    try:
        yield storage.bucket(bucket)
    finally:
        container.close()


class TestEnforcedOnEveryAdapter:
    def test_write_update_read_delete(self, governed):
        writer, owner = governed.as_subject("writer"), governed.as_subject("owner")
        anonymous, banned = governed.as_subject(None), governed.as_subject("banned")
        writer.put("new.txt", b"1")  # write: new object
        with pytest.raises(AccessDeniedError):
            writer.put("new.txt", b"2")  # update: writer may not overwrite
        owner.put("new.txt", b"3")
        assert writer.get("new.txt") == b"3"  # read: any authenticated subject
        with pytest.raises(AccessDeniedError):
            banned.get("new.txt")  # deny wins over "*"
        with pytest.raises(AccessDeniedError):
            anonymous.get("new.txt")
        with pytest.raises(AccessDeniedError):
            anonymous.presign("new.txt")
        with pytest.raises(AccessDeniedError):
            banned.save("other.txt", ContentFile(b"x"))  # Django's save is a write
        with pytest.raises(AccessDeniedError):
            writer.delete("new.txt")
        owner.delete("new.txt")
        assert not governed.exists("new.txt")

    def test_trusted_view_is_not_checked(self, governed):
        governed.put("server.txt", b"server")
        assert governed.get("server.txt") == b"server"
        governed.delete("server.txt")


class TestLocalView:
    """The local adapter's view applies the policy to unsigned requests."""

    def open(self, request, tmp_path, settings, policy):
        instance = unique()
        block = storage_block(
            "local", request=request, tmp_path=tmp_path, instance=instance, policy=policy
        )
        settings.TOOLKIT = {"storage": {instance: block}}
        return open_storage(block, instance)

    def test_public_and_private_reads(self, request, tmp_path, settings):
        container, storage = self.open(
            request,
            tmp_path,
            settings,
            {"pub": {"read": {"public": True}}, "priv": {"read": {"allow": ["*"]}}},
        )
        storage.bucket("pub").put("a.txt", b"public")
        storage.bucket("priv").put("a.txt", b"private")
        link = storage.bucket("pub").url("a.txt")
        assert "s=" not in link  # an unsigned public link
        assert fetch(link) == (200, b"public")
        private = storage.bucket("priv").url("a.txt")
        assert "s=" in private and fetch(private) == (200, b"private")
        unsigned = private.split("?")[0]
        assert fetch(unsigned)[0] == 403  # anonymous, not public
        assert fetch(unsigned + "?e=60&t=1&s=forged")[0] == 403
        assert fetch(link.replace("a.txt", "missing.txt"))[0] == 404
        container.close()

    def test_public_write_and_legacy(self, request, tmp_path, settings):
        container, storage = self.open(
            request, tmp_path, settings, {"drop": {"write": {"public": True}}}
        )
        base = storage.bucket("drop").url_name("in.txt")
        url = f"{storage._url_base()}/{base}"
        assert fetch(url, method="PUT", data=b"anon")[0] == 201
        assert storage.bucket("drop").get("in.txt") == b"anon"
        assert fetch(url, method="PUT", data=b"again")[0] == 403  # update is not public
        assert fetch(url, method="DELETE")[0] == 403
        container.close()
        container, legacy = self.open(request, tmp_path, settings, {})
        legacy.bucket("any").put("x.txt", b"x")
        plain = f"{legacy._url_base()}/any/x.txt"
        assert fetch(plain)[0] == 403  # legacy private mode: unsigned is refused
        assert fetch(legacy.bucket("any").url("x.txt")) == (200, b"x")
        assert fetch(f"{legacy._url_base()}/..%2Fescape")[0] in (400, 404)
        other = legacy._url_base().rsplit("/", 1)[0] + "/nosuchinstance/any/x.txt"
        assert fetch(other)[0] == 404
        container.close()


@pytest.mark.parametrize("variant", ["local", "objstore"])
def test_write_only_drop_box(request, tmp_path, settings, variant):
    """A subject allowed to write but not to read can still upload (Django's save too)."""
    instance = unique()
    (bucket,) = make_buckets(variant, request, 1)
    block = storage_block(
        variant,
        request=request,
        tmp_path=tmp_path,
        instance=instance,
        policy={bucket: {"write": {"allow": ["*"]}}},
    )
    settings.TOOLKIT = {"storage": {instance: block}}
    container, storage = open_storage(block, instance)
    drop = storage.bucket(bucket).as_subject("u1")
    first = drop.save("in.txt", ContentFile(b"1"))
    second = drop.save("in.txt", ContentFile(b"2"))
    assert first != second
    with pytest.raises(AccessDeniedError):
        drop.get(first)
    with pytest.raises(AccessDeniedError):
        drop.put(first, b"overwrite")  # update is not allowed
    assert storage.bucket(bucket).get(second) == b"2"
    container.close()


def test_local_root_keys_take_their_bucket_from_the_first_segment(tmp_path):
    from toolkit_batteries.storage.adapters.local import LocalStorage

    storage = LocalStorage(
        instance="root",
        root=str(tmp_path),
        policy={"Default": {"read": {"allow": ["*"]}}, "pics": {"read": {"deny": ["*"]}}},
    )
    storage.put("pics/a.png", b"a")
    storage.put("top.txt", b"t")
    user = storage.as_subject("u1")
    assert user.policy_bucket("pics/a.png") == "pics" and user.policy_bucket("top.txt") == ""
    with pytest.raises(AccessDeniedError):
        user.get("pics/a.png")
    assert user.get("top.txt") == b"t"  # Default governs keys in no bucket
