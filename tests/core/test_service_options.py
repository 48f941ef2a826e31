"""The 37 service options classes against the spec's "Service option reference".

``spec_options.json`` is extracted from the spec's option tables (every ``#### `<service>```
table, the shared kvserver and retry groups expanded where the spec says "Plus the
connection keys", and ``queue_opts.`` expanded with the ``queue`` keys as the spec's prose
says). These tests check that every spec key is declared, that nothing else is, and that
every default, type, range, choice and secret flag matches.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from toolkit_batteries.core.catalog import SERVICES, options_class_of
from toolkit_batteries.core.errors import InvalidOptionsError, UnknownFieldError
from toolkit_batteries.core.groups import (
    KVServerBlock,
    KVServerConnection,
    ResilienceRetryPolicy,
    RetryPolicy,
)
from toolkit_batteries.core.options import (
    ByteSize,
    FieldSpec,
    Where,
    build_options,
    decode_mapping,
    decode_text,
    env_paths,
    field_specs,
    normalize,
    options_to_dict,
    parse_byte_size,
    parse_duration,
)
from toolkit_batteries.core.redaction import REDACTED
from toolkit_batteries.crypto.options import DEVELOPMENT_KEY

SPEC = json.loads((Path(__file__).with_name("spec_options.json")).read_text(encoding="utf-8"))
SPEC_SERVICES: dict[str, dict[str, Any]] = SPEC["services"]
ALL = sorted(SERVICES)

#: Keys declared on purpose although the spec's tables do not list them, with the reason.
#: Why the sqs queue adapter's keys exist beyond the spec.
_SQS = "issue 26 #7: the sqs queue adapter (the adapter checklist's worked example)"

DELIBERATE_EXTRAS: dict[str, dict[str, str]] = {
    "cache": {
        "adapter": "the spec's prose: the adapter field inside cache options is a legacy "
        "duplicate of the outer adapter; old settings still carry it",
        "serializer": "issue 12 #5: values from a shared Redis or SQL table are unpickled; "
        "signed_pickle or json refuses what the cache did not write",
        "signing_key": "issue 12 #5: the HMAC key of signed_pickle (default: from SECRET_KEY)",
    },
    "storage": {
        "allow_insecure": "issue 13 #1 (outbound rules): an http endpoint needs it",
        "allow_private": "issue 13 #1 (outbound rules): an endpoint on a private, loopback "
        "or link-local address (also after DNS resolution) needs it",
    },
    "auth": {
        "oidc.leeway": "issue 12 #7: clock-skew tolerance for ID tokens (0 to 5 minutes)",
    },
    "flag": {
        "remotecfg.endpoint": "issue 17 #2: the REST API base URL (a local server in tests)",
        "remotecfg.ttl": "issue 17 #2: the remote template is cached with a TTL",
        "remotecfg.allow_insecure": "issue 17 (outbound rules): an http endpoint needs it",
        "remotecfg.allow_private": "issue 17 (outbound rules): a private, loopback or "
        "link-local target (also after DNS resolution) needs it",
    },
    "notification": {
        "allow_insecure": "issue 16 (outbound rules): an http endpoint or token URI needs it",
        "allow_private": "issue 16 (outbound rules): a private, loopback or link-local "
        "target (also after DNS resolution) needs it",
        "sms.endpoint": "issue 16 #4: the provider's API base URL (a local server in tests)",
        "push.endpoint": "issue 16 #4: the push API base URL (a local server in tests)",
        "log.recipient": "issue 16 #4: the log adapter masks the recipient as configured",
        "log.body": "issue 16 #4: the log adapter redacts credentials in the body",
    },
    "secrets": {
        "allow_private": "issue 17 #1: secretstore refuses private/loopback targets (after "
        "DNS resolution) unless this is set",
    },
    "tenant": {
        "allowed": "issue 17 #4: unknown tenants answer 400, so the known ones are listed",
    },
    "vectorstore": {
        "index": "issue 27: the approximate index (HNSW, IVFFlat) of db on pgvector",
        "index_metric": "issue 27: the metric that approximate index serves",
        "ef_search": "issue 27: HNSW recall knob, also settable per query",
        "probes": "issue 27: IVFFlat recall knob, also settable per query",
        "index_build_memory": "issue 27: an HNSW build is fast only while its graph fits "
        "maintenance_work_mem",
    },
    "search": {
        "allow_private": "issue 15 #1 (outbound rules): searchengine refuses a private or "
        "loopback host (also after DNS resolution) unless this is set",
        "language": "issue 15 #1: the PostgreSQL text search configuration is configurable",
    },
    "mailer": {
        "log_body": "issue 13 #4: the log adapter redacts bodies as configured",
        "backend_path": "issue 13 #4: the provider adapter's django-anymail backend",
    },
    "analytics": {
        "allow_insecure": "issue 16 #2 (outbound rules): an http endpoint needs it",
        "allow_private": "issue 16 #2 (outbound rules): an endpoint on a private, loopback "
        "or link-local address (also after DNS resolution) needs it",
    },
    "cdn": {
        "allow_insecure": "issue 16 #6 (outbound rules): an http base_url needs it",
        "allow_private": "issue 16 #6 (outbound rules): a base_url on a private, loopback "
        "or link-local address (also after DNS resolution) needs it",
    },
    "payment": {
        "allow_insecure": "issue 16 #3 (outbound rules): an http endpoint needs it",
        "allow_private": "issue 16 #3 (outbound rules): an endpoint on a private, loopback "
        "or link-local address (also after DNS resolution) needs it",
        "webhook_tolerance": "issue 16 #3: webhook signatures are checked with a timestamp "
        "tolerance (default 5 minutes)",
    },
    "billing": {
        "allow_insecure": "issue 16 #3 (outbound rules): an http endpoint needs it",
        "allow_private": "issue 16 #3 (outbound rules): an endpoint on a private, loopback "
        "or link-local address (also after DNS resolution) needs it",
        "webhook_secret": "issue 16 #3: provider webhooks are verified with a signing secret",
        "webhook_tolerance": "issue 16 #3: webhook signatures are checked with a timestamp "
        "tolerance (default 5 minutes)",
        "max_webhook_bytes": "issue 16 #3: webhook bodies over 1 MiB are refused",
        "auto_approve": "issue 16 #3: the stub starts subscriptions active instead of pending",
    },
    "media": {
        "allow_insecure": "issue 13 #2 (outbound rules): an http endpoint or fetched URL",
        "allow_private": "issue 13 #2 (outbound rules): an endpoint or fetched URL on a "
        "private, loopback or link-local address (also after DNS resolution)",
        "storage": "issue 24 #4: media stores through a STORAGES alias instead of "
        "re-declaring the storage options",
    },
    "permission": {
        "resource_roles": "issue 30 #3: a function giving the caller roles relative to the "
        "object (team membership), which rbac and policyfile rules match",
    },
    "queue": {
        "endpoint": _SQS,
        "region": _SQS,
        "access_key_id": _SQS,
        "secret_access_key": _SQS,
    },
    "webhook": {
        "queue_opts.endpoint": _SQS,
        "queue_opts.region": _SQS,
        "queue_opts.access_key_id": _SQS,
        "queue_opts.secret_access_key": _SQS,
    },
}

#: Defaults the spec writes as a placeholder rather than a value.
PLACEHOLDERS: dict[tuple[str, str], Any] = {
    ("crypto", "key"): DEVELOPMENT_KEY,
    ("document", "latex_command"): "pdflatex",
    ("document", "latex_pdf_to_ppm"): "pdftoppm",
    ("media", "ffmpeg"): "ffmpeg",
    ("media", "ffprobe"): "ffprobe",
    ("observability", "service_name"): "toolkit",
    ("outbox", "prefix"): "toolkit_outbox",
    ("outbox", "slot"): "toolkit_outbox_slot",
    ("outbox", "publication"): "toolkit_outbox_pub",
    ("secrets", "prefix"): "TOOLKIT",
}

#: Defaults that differ from the spec's table on purpose, with the reason.
DELIBERATE_DEFAULTS: dict[tuple[str, str], tuple[Any, str]] = {
    ("tenant", "header"): (
        "",
        "issue 23 #8: empty means X-Tenant-ID without subdomain_regex and no header source "
        "with it, so a client's header cannot pick the tenant of an unmatched host",
    ),
}

#: Spec words that mean the zero value ("the adapter applies its own default").
ZERO_WORDS = {"empty", "none", "nil", "unset", "client default", "unbounded"}

#: Which declared kinds each spec type may become.
KINDS_OF_TYPE = {
    "string": {"str"},
    "integer": {"int", "bytes"},
    "boolean": {"bool"},
    "duration": {"duration"},
    "number": {"float"},
    "list of strings": {"list"},
    "array": {"list_nested"},
    "map": {"map"},
    "map of lists": {"map_list"},
    "list of objects": {"list_nested"},
    "object": {"optional_nested", "map_nested"},
}

#: Integer options that count bytes, declared as ByteSize so "10MiB" decodes.
BYTE_SIZES = {
    ("analytics", "max_properties_bytes"),
    ("document", "max_output_bytes"),
    ("geo", "max_response_body"),
    ("mailer", "max_message_size"),
    ("media", "max_download_bytes"),
    ("billing", "max_webhook_bytes"),
    ("payment", "max_webhook_bytes"),
}

#: Last path components that carry credentials and must be secret-flagged (and only they).
CREDENTIALS = {
    "password",
    "api_key",
    "api_token",
    "secret_key",
    "secret",
    "secret_access_key",
    "token",
    "auth_token",
    "webhook_secret",
    "key",
    "sign_key",
    "signing_key",
    "headers",
}

ZERO_OF_KIND: dict[str, Any] = {
    "str": "",
    "int": 0,
    "bytes": 0,
    "float": 0.0,
    "bool": False,
    "duration": timedelta(0),
    "list": (),
    "map": {},
    "map_list": {},
    "list_nested": (),
    "map_nested": {},
    "optional_nested": None,
}


def spec_value(kind: str, text: str) -> Any:
    """Turn the spec's default text into the Python value the declaration must hold."""
    text = re.sub(r"\s*\([^)]*\)\s*$", "", text.strip())  # "(config default)", "(memory)"
    if text in ZERO_WORDS:
        return ZERO_OF_KIND[kind]
    raw = text.strip("`")
    if kind == "str":
        return raw
    if kind == "bool":
        return {"true": True, "false": False}[raw]
    if kind == "duration":
        return parse_duration(raw)
    if kind in ("int", "bytes"):
        return int(raw) if raw.isdigit() else int(parse_byte_size(raw))
    if kind == "float":
        return float(raw)
    raise AssertionError(f"no normaliser for kind {kind} and text {text!r}")


