"""The password battery: parameter ranges, hash/verify/needs_rehash, the Django hasher.

Most tests use the cheapest parameters the spec allows (t=1, m=8192 KiB, p=1) so the
suite stays fast; one test runs the defaults to show they are what the spec says.
"""

from __future__ import annotations

import argon2
import pytest
from django.contrib.auth.hashers import check_password, identify_hasher, make_password
from django.test import override_settings

from tests.support.processes import python_prints
from toolkit_batteries import services
from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.password import PARAMETER_RANGES, Argon2Parameters, PasswordHasher
from toolkit_batteries.password.adapters.argon2id import Argon2idHasher
from toolkit_batteries.password.hashers import ToolkitArgon2PasswordHasher
from toolkit_batteries.password.options import PasswordOptions

FAST = {"time": 1, "memory": 8192, "threads": 1}
SPEC_RANGES = {
    "time": (1, 10),
    "memory": (8192, 1048576),
    "threads": (1, 16),
    "salt_length": (8, 64),
    "key_length": (16, 128),
}


def open_hasher(**options: int) -> PasswordHasher:
    container = Container(Config.load({"password": {"options": options}}, {}))
    return container.password()


@pytest.fixture(scope="module")
def fast() -> PasswordHasher:
    return open_hasher(**FAST)


# ------------------------------------------------------------------ parameters


def test_ranges_are_the_specs():
    assert PARAMETER_RANGES == SPEC_RANGES


def test_defaults_are_the_specs():
    hasher = open_hasher()
    assert isinstance(hasher, Argon2idHasher)
    assert hasher.parameters == Argon2Parameters(
        time=3, memory=65536, threads=4, salt_length=16, key_length=32
    )
    encoded = hasher.hash("default parameters")
    assert encoded.startswith("$argon2id$v=19$m=65536,t=3,p=4$")
    found = argon2.extract_parameters(encoded)
    assert (found.salt_len, found.hash_len) == (16, 32)
    assert hasher.verify("default parameters", encoded)


@pytest.mark.parametrize("field", sorted(SPEC_RANGES))
def test_each_bound_just_inside_opens(field):
    low, high = SPEC_RANGES[field]
    for value in (low, high):
        hasher = open_hasher(**{field: value})
        assert getattr(hasher.parameters, field) == value


@pytest.mark.parametrize("field", sorted(SPEC_RANGES))
def test_each_bound_just_outside_fails_at_load_naming_service_and_field(field):
    low, high = SPEC_RANGES[field]
    for value in (low - 1, high + 1):
        if value == 0:
            continue  # zero means unset (the default applies), tested below
        with pytest.raises(InvalidOptionsError) as info:
            Config.load({"password": {"options": {field: value}}}, {})
        message = str(info.value)
        assert f'password.default: option "{field}" must be between' in message
        assert str(value) not in message


@pytest.mark.parametrize("field", sorted(SPEC_RANGES))
def test_each_bound_just_outside_fails_at_open_too(field):
    """Options built in code skip the loader; the adapter's open checks them again."""
    low, high = SPEC_RANGES[field]
    container = Container(Config.load({}, {}))
    for value in (low - 1, high + 1):
        options = PasswordOptions(**{field: value})
        ctx = OpenContext("password", "default", "argon2id", options, container, container.pools)
        with pytest.raises(InvalidOptionsError) as info:
            Argon2idHasher.open(ctx)
        assert f'password.default: option "{field}" must be between {low} and {high}' in str(
            info.value
        )
    container.close()


def test_zero_means_unset_and_environment_overrides():
    assert open_hasher(time=0).parameters.time == 3
    config = Config.load({}, {"PASSWORD__DEFAULT__MEMORY": "16384", "PASSWORD__DEFAULT__TIME": "2"})
    hasher = Container(config).password()
    assert (hasher.parameters.memory, hasher.parameters.time) == (16384, 2)
    with pytest.raises(InvalidOptionsError) as info:
        Config.load({}, {"PASSWORD__DEFAULT__THREADS": "99"})
    assert '"threads"' in str(info.value) and "99" not in str(info.value)


def test_non_integer_parameters_are_refused_at_open():
    container = Container(Config.load({}, {}))
    ctx = OpenContext(
        "password", "x", "argon2id", PasswordOptions(time=True), container, container.pools
    )
    with pytest.raises(InvalidOptionsError, match=r'password\.x: option "time" must be an integer'):
        Argon2idHasher.open(ctx)


def test_argon2_alias_resolves():
    container = Container(Config.load({"password": {"adapter": "argon2", "options": FAST}}, {}))
    assert isinstance(container.password(), Argon2idHasher)


# ------------------------------------------------------------------ hash / verify


def test_hash_and_verify(fast):
    encoded = fast.hash("correct horse battery staple")
    assert encoded.startswith("$argon2id$v=19$m=8192,t=1,p=1$")
    assert fast.verify("correct horse battery staple", encoded) is True
    assert fast.verify("correct horse battery stapl", encoded) is False
    assert fast.verify("", encoded) is False
    assert fast.hash("same") != fast.hash("same")  # a fresh salt each time


def test_unicode_and_empty_passwords(fast):
    for password in ("pässwörd ✓", "", "x" * 5000):
        assert fast.verify(password, fast.hash(password))


def test_salt_and_key_lengths_follow_options():
    hasher = open_hasher(**FAST, salt_length=8, key_length=128)
    found = argon2.extract_parameters(hasher.hash("pw"))
    assert (found.salt_len, found.hash_len) == (8, 128)


