"""The ai battery's system checks: key, base URL, llm_d's model, TLS verification off."""

from __future__ import annotations

from toolkit_batteries.core.checks import service_checks
from toolkit_batteries.core.config import Config


def _ids(settings: dict) -> list[str]:
    return sorted(m.id for m in service_checks("ai", Config.load({"ai": settings}, {})))


def test_a_complete_configuration_passes() -> None:
    for adapter in ("llm_a", "llm_b", "llm_c"):
        assert _ids({"adapter": adapter, "options": {"api_key": "k"}}) == []
    options = {"api_key": "k", "base_url": "https://gateway.example.com/v1", "model": "m"}
    assert _ids({"adapter": "llm_d", "options": options}) == []


def test_a_missing_key_is_e002_without_values() -> None:
    messages = service_checks("ai", Config.load({"ai": {"adapter": "anthropic"}}, {}))
    assert [m.id for m in messages] == ["toolkit_ai.W002"]
    assert 'ai.default: option "api_key"' in messages[0].msg


def test_unusable_base_urls_are_e003() -> None:
    for url in (
        "http://api.example.com",
        "https://user:secret@api.example.com",
        "https://127.0.0.1",
    ):
        messages = service_checks(
            "ai",
            Config.load(
                {"ai": {"adapter": "llm_b", "options": {"api_key": "k", "base_url": url}}}, {}
            ),
        )
        assert [m.id for m in messages] == ["toolkit_ai.E003"], url
        assert "secret" not in messages[0].msg and "127.0.0.1" not in messages[0].msg
    relaxed = {
        "api_key": "k",
        "base_url": "http://127.0.0.1:8080/v1",
        "allow_insecure": True,
        "allow_private": True,
    }
    assert _ids({"adapter": "llm_b", "options": relaxed}) == []


def test_llm_d_needs_a_base_url_and_a_model() -> None:
    assert _ids({"adapter": "llm_d", "options": {"api_key": "k"}}) == [
        "toolkit_ai.E003",
        "toolkit_ai.E004",
    ]


def test_insecure_skip_verify_is_w001() -> None:
    options = {"api_key": "k", "insecure_skip_verify": True}
    assert _ids({"adapter": "gemini", "options": options}) == ["toolkit_ai.W001"]
