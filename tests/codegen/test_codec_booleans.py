"""The codec's boolean fast path answers what DRF's ``BooleanField`` answers, for any value."""

from __future__ import annotations

import pytest
from rest_framework import serializers

from toolkit_batteries.api_runtime.codec import _Codec
from toolkit_batteries.workflow.models import WorkflowRun


class _RunSerializer(serializers.Serializer):
    id = serializers.CharField()
    cancel_requested = serializers.BooleanField()
    maybe = serializers.BooleanField(allow_null=True, source="waiting_for")


@pytest.mark.parametrize("value", [True, False, 1, 0, "yes", "off", "", "null", "x", 2.5])
def test_a_boolean_is_answered_as_drf_answers_it(value):
    run = WorkflowRun(id="r1", cancel_requested=value, waiting_for=value)
    fast = _Codec(_RunSerializer).represent(run)
    assert fast == _RunSerializer().to_representation(run)
    assert type(fast["cancel_requested"]) is type(_RunSerializer(run).data["cancel_requested"])