@pytest.mark.parametrize(
    "encoded",
    [
        "",
        "plain",
        "$argon2i$v=19$m=8192,t=1,p=1$c29tZXNhbHQ$aGFzaA",
        "$argon2id$v=19$m=8192,t=1,p=1$!!!$@@@",
        "pbkdf2_sha256$1000000$salt$hash",
        None,
    ],
)
def test_malformed_or_foreign_hashes_do_not_verify(fast, encoded):
    assert fast.verify("pw", encoded) is False
    assert fast.needs_rehash(encoded) is True


def test_hashes_with_parameters_outside_the_ranges_are_refused(fast):
    weak = argon2.PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    encoded = weak.hash("pw")
    assert weak.verify(encoded, "pw")  # a valid argon2id hash...
    assert fast.verify("pw", encoded) is False  # ...with memory below 8192 KiB


def test_passwords_must_be_text(fast):
    encoded = fast.hash("pw")
    with pytest.raises(TypeError):
        fast.hash(b"pw")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        fast.verify(None, encoded)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "change",
    [{"time": 2}, {"memory": 16384}, {"threads": 2}, {"salt_length": 32}, {"key_length": 64}],
)
def test_needs_rehash_when_any_parameter_changes(fast, change):
    encoded = fast.hash("pw")
    assert fast.needs_rehash(encoded) is False
    changed = open_hasher(**{**FAST, **change})
    assert changed.needs_rehash(encoded) is True
    assert changed.verify("pw", encoded) is True  # old hashes still verify
    assert changed.needs_rehash(changed.hash("pw")) is False


def test_verify_dummy_is_false_and_uses_current_parameters(fast):
    assert fast.verify_dummy("anything") is False
    dummy = fast._dummy
    assert dummy is not None and fast.needs_rehash(dummy) is False
    assert fast.verify_dummy("") is False
    assert fast._dummy == dummy  # made once per hasher


def test_repr_shows_parameters_never_a_hash(fast):
    assert repr(fast) == "<Argon2idHasher password.default t=1 m=8192 p=1 salt=16 key=32>"


# ------------------------------------------------------------------ Django hasher

HASHERS = [
    "toolkit_batteries.password.hashers.ToolkitArgon2PasswordHasher",
    "django.contrib.auth.hashers.MD5PasswordHasher",
]


def test_django_make_and_check_password_round_trip():
    with override_settings(PASSWORD_HASHERS=HASHERS, TOOLKIT={"password": {"options": FAST}}):
        encoded = make_password("s3cret pass")
        assert encoded.startswith("toolkit_argon2$argon2id$v=19$m=8192,t=1,p=1$")
        assert isinstance(identify_hasher(encoded), ToolkitArgon2PasswordHasher)
        assert check_password("s3cret pass", encoded) is True
        assert check_password("wrong", encoded) is False
        # The battery reads the same PHC string without the algorithm prefix.
        phc = encoded.removeprefix("toolkit_argon2")
        assert services.password().verify("s3cret pass", phc) is True
        # A given salt makes the hash deterministic, as Django's contract says.
        assert make_password("x", salt="fixedsalt0123456789abc") == make_password(
            "x", salt="fixedsalt0123456789abc"
        )


def test_django_salt_carries_salt_length_bytes_of_entropy():
    with override_settings(
        PASSWORD_HASHERS=HASHERS, TOOLKIT={"password": {"options": {**FAST, "salt_length": 32}}}
    ):
        hasher = identify_hasher(make_password("pw"))
        decoded = hasher.decode(make_password("pw"))
        assert len(decoded["salt"]) == 43  # ceil(256 bits / log2(62))
        summary = hasher.safe_summary(make_password("pw"))
        assert summary["memory cost"] == 8192
        assert "*" in summary["hash"] and "*" in summary["salt"]


def test_django_rehashes_on_login_when_parameters_change():
    with override_settings(PASSWORD_HASHERS=HASHERS, TOOLKIT={"password": {"options": FAST}}):
        encoded = make_password("pw")
        assert identify_hasher(encoded).must_update(encoded) is False
        stored: list[str] = []
        assert check_password("pw", encoded, setter=stored.append) is True
        assert stored == []
    stronger = {**FAST, "time": 2}
    with override_settings(PASSWORD_HASHERS=HASHERS, TOOLKIT={"password": {"options": stronger}}):
        assert identify_hasher(encoded).must_update(encoded) is True
        stored = []
        assert check_password("pw", encoded, setter=stored.append) is True
        assert stored == ["pw"]  # Django hands the raw password to set_password
        assert make_password("pw").startswith("toolkit_argon2$argon2id$v=19$m=8192,t=2,p=1$")


def test_django_upgrades_other_algorithms_to_toolkit_argon2():
    with override_settings(PASSWORD_HASHERS=HASHERS, TOOLKIT={"password": {"options": FAST}}):
        old = make_password("pw", hasher="md5")
        stored: list[str] = []
        assert check_password("pw", old, setter=stored.append) is True
        assert stored == ["pw"]


def test_django_hasher_refuses_foreign_strings():
    with override_settings(PASSWORD_HASHERS=HASHERS, TOOLKIT={"password": {"options": FAST}}):
        hasher = ToolkitArgon2PasswordHasher()
        assert hasher.verify("pw", "argon2$argon2id$v=19$m=8192,t=1,p=1$abc$def") is False
        assert hasher.must_update("toolkit_argon2$garbage") is True


# ------------------------------------------------------------------ imports


def test_importing_the_battery_and_hashers_imports_no_argon2():
    code = (
        "import django, sys\n"
        "from django.conf import settings\n"
        "settings.configure()\n"
        "django.setup()\n"
        "import toolkit_batteries.password, toolkit_batteries.password.hashers\n"
        "print('argon2' in sys.modules)"
    )
    assert python_prints(code) == "False"
