"""One contract for every flag adapter: static (a file) and remotecfg (a local server)."""

from __future__ import annotations

import hashlib
from concurrent.futures import ThreadPoolExecutor

from tests.support.batteries import assert_opened_as
from toolkit_batteries.flag import Flag

SUBJECTS = [f"user-{i}" for i in range(10_000)]


def in_rollout(seed: str, subject: str, percent: float) -> bool:
    """Tell whether the documented bucket puts ``subject`` inside, computed independently."""
    digest = hashlib.sha256(f"{seed}.{subject}".encode()).hexdigest()
    return int(digest, 16) % 100_000_000 < percent * 1_000_000


class TestFlagContract:
    """The same flags, the same answers, on every adapter."""

    def test_identity(self, opened):
        assert_opened_as(opened.flag, Flag, opened.variant, opened.container, "flag")

    def test_names(self, opened):
        assert opened.flag.names() == sorted(["on", "off", "theme", "limit", "rollout"])

    def test_an_unknown_flag_answers_the_default(self, opened):
        assert opened.flag.enabled("nope") is False
        assert opened.flag.enabled("nope", default=True) is True
        assert opened.flag.value("nope") is None
        assert opened.flag.value("nope", default="x") == "x"

    def test_on_and_off(self, opened):
        assert opened.flag.enabled("on") is True
        assert opened.flag.enabled("on", subject="u1", tenant="acme") is True
        assert opened.flag.enabled("off") is False
        assert opened.flag.enabled("off", default=True) is False

    def test_values_and_tenant_overrides(self, opened):
        assert opened.flag.value("theme") == "dark"
        assert opened.flag.value("theme", tenant="acme") == "light"
        assert opened.flag.value("theme", tenant="globex") == "dark"
        assert opened.flag.value("limit") == 5
        assert opened.flag.enabled("limit") is True

    def test_a_partial_rollout_needs_a_subject(self, opened):
        assert opened.flag.enabled("rollout") is False
        assert opened.flag.enabled("rollout", subject="") is False

    def test_rollout_follows_the_documented_hash(self, opened):
        answers = [opened.flag.enabled("rollout", subject=s) for s in SUBJECTS]
        assert answers == [in_rollout("rollout", s, 25) for s in SUBJECTS]
        share = sum(answers) / len(SUBJECTS)
        assert 0.235 < share < 0.265, share

    def test_the_same_subject_gets_the_same_answer(self, opened):
        first = [opened.flag.enabled("rollout", subject=s) for s in SUBJECTS[:500]]
        again = [opened.flag.enabled("rollout", subject=s) for s in SUBJECTS[:500]]
        assert first == again
        assert opened.flag.enabled("rollout", subject=42) == opened.flag.enabled(
            "rollout", subject="42"
        )

    def test_tenant_overrides_beat_the_rollout(self, opened):
        assert all(opened.flag.enabled("rollout", subject=s, tenant="acme") for s in SUBJECTS[:300])
        assert opened.flag.enabled("rollout", tenant="acme") is True
        assert not any(
            opened.flag.enabled("rollout", subject=s, tenant="globex") for s in SUBJECTS[:300]
        )
        inside = [s for s in SUBJECTS[:300] if in_rollout("rollout", s, 25)]
        assert inside and all(
            opened.flag.enabled("rollout", subject=s, tenant="initech") for s in inside
        )

    def test_concurrent_evaluations_agree(self, opened):
        expected = [in_rollout("rollout", s, 25) for s in SUBJECTS[:2000]]
        with ThreadPoolExecutor(8) as pool:
            got = list(
                pool.map(lambda s: opened.flag.enabled("rollout", subject=s), SUBJECTS[:2000])
            )
        assert got == expected
