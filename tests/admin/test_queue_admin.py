"""The queue's admin pages through Django's test client: listing, previews, actions."""

from __future__ import annotations

import pytest

from toolkit_batteries.queue.admin import PREVIEW_LENGTH, preview
from toolkit_batteries.queue.models import DeadLetter, Message

from .conftest import dead_letter

DEAD_LIST = "/admin/toolkit_queue/deadletter/"
MESSAGES = "/admin/toolkit_queue/message/"


def test_preview_cuts_long_payloads_and_escapes_control_characters():
    assert preview(b"short") == "short"
    long = preview(b"a" * 500)
    assert long == "a" * PREVIEW_LENGTH + "…"
    assert preview(b"line\nbreak\x00") == "line\\nbreak\\x00"
    assert preview(b"\xff\xfe") == "\ufffd\ufffd"


def test_dead_letters_are_listed_with_a_truncated_payload(admin_client, queue):
    body = b'{"to": "ada@example.com", "note": "' + b"x" * 300 + b'TAIL-NEVER-SHOWN"}'
    dead_letter(queue, "emails", body, "smtp refused")
    page = admin_client.get(DEAD_LIST).content.decode()
    assert "emails" in page and "smtp refused" in page
    assert "{&quot;to&quot;: &quot;ada@example.com" in page
    assert "TAIL-NEVER-SHOWN" not in page
    assert "smtp refused" in admin_client.get(DEAD_LIST, {"topic": "emails"}).content.decode()
    assert "smtp refused" not in admin_client.get(DEAD_LIST, {"topic": "other"}).content.decode()


def test_messages_are_listed_with_their_state_and_filters(admin_client, queue):
    queue.push("emails", b"waiting")
    queue.push("emails", b"later", delay=3600)
    page = admin_client.get(MESSAGES).content.decode()
    assert "ready" in page and "delayed" in page
    leased = admin_client.get(MESSAGES, {"leased__exact": "1"}).content.decode()
    assert "waiting" not in leased


def test_requeue_action_moves_the_selected_dead_letters_back(admin_client, queue):
    chosen = dead_letter(queue, "emails", b"retry me", "boom")
    other = dead_letter(queue, "emails", b"leave me", "boom")
    response = admin_client.post(
        DEAD_LIST, {"action": "requeue", "_selected_action": [chosen]}, follow=True
    )
    assert "Requeued 1 dead letter(s)." in response.content.decode()
    assert list(DeadLetter.objects.values_list("id", flat=True)) == [int(other)]
    assert Message.objects.get(id=int(chosen)).attempts == 0
    message = queue.pop("emails", timeout=0)
    assert (message.id, message.body, message.attempts) == (chosen, b"retry me", 1)


@pytest.mark.parametrize(("page", "model"), [(DEAD_LIST, DeadLetter), (MESSAGES, Message)])
def test_purge_action_deletes_the_selected_rows(admin_client, queue, page, model):
    first = dead_letter(queue, "t", b"one", "x") if model is DeadLetter else queue.push("t", b"1")
    second = dead_letter(queue, "t", b"two", "x") if model is DeadLetter else queue.push("t", b"2")
    response = admin_client.post(
        page, {"action": "purge", "_selected_action": [first]}, follow=True
    )
    assert "Purged 1 row(s)." in response.content.decode()
    assert list(model.objects.values_list("id", flat=True)) == [int(second)]


def test_rows_cannot_be_added_or_edited(admin_client, queue):
    assert admin_client.get(f"{DEAD_LIST}add/").status_code == 403
    letter = dead_letter(queue, "t", b"x", "why")
    detail = admin_client.get(f"{DEAD_LIST}{letter}/change/")
    assert detail.status_code == 200  # view only
    assert 'name="reason"' not in detail.content.decode()
    assert "delete_selected" not in admin_client.get(DEAD_LIST).content.decode()
