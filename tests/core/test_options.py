"""The options engine: parsing, strict decoding, zero-means-unset, bounds, display."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolkit_batteries.core.errors import InvalidOptionsError, UnknownFieldError
from toolkit_batteries.core.groups import KVServerBlock, ResilienceRetryPolicy, RetryPolicy
from toolkit_batteries.core.options import (
    ByteSize,
    Duration,
    Where,
    build_options,
    decode_mapping,
    decode_text,
    env_paths,
    field_specs,
    format_duration,
    option,
    options_class,
    options_to_dict,
    parse_byte_size,
    parse_duration,
)


@options_class
class Inner:
    secret: str = option("", secret=True)
    enabled: bool = option(False)


@options_class
class Sample:
    name: str = option("fallback")
    port: int = option(25, min=1, max=65535)
    ratio: float = option(0.5, min=0, max=1)
    timeout: Duration = option(timedelta(seconds=30))
    size: ByteSize = option(ByteSize(1024))
    mode: str = option("", choices=("auto", "off"))
    tags: tuple[str, ...] = option([])
    headers: dict[str, str] = option({}, secret=True)
    roles: dict[str, tuple[str, ...]] = option({})
    inner: Inner = option(None)
    retry: RetryPolicy | None = option(None)
    items: tuple[Inner, ...] = option([])
    by_name: dict[str, Inner] = option({})


WHERE = Where("mailer", "primary")


def build(data):
    return build_options(Sample, decode_mapping(Sample, data, WHERE), WHERE)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("5s", 5),
        ("250ms", 0.25),
        ("1h", 3600),
        ("1h30m", 5400),
        ("5m", 300),
        ("1.5s", 1.5),
        ("-1s", -1),
        ("0", 0),
        ("", 0),
        ("10", 10),
        ("2d", 172800),
        ("100us", 0.0001),
    ],
)
def test_parse_duration_accepts_the_configuration_spellings(text, seconds):
    assert parse_duration(text).total_seconds() == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["5x", "s", "1h30", "abc", "5 seconds", "1h-5m"])
def test_parse_duration_rejects_garbage(text):
    with pytest.raises(ValueError, match="duration"):
        parse_duration(text)


@given(st.integers(min_value=-(10**9), max_value=10**9))
def test_format_duration_round_trips(milliseconds):
    value = timedelta(milliseconds=milliseconds)
    assert parse_duration(format_duration(value)) == value


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("10MiB", 10 * 1024**2),
        ("64 MB", 64 * 1000**2),
        ("512KiB", 512 * 1024),
        ("1024", 1024),
        (4096, 4096),
        ("1gib", 1024**3),
    ],
)
def test_parse_byte_size(text, count):
    assert parse_byte_size(text) == count
    assert isinstance(parse_byte_size(text), ByteSize)


def test_defaults_fill_everything_not_given():
    opts = build({})
    assert opts.name == "fallback"
    assert opts.port == 25
    assert opts.timeout == timedelta(seconds=30)
    assert opts.inner == Inner()
    assert opts.retry is None


def test_keys_match_ignoring_case_and_underscores():
    opts = build({"NAME": "x", "Port": "587", "re_try": {"BaseDelay": "1s", "MAX_ATTEMPTS": 4}})
    assert (opts.name, opts.port) == ("x", 587)
    assert opts.retry == RetryPolicy(base_delay=timedelta(seconds=1), max_attempts=4)


def test_unknown_key_fails_with_a_suggestion_naming_service_and_instance():
    with pytest.raises(UnknownFieldError) as err:
        build({"prot": 1})
    assert str(err.value) == 'mailer.primary: unknown option "prot" (did you mean "port"?)'


def test_unknown_nested_key_names_the_dotted_path():
    with pytest.raises(UnknownFieldError, match=r'"inner\.secrett"'):
        build({"inner": {"secrett": "x"}})


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"port": "twenty-five-hunter2"}, "port"),
        ({"ratio": "hunter2"}, "ratio"),
        ({"timeout": "hunter2"}, "timeout"),
        ({"inner": {"enabled": "hunter2"}}, "inner.enabled"),
        ({"tags": [1, "hunter2"]}, "tags"),
        ({"items": [{"enabled": "hunter2"}]}, "items[0].enabled"),
        ({"name": 12345}, "name"),
    ],
)
def test_bad_values_name_the_field_and_never_the_value(data, field):
    with pytest.raises(InvalidOptionsError) as err:
        build(data)
    assert err.value.service == "mailer" and err.value.field == field
    assert "hunter2" not in str(err.value) and "12345" not in str(err.value)
    assert f'"{field}"' in str(err.value)


@pytest.mark.parametrize(
    ("data", "field"),
    [({"port": 70000}, "port"), ({"ratio": 2}, "ratio"), ({"mode": "sometimes"}, "mode")],
)
def test_bounds_and_choices_are_checked(data, field):
    with pytest.raises(InvalidOptionsError, match=f'"{field}"'):
        build(data)


def test_zero_value_means_unset_and_the_default_applies():
    opts = build({"port": 0, "name": "", "timeout": "0s", "size": 0})
    assert (opts.port, opts.name, opts.size) == (25, "fallback", 1024)
    assert opts.timeout == timedelta(seconds=30)


def test_retry_stays_unset_until_a_key_is_given_and_then_takes_the_service_defaults():
    where = Where("resilience")

    @options_class
    class Holder:
        retry: ResilienceRetryPolicy | None = option(None)

    assert build_options(Holder, {}, where).retry is None
    built = build_options(Holder, decode_mapping(Holder, {"retry": {"jitter": 0.2}}, where), where)
    assert built.retry == ResilienceRetryPolicy(jitter=0.2)
    assert built.retry.base_delay == timedelta(milliseconds=50) and built.retry.max_attempts == 3


def test_env_paths_flatten_nested_blocks():
    paths = env_paths(Sample)
    assert paths["innersecret"] == ("inner", "secret")
    assert paths["retrybasedelay"] == ("retry", "base_delay")
    assert paths["items"] == ("items",)
    assert env_paths(KVServerBlock)["requiretls"] == ("require_tls",)


def test_decode_text_handles_lists_maps_and_json():
    assert decode_text(Sample, ("tags",), "a, b,c", WHERE) == ("a", "b", "c")
    assert decode_text(Sample, ("tags",), '["x", "y"]', WHERE) == ("x", "y")
    assert decode_text(Sample, ("headers",), "A=1,B=2", WHERE) == {"A": "1", "B": "2"}
    assert decode_text(Sample, ("roles",), '{"u1": ["admin"]}', WHERE) == {"u1": ("admin",)}
    assert decode_text(Sample, ("inner", "enabled"), "TRUE", WHERE) is True
    with pytest.raises(InvalidOptionsError, match="expected JSON"):
        decode_text(Sample, ("roles",), "not json hunter2", WHERE)


def test_display_masks_secrets_and_url_passwords():
    opts = build(
        {
            "inner": {"secret": "hunter2"},
            "headers": {"Authorization": "Bearer abc"},
            "name": "postgres://app:hunter2@db/x",
        }
    )
    shown = options_to_dict(opts)
    assert "hunter2" not in repr(shown) and "abc" not in repr(shown)
    assert shown["name"] == "postgres://app:[redacted]@db/x"
    assert shown["timeout"] == "30s"
    assert shown["headers"] == {"Authorization": "[redacted]"}


def test_field_specs_are_cached_per_class():
    assert field_specs(Sample) is field_specs(Sample)
    assert field_specs(Sample)["inner"].kind == "nested"
    assert field_specs(Sample)["retry"].kind == "optional_nested"
    assert field_specs(Sample)["by_name"].kind == "map_nested"


def test_repr_of_options_never_shows_a_secret():
    opts = build({"inner": {"secret": "hunter2"}, "headers": {"X-Api-Key": "hunter3"}})
    assert "hunter2" not in repr(opts) and "hunter3" not in repr(opts)