def spec_keys(service: str) -> dict[str, dict[str, Any]]:
    """Return the spec's leaf keys of ``service`` (object rows with expanded children dropped)."""
    keys = SPEC_SERVICES[service]["keys"]
    return {
        key: row
        for key, row in keys.items()
        if not (row["type"] == "object" and any(k.startswith(key + ".") for k in keys))
    }


def containers(service: str) -> dict[str, dict[str, Any]]:
    """Return the spec's object rows whose keys the JSON expands (``retry``, ``queue_opts``)."""
    keys = SPEC_SERVICES[service]["keys"]
    return {k: r for k, r in keys.items() if k not in spec_keys(service)}


def resolve(cls: type, path: tuple[str, ...]) -> tuple[FieldSpec, Any]:
    """Return the leaf spec at ``path`` and its default, walking unset optional blocks."""
    value: Any = cls()
    klass = cls
    spec: FieldSpec | None = None
    for part in path:
        spec = field_specs(klass)[part]
        value = getattr(value, part)
        if spec.kind in ("nested", "optional_nested"):
            klass = spec.nested  # type: ignore[assignment]
            if value is None:  # an unset block: its keys default to the class's defaults
                value = klass()
    assert spec is not None
    return spec, value


def walk_specs(cls: type, prefix: str = "") -> list[tuple[str, FieldSpec]]:
    """Yield every declared field, including those of nested, list and map item classes."""
    out = []
    for name, spec in field_specs(cls).items():
        out.append((prefix + name, spec))
        if spec.nested is not None:
            out.extend(walk_specs(spec.nested, f"{prefix}{name}."))
    return out


