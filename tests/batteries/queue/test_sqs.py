"""What only the ``sqs`` adapter has: SQS's naming rules, its limits, a lost endpoint.

The delivery contract itself runs on ``sqs`` in ``test_contract.py`` (moto's server).
"""

from __future__ import annotations

import re
import uuid

import pytest

from tests.batteries.queue.sqs_server import sqs_block
from tests.ports import free_port
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import InvalidOptionsError, ServiceUnavailableError
from toolkit_batteries.queue.adapters.sqs import MAX_DELAY, queue_name

SQS_NAME = re.compile(r"^[A-Za-z0-9_-]{1,80}$")


def open_queue(block: dict) -> tuple[Container, object]:
    container = Container(Config.load({"queue": block}, {}))
    return container, container.queue()


@pytest.mark.parametrize(
    "topic", ["emails", "a.b/c:d", "x" * 200, "ünïcode", "a_b", "a-b", "A.b", "a:b"]
)
def test_every_topic_gets_a_valid_distinct_queue_name(topic):
    name = queue_name("app-", topic)
    dead = queue_name("app-", topic, dead=True)
    assert SQS_NAME.match(name) and SQS_NAME.match(dead)
    assert dead == name + "-dead" and name.startswith("app-")
    # Topics that sanitize alike ("a.b" and "a:b" both read "a_b") keep distinct queues.
    others = {"a.b/c:d", "a_b_c_d", "a.b", "a:b", "a_b"} - {topic}
    assert name not in {queue_name("app-", other) for other in others}


def test_a_plain_topic_keeps_its_own_name():
    assert queue_name("app-", "emails") == "app-emails"


def test_a_delay_over_sqs_limit_is_refused_and_nothing_is_sent(sqs_server):
    container, queue = open_queue(sqs_block(sqs_server, f"t{uuid.uuid4().hex[:12]}-"))
    try:
        with pytest.raises(ValueError, match=f"at most {MAX_DELAY} seconds"):
            queue.push("t", b"x", delay=MAX_DELAY + 1)
        assert queue.size("t") == 0
        queue.push("t", b"x", delay=MAX_DELAY)  # the limit itself is accepted
        assert queue.size("t") == 1
    finally:
        container.close()


def test_a_prefix_sqs_cannot_name_is_refused_at_open(sqs_server):
    with pytest.raises(InvalidOptionsError, match="prefix"):
        open_queue(sqs_block(sqs_server, "has.dots"))


def test_an_unreachable_endpoint_is_service_unavailable_without_secrets():
    secret = "wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY"
    block = {
        "adapter": "sqs",
        "options": {
            "endpoint": f"http://127.0.0.1:{free_port()}",
            "access_key_id": "AKIDEXAMPLE",
            "secret_access_key": secret,
        },
    }
    with pytest.raises(ServiceUnavailableError) as caught:
        open_queue(block)
    message = str(caught.value)
    assert message.startswith("queue.default: unavailable: cannot reach the SQS endpoint (")
    assert secret not in message and "127.0.0.1" not in message
    assert caught.value.__cause__ is None and caught.value.__suppress_context__
