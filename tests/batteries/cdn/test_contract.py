"""One contract, run on every cdn adapter (``noop`` and ``cdn_a``)."""

from __future__ import annotations

import pytest

from toolkit_batteries.cdn import CDN, InvalidPurgeError

from .conftest import Opened

URLS = ["https://www.example.org/", "https://www.example.org/about?x=1"]


def _expect(opened: Opened, kind: str, items: list[str]) -> None:
    """``cdn_a``: the server purged exactly ``items``; ``noop``: it discarded that many."""
    expected: list[str] | int = items if opened.server is not None else len(items)
    assert opened.purged(kind) == expected


class TestCDNContract:
    def test_the_service_is_the_battery_class(self, opened: Opened) -> None:
        assert isinstance(opened.cdn, CDN)
        assert opened.cdn.adapter_name == opened.variant

    def test_purge_urls_purges_each_distinct_url_once(self, opened: Opened) -> None:
        assert opened.cdn.purge_urls([*URLS, URLS[0]]) == 2
        _expect(opened, "files", URLS)

    def test_purge_tags(self, opened: Opened) -> None:
        assert opened.cdn.purge_tags(("product-42", "home", "home")) == 2
        _expect(opened, "tags", ["product-42", "home"])
        _expect(opened, "files", [])

    def test_empty_lists_purge_nothing(self, opened: Opened) -> None:
        assert opened.cdn.purge_urls([]) == 0
        assert opened.cdn.purge_tags(iter(())) == 0
        _expect(opened, "files", [])
        _expect(opened, "tags", [])
        if opened.server is not None:
            assert opened.server.requests == []

    @pytest.mark.parametrize(
        ("urls", "field"),
        [
            (["https://www.example.org/", "/relative"], "urls[1]"),
            (["ftp://files.example.org/a"], "urls[0]"),
            (["https://user:pw-secret@www.example.org/"], "urls[0]"),
            (["https://www.example.org/a b"], "urls[0]"),
            (["https://www.example.org/", ""], "urls[1]"),
            ([None], "urls[0]"),
            (["https://www.example.org/" + "a" * 5000], "urls[0]"),
        ],
    )
    def test_a_bad_url_purges_nothing(self, opened: Opened, urls, field) -> None:
        with pytest.raises(InvalidPurgeError) as caught:
            opened.cdn.purge_urls(urls)
        assert caught.value.field == field
        assert str(caught.value).startswith(f"cdn.default: {field} ")
        assert "pw-secret" not in str(caught.value) and "example.org" not in str(caught.value)
        _expect(opened, "files", [])

    @pytest.mark.parametrize(
        ("tags", "field"),
        [
            (["ok", "a,b"], "tags[1]"),
            (["with space"], "tags[0]"),
            ([""], "tags[0]"),
            (["x" * 1025], "tags[0]"),
        ],
    )
    def test_a_bad_tag_purges_nothing(self, opened: Opened, tags, field) -> None:
        with pytest.raises(InvalidPurgeError, match=rf"^cdn\.default: {field.replace('[', '.')}"):
            opened.cdn.purge_tags(tags)
        _expect(opened, "tags", [])

    def test_a_lone_string_is_refused_not_purged_letter_by_letter(self, opened: Opened) -> None:
        with pytest.raises(InvalidPurgeError, match="not one string"):
            opened.cdn.purge_urls("https://www.example.org/")
        with pytest.raises(InvalidPurgeError, match="not one string"):
            opened.cdn.purge_tags("home")
        with pytest.raises(InvalidPurgeError, match="list of strings"):
            opened.cdn.purge_tags(42)  # type: ignore[arg-type]
        _expect(opened, "files", [])