def build(service: str, data: dict[str, Any]) -> Any:
    cls = options_class_of(service)
    where = Where(service, "primary")
    return build_options(cls, decode_mapping(cls, data, where), where)


# --------------------------------------------------------------------------- the catalog


def test_the_extracted_spec_covers_every_catalog_service():
    assert sorted(SPEC_SERVICES) == ALL
    assert len(ALL) == 37


@pytest.mark.parametrize("service", ALL)
def test_options_class_is_the_catalog_name_and_a_frozen_dataclass(service):
    cls = options_class_of(service)
    assert cls.__name__ == SERVICES[service].options
    assert cls.__module__ == f"toolkit_batteries.{service}.options"
    instance = cls()
    first = next(iter(field_specs(cls)))
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(instance, first, None)


@pytest.mark.parametrize("service", ALL)
def test_docstring_names_the_service_and_every_adapter(service):
    doc = options_class_of(service).__doc__ or ""
    assert f"``{service}``" in doc
    for adapter in SERVICES[service].adapters:
        assert f"``{adapter}``" in doc, adapter


@pytest.mark.parametrize("service", ALL)
def test_every_field_has_a_one_line_doc(service):
    for name, spec in walk_specs(options_class_of(service)):
        assert spec.doc, name
        assert "\n" not in spec.doc, name


