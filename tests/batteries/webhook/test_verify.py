"""``verify()`` for receivers, against signatures made here by hand, and the view decorator."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from datetime import timedelta

import pytest
from django.test import RequestFactory

from toolkit_batteries.webhook import SignatureError, verify, webhook_receiver
from toolkit_batteries.webhook.adapters.http import HTTPWebhook
from toolkit_batteries.webhook.options import WebhookOptions

SECRET = "whsec_receiver_side"
BODY = b'{"id":7,"event":"order.paid"}'
NOW = 1_800_000_000


def headers_for(
    body: bytes, secret: str, stamp: int, *, ident: str = "msg_1", event: str = "order.paid"
) -> dict[str, str]:
    """Build the headers a sender makes, by the documented format, without the battery."""
    key = secret.encode()
    bound = f"{ident}.{stamp}.{event}\n".encode() + body
    digest = base64.b64encode(hmac.new(key, bound, hashlib.sha256).digest()).decode()
    return {
        "Webhook-Id": ident,
        "Webhook-Event": event,
        "Webhook-Timestamp": str(stamp),
        "Webhook-Signature": f"v1e,{digest}",
    }


def clock(at: float):
    return lambda: at


def test_a_signature_made_by_hand_verifies():
    headers = headers_for(BODY, SECRET, NOW)
    assert verify(headers, BODY, SECRET, now=clock(NOW)) == NOW


def test_header_names_match_ignoring_case():
    headers = {k.lower(): v for k, v in headers_for(BODY, SECRET, NOW).items()}
    assert verify(headers, BODY, SECRET, now=clock(NOW + 10)) == NOW


@pytest.mark.parametrize("drift", [301, -301, 3600, -86400])
def test_a_timestamp_outside_the_replay_window_is_refused(drift):
    headers = headers_for(BODY, SECRET, NOW)
    with pytest.raises(SignatureError, match="replay tolerance"):
        verify(headers, BODY, SECRET, now=clock(NOW + drift))


@pytest.mark.parametrize("drift", [0, 299, -299, 300, -300])
def test_a_timestamp_inside_the_window_passes(drift):
    assert verify(headers_for(BODY, SECRET, NOW), BODY, SECRET, now=clock(NOW + drift)) == NOW


def test_a_replayed_request_is_refused_once_the_window_has_passed():
    headers = headers_for(BODY, SECRET, int(time.time()))
    verify(headers, BODY, SECRET)  # fresh: accepted
    with pytest.raises(SignatureError):
        verify(headers, BODY, SECRET, now=lambda: time.time() + 301)


def test_the_tolerance_is_configurable_and_takes_a_timedelta():
    headers = headers_for(BODY, SECRET, NOW)
    with pytest.raises(SignatureError):
        verify(headers, BODY, SECRET, tolerance=timedelta(seconds=10), now=clock(NOW + 11))
    assert verify(headers, BODY, SECRET, tolerance=10, now=clock(NOW + 10)) == NOW


def test_the_instance_uses_its_replay_tolerance_option():
    hook = HTTPWebhook(WebhookOptions(replay_tolerance=timedelta(seconds=30)), clock=clock(NOW))
    try:
        assert hook.verify(headers_for(BODY, SECRET, NOW - 30), BODY, SECRET) == NOW - 30
        with pytest.raises(SignatureError):
            hook.verify(headers_for(BODY, SECRET, NOW - 31), BODY, SECRET)
    finally:
        hook.close()


@pytest.mark.parametrize(
    ("body", "secret", "reason"),
    [
        (BODY + b" ", SECRET, "no signature matches"),
        (b'{"id":8,"event":"order.paid"}', SECRET, "no signature matches"),
        (BODY, "another-secret", "no signature matches"),
    ],
)
def test_a_tampered_body_or_a_wrong_secret_is_refused(body, secret, reason):
    with pytest.raises(SignatureError, match=reason):
        verify(headers_for(BODY, SECRET, NOW), body, secret, now=clock(NOW))


def test_a_timestamp_changed_after_signing_is_refused():
    headers = headers_for(BODY, SECRET, NOW)
    headers["Webhook-Timestamp"] = str(NOW + 1)
    with pytest.raises(SignatureError, match="no signature matches"):
        verify(headers, BODY, SECRET, now=clock(NOW))


@pytest.mark.parametrize(
    ("headers", "reason"),
    [
        ({}, "Webhook-Timestamp header is missing"),
        ({"Webhook-Timestamp": str(NOW)}, "Webhook-Signature header is missing"),
        ({"Webhook-Timestamp": "soon", "Webhook-Signature": "v1,00"}, "not Unix seconds"),
        ({"Webhook-Timestamp": "-5", "Webhook-Signature": "v1,00"}, "not Unix seconds"),
        (
            {"Webhook-Id": "m", "Webhook-Timestamp": str(NOW), "Webhook-Signature": "v2,abc"},
            "no v1 signature",
        ),
        (
            {
                "Webhook-Id": "m",
                "Webhook-Event": "e",
                "Webhook-Timestamp": str(NOW),
                "Webhook-Signature": "v1,abc",
            },
            "no v1e signature",
        ),
        ({"Webhook-Timestamp": str(NOW), "Webhook-Signature": "v1,abc"}, "Webhook-Id"),
        ({"Webhook-Timestamp": str(NOW), "Webhook-Signature": "x" * 5000}, "too long"),
    ],
)
def test_malformed_headers_are_refused_with_the_reason(headers, reason):
    with pytest.raises(SignatureError, match=reason) as info:
        verify(headers, BODY, SECRET, now=clock(NOW))
    assert SECRET not in str(info.value)


def test_rotation_any_listed_signature_matching_any_secret_passes():
    old = headers_for(BODY, "old", NOW)["Webhook-Signature"]
    new = headers_for(BODY, "new", NOW)["Webhook-Signature"]
    both = {
        **headers_for(BODY, "new", NOW),
        "Webhook-Signature": f"{old} {new} v2,future",
    }
    assert verify(both, BODY, "new", now=clock(NOW)) == NOW
    assert verify(both, BODY, "old", now=clock(NOW)) == NOW
    only_new = {**headers_for(BODY, "new", NOW), "Webhook-Signature": new}
    assert verify(only_new, BODY, ["old", "new"], now=clock(NOW)) == NOW
    with pytest.raises(SignatureError):
        verify(only_new, BODY, ["old", "older"], now=clock(NOW))


def test_bad_secrets_are_refused_before_anything_is_compared():
    headers = headers_for(BODY, SECRET, NOW)
    with pytest.raises(ValueError):
        verify(headers, BODY, "", now=clock(NOW))
    with pytest.raises(ValueError):
        verify(headers, BODY, [], now=clock(NOW))
    with pytest.raises(TypeError):
        verify(headers, "text body", SECRET, now=clock(NOW))  # type: ignore[arg-type]


def test_verification_compares_in_constant_time(monkeypatch):
    seen = []
    real = hmac.compare_digest

    def spy(a, b):
        seen.append((a, b))
        return real(a, b)

    monkeypatch.setattr("toolkit_batteries.webhook.signing.hmac.compare_digest", spy)
    verify(headers_for(BODY, SECRET, NOW), BODY, [SECRET, "other"], now=clock(NOW))
    assert len(seen) == 2  # every (secret, signature) pair, the match did not stop the loop


# ---------------------------------------------------------------------- the decorator


@webhook_receiver(secret=[SECRET])
def orders_hook(request):
    from django.http import JsonResponse

    return JsonResponse({"seen": json.loads(request.body)["id"], "at": request.webhook_timestamp})


def post(body: bytes, headers: dict[str, str]):
    meta = {"HTTP_" + k.upper().replace("-", "_"): v for k, v in headers.items()}
    return RequestFactory().post("/hook", data=body, content_type="application/json", **meta)


def test_the_decorator_runs_the_view_for_a_verified_delivery():
    stamp = int(time.time())
    response = orders_hook(post(BODY, headers_for(BODY, SECRET, stamp)))
    assert response.status_code == 200
    assert json.loads(response.content) == {"seen": 7, "at": stamp}


def test_the_decorator_answers_400_and_never_runs_the_view_otherwise(caplog):
    ran = []

    @webhook_receiver(secret=lambda request: SECRET, tolerance=60)
    def view(request):
        ran.append(request)

    stale = headers_for(BODY, SECRET, int(time.time()) - 61)
    forged = headers_for(BODY, "guess", int(time.time()))
    for headers in (stale, forged, {}):
        response = view(post(BODY, headers))
        assert response.status_code == 400
        assert json.loads(response.content) == {"error": "invalid_signature"}
    assert ran == []
    assert SECRET not in caplog.text