# --------------------------------------------------------------------------- keys


@pytest.mark.parametrize("service", ALL)
def test_env_paths_build_without_collisions(service):
    paths = env_paths(options_class_of(service))
    assert paths
    assert len(set(paths.values())) == len(paths)


@pytest.mark.parametrize("service", ALL)
def test_every_spec_key_is_declared(service):
    paths = env_paths(options_class_of(service))
    missing = [key for key in spec_keys(service) if normalize(key) not in paths]
    assert not missing


@pytest.mark.parametrize("service", ALL)
def test_no_key_is_declared_beyond_the_spec(service):
    paths = env_paths(options_class_of(service))
    spec = {normalize(key) for key in spec_keys(service)}
    extras = {normalize(key) for key in DELIBERATE_EXTRAS.get(service, {})}
    assert spec.isdisjoint(extras)
    assert set(paths) == spec | extras
    assert len(paths) == len(spec_keys(service)) + len(extras)


@pytest.mark.parametrize("service", ALL)
def test_spec_types_match_declared_kinds(service):
    cls = options_class_of(service)
    paths = env_paths(cls)
    for key, row in spec_keys(service).items():
        spec, _ = resolve(cls, paths[normalize(key)])
        assert spec.kind in KINDS_OF_TYPE[row["type"]], key
        expected_bytes = (service, key) in BYTE_SIZES
        assert (spec.kind == "bytes") == expected_bytes, key


@pytest.mark.parametrize("service", ALL)
def test_expanded_object_rows_are_optional_blocks_unset_by_default(service):
    cls = options_class_of(service)
    for key, row in containers(service).items():
        assert row["default"] == "unset"
        spec = field_specs(cls)[key]
        assert spec.kind == "optional_nested"
        assert getattr(cls(), key) is None


# --------------------------------------------------------------------------- defaults


@pytest.mark.parametrize("service", ALL)
def test_defaults_match_the_spec(service):
    cls = options_class_of(service)
    paths = env_paths(cls)
    for key, row in spec_keys(service).items():
        spec, value = resolve(cls, paths[normalize(key)])
        if (service, key) in PLACEHOLDERS:
            expected = PLACEHOLDERS[service, key]
        elif (service, key) in DELIBERATE_DEFAULTS:
            expected = DELIBERATE_DEFAULTS[service, key][0]
        else:
            expected = spec_value(spec.kind, row["default"])
        assert value == expected, key
        assert type(value) is type(expected) or spec.kind == "bytes", key
        if spec.kind == "bytes":
            assert isinstance(value, ByteSize), key


@pytest.mark.parametrize(("service", "key"), sorted(PLACEHOLDERS))
def test_placeholder_overrides_are_for_placeholder_texts_only(service, key):
    text = SPEC_SERVICES[service]["keys"][key]["default"]
    assert re.search(r"<tool>|<TOOL>|standard|deterministic", text), text


@pytest.mark.parametrize("service", ALL)
def test_build_options_from_nothing_gives_the_declared_defaults(service):
    cls = options_class_of(service)
    assert build_options(cls, {}, Where(service)) == cls()


def test_development_key_is_the_documented_deterministic_32_bytes():
    digest = hashlib.sha256(b"toolkit development key - never use in production").digest()
    assert base64.b64decode(DEVELOPMENT_KEY) == digest
    assert len(digest) == 32
    assert options_class_of("crypto")().key == DEVELOPMENT_KEY


# --------------------------------------------------------------------------- list/map items


def test_permission_rule_fields_match_the_capitalized_spec_table():
    from toolkit_batteries.permission.options import PermissionRule

    items = SPEC_SERVICES["permission"]["items"]["rules"]
    specs = field_specs(PermissionRule)
    assert {normalize(k) for k in items} == {normalize(k) for k in specs}
    by_fold = {normalize(name): name for name in specs}
    rule = PermissionRule()
    for key, row in items.items():
        name = by_fold[normalize(key)]
        assert getattr(rule, name) == spec_value(specs[name].kind, row["default"]), key
    assert specs["effect"].choices == ("allow", "deny")


def test_storage_bucket_policy_matches_the_spec_table():
    from toolkit_batteries.storage.options import BucketPolicy, OperationPolicy

    items = SPEC_SERVICES["storage"]["items"]["policy"]
    assert set(items) == {
        "<bucket>.version",
        "<bucket>.<op>.public",
        "<bucket>.<op>.allow",
        "<bucket>.<op>.deny",
    }
    bucket = field_specs(BucketPolicy)
    assert set(bucket) == {"version", "read", "write", "update", "delete"}
    assert BucketPolicy().version == spec_value("str", items["<bucket>.version"]["default"])
    for op in ("read", "write", "update", "delete"):
        assert bucket[op].nested is OperationPolicy
    operation = field_specs(OperationPolicy)
    assert set(operation) == {"public", "allow", "deny"}
    for leaf in ("public", "allow", "deny"):
        row = items[f"<bucket>.<op>.{leaf}"]
        assert operation[leaf].kind in KINDS_OF_TYPE[row["type"]]
        assert getattr(OperationPolicy(), leaf) == spec_value(operation[leaf].kind, row["default"])


def test_storage_policy_decodes_a_flat_map_of_buckets():
    options = build(
        "storage",
        {
            "policy": {
                "Default": {"read": {"public": True}},
                "avatars": {"write": {"allow": ["*"], "deny": ["anonymous"]}},
            }
        },
    )
    assert options.policy["Default"].read.public is True
    assert options.policy["Default"].version == "0"
    assert options.policy["avatars"].write.allow == ("*",)
    assert options.policy["avatars"].write.deny == ("anonymous",)
    assert options.policy["avatars"].read.public is False


def test_jwt_keys_entries_are_kid_and_a_secret():
    from toolkit_batteries.auth.options import JWTKey

    items = SPEC_SERVICES["auth"]["items"]["jwt.keys"]
    specs = field_specs(JWTKey)
    assert set(specs) == set(items) == {"kid", "secret"}
    assert specs["secret"].secret and not specs["kid"].secret


# --------------------------------------------------------------------------- nested blocks


def test_nested_blocks_default_to_their_class_defaults_and_overlay_one_key():
    from toolkit_batteries.auth.options import JWTOptions, OIDCOptions

    default = options_class_of("auth")()
    assert default.jwt == JWTOptions()
    assert default.oidc == OIDCOptions()
    assert default.oidc.timeout == timedelta(seconds=30)

    options = build(
        "auth",
        {
            "jwt": {"secret": "s" * 32, "keys": [{"kid": "a", "secret": "x"}]},
            "oidc": {"Issuer": "https://id.example"},
        },
    )
    assert options.jwt.secret == "s" * 32
    assert options.jwt.keys[0].kid == "a"
    assert options.jwt.max_ttl == timedelta(0)
    assert options.oidc.issuer == "https://id.example"
    assert options.oidc.timeout == timedelta(seconds=30)


def test_nested_keys_are_settable_one_at_a_time_from_the_environment():
    cls = options_class_of("resilience")
    paths = env_paths(cls)
    assert paths["breakerenabled"] == ("breaker", "enabled")
    assert paths["kvserveraddr"] == ("kvserver", "addr")
    assert paths["retrymaxattempts"] == ("retry", "max_attempts")
    where = Where("resilience")
    assert decode_text(cls, ("breaker", "enabled"), "true", where) is True
    assert decode_text(cls, ("bulkhead", "max_wait"), "250ms", where) == timedelta(milliseconds=250)
    auth = env_paths(options_class_of("auth"))
    assert auth[normalize("JWT_SECRET")] == ("jwt", "secret")


def test_resilience_kvserver_prefix_defaults_to_resilience_only_there():
    assert options_class_of("resilience")().kvserver.prefix == "resilience"
    assert isinstance(options_class_of("resilience")().kvserver, KVServerBlock)
    for service in ("eventbus", "idempotency", "ratelimit", "session"):
        block = options_class_of(service)().kvserver
        assert type(block) is KVServerBlock
        assert block.prefix == ""
        assert block == KVServerBlock()


def test_retry_blocks_are_unset_until_a_key_is_given():
    assert options_class_of("outbox")().retry is None
    assert options_class_of("resilience")().retry is None

    outbox = build("outbox", {"retry": {"BaseDelay": "100ms"}})
    assert outbox.retry == RetryPolicy(base_delay=timedelta(milliseconds=100))
    resilience = build("resilience", {"retry": {"MaxAttempts": 7}})
    assert resilience.retry == ResilienceRetryPolicy(max_attempts=7)
    assert resilience.retry.base_delay == timedelta(milliseconds=50)


def test_webhook_queue_opts_take_every_queue_option():
    from toolkit_batteries.queue.options import QueueOptions

    assert options_class_of("webhook")().queue_opts is None
    options = build("webhook", {"queue_opts": {"buffer": 5, "addr": "redis://q:6379/2"}})
    assert options.queue_opts == QueueOptions(buffer=5, addr="redis://q:6379/2")
    assert options.queue_opts.visibility_timeout == timedelta(seconds=30)


def test_cache_keeps_the_legacy_adapter_key_and_the_flat_kvserver_keys():
    options = build("cache", {"adapter": "kvserver", "addr": "cache:6379", "pool_size": 20})
    assert options.adapter == "kvserver"
    assert options.addr == "cache:6379"
    assert options.pool_size == 20


@pytest.mark.parametrize("service", ["lock", "queue"])
def test_lock_and_queue_reject_the_kvserver_pool_keys(service):
    with pytest.raises(UnknownFieldError):
        build(service, {"pool_size": 10})


# --------------------------------------------------------------------------- secrets


@pytest.mark.parametrize("service", ALL)
def test_credentials_and_only_credentials_are_secret(service):
    for path, spec in walk_specs(options_class_of(service)):
        if spec.kind in ("nested", "optional_nested"):
            continue
        leaf = path.rsplit(".", 1)[-1]
        assert spec.secret == (leaf in CREDENTIALS), path


def test_identifiers_and_dsns_are_not_secret():
    for service, name in [
        ("media", "access_key_id"),
        ("storage", "access_key_id"),
        ("crypto", "key_id"),
        ("secrets", "token_file"),
        ("cache", "dsn"),
        ("observability", "key_file"),
        ("outbox", "dsn"),
    ]:
        assert not field_specs(options_class_of(service))[name].secret, (service, name)


def test_secrets_are_masked_in_display_including_nested_items():
    auth = build(
        "auth",
        {"jwt": {"secret": "topsecret-" * 4, "keys": [{"kid": "k1", "secret": "rotated-secret"}]}},
    )
    shown = options_to_dict(auth)
    assert shown["jwt"]["secret"] == REDACTED
    assert shown["jwt"]["keys"] == [{"kid": "k1", "secret": REDACTED}]
    observability = build("observability", {"headers": {"Authorization": "Bearer abc"}})
    assert options_to_dict(observability)["headers"] == {"Authorization": REDACTED}
    assert "topsecret" not in repr(shown) and "Bearer" not in repr(options_to_dict(observability))


# --------------------------------------------------------------------------- ranges, choices

RANGES = {
    ("mailer", "port"): (1, 65535),
    ("document", "quality"): (0, 100),
    ("observability", "sample_ratio"): (0, 1),
    ("resilience", "breaker.failure_ratio"): (0, 1),
    ("log", "min_level"): (0, 4),  # "0 debug ... 4 fatal"
    # issue 27: pgvector's own limits (hnsw.ef_search 1-1000, ivfflat.probes 1-32768).
    ("vectorstore", "ef_search"): (1, 1000),
    ("vectorstore", "probes"): (1, 32768),
    ("vectorstore", "index_build_memory"): (0, 65536),  # MiB of maintenance_work_mem
}


def _password_ranges() -> dict[tuple[str, str], tuple[float, float]]:
    out = {}
    for key, row in SPEC_SERVICES["password"]["keys"].items():
        low, high = re.match(r"(\d+)-(\d+)", row["range"]).groups()
        out["password", key] = (float(low), float(high))
    return out


ALL_RANGES = {**RANGES, **_password_ranges()}


@pytest.mark.parametrize(("service", "key"), sorted(ALL_RANGES))
def test_declared_ranges_match_the_spec(service, key):
    spec, _ = resolve(options_class_of(service), tuple(key.split(".")))
    assert (spec.min, spec.max) == ALL_RANGES[service, key]


def test_no_other_option_declares_a_range():
    group_specs = [
        spec
        for group in (KVServerConnection, ResilienceRetryPolicy)
        for spec in field_specs(group).values()
        if spec.min is not None or spec.max is not None
    ]
    declared = {
        (service, path)
        for service in ALL
        for path, spec in walk_specs(options_class_of(service))
        if (spec.min is not None or spec.max is not None) and spec not in group_specs
    }
    assert declared == set(ALL_RANGES)


@pytest.mark.parametrize(
    ("service", "data", "field", "value_text"),
    [
        ("mailer", {"port": 70000}, "port", "70000"),
        ("document", {"quality": 101}, "quality", "101"),
        ("observability", {"sample_ratio": 1.5}, "sample_ratio", "1.5"),
        ("resilience", {"breaker": {"failure_ratio": 2.5}}, "breaker.failure_ratio", "2.5"),
        ("password", {"time": 11}, "time", "11"),
        ("password", {"memory": 4096}, "memory", "4096"),
        ("password", {"threads": 17}, "threads", "17"),
        ("password", {"salt_length": 7}, "salt_length", "7"),
        ("password", {"key_length": 129}, "key_length", "129"),
    ],
)
def test_out_of_range_values_fail_naming_the_field_not_the_value(service, data, field, value_text):
    with pytest.raises(InvalidOptionsError) as info:
        build(service, data)
    assert info.value.field == field
    assert info.value.service == service
    assert field in str(info.value)
    assert value_text not in str(info.value)


def test_values_at_the_range_bounds_are_accepted():
    assert build("password", {"time": 10, "memory": 8192, "threads": 16}).memory == 8192
    assert build("mailer", {"port": 65535}).port == 65535
    assert build("observability", {"sample_ratio": 1}).sample_ratio == 1


CHOICES = {
    ("document", "latex_sandbox"): ("auto", "required", "off"),
    ("storage", "policy_sync"): ("manual", "auto"),
    ("storage", "sync_fail"): ("warn", "require"),
    ("outbox", "publisher"): ("eventbus", "queue"),
    ("mailer", "encryption"): ("starttls", "tls", "none"),
}


@pytest.mark.parametrize(("service", "key"), sorted(CHOICES))
def test_choices_are_declared_and_enforced(service, key):
    assert field_specs(options_class_of(service))[key].choices == CHOICES[service, key]
    for choice in CHOICES[service, key]:
        assert getattr(build(service, {key: choice}), key) == choice
    with pytest.raises(InvalidOptionsError) as info:
        build(service, {key: "bogus-choice"})
    assert info.value.field == key
    assert "bogus-choice" not in str(info.value)


def test_empty_choice_means_unset():
    assert build("outbox", {"publisher": ""}).publisher == ""
    assert build("document", {"latex_sandbox": ""}).latex_sandbox == "auto"


# --------------------------------------------------------------------------- cross-field


def test_permission_rules_need_a_role_and_an_action_but_not_an_owned_attr():
    where = Where("permission", "primary")
    options = build(
        "permission",
        {
            "rules": [
                {"Role": "admin", "Action": "delete"},
                {"Role": "user", "Action": "edit", "OwnedOnly": True},
            ]
        },
    )
    assert options.rules[0].effect == "allow"
    assert options.rules[1].owned_only is True
    options.validate(where)  # OwnedOnly compares the schema's owner_field (issue 30 #2)
    missing = build("permission", {"rules": [{"Role": "user", "Action": " "}]})
    with pytest.raises(InvalidOptionsError) as info:
        missing.validate(where)
    assert info.value.field == "rules[0].action"


def test_permission_rules_with_owner_attribute_validate():
    options = build(
        "permission",
        {
            "rules": [
                {"Role": "user", "Action": "edit", "OwnedOnly": True, "OwnedAttr": "owner_id"},
                {"role": "guest", "action": "read", "effect": "deny"},
            ],
            "roles": {"u1": ["user", "guest"]},
        },
    )
    options.validate(Where("permission"))
    assert options.rules[0].owned_attr == "owner_id"
    assert options.rules[1].effect == "deny"
    assert options.roles == {"u1": ("user", "guest")}


def test_permission_rule_effect_is_allow_or_deny():
    with pytest.raises(InvalidOptionsError) as info:
        build("permission", {"rules": [{"Role": "a", "Action": "b", "Effect": "maybe"}]})
    assert info.value.field == "rules[0].effect"
