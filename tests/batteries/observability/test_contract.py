"""One contract, run on every observability adapter (``stdout``, ``noop``, ``otlp``)."""

from __future__ import annotations

import threading

import pytest

from tests.support.batteries import assert_opened_as
from toolkit_batteries.observability import Observability, SpanHandle

from .conftest import Opened


class TestObservabilityContract:
    def test_is_the_battery_class(self, opened: Opened) -> None:
        assert_opened_as(
            opened.obs, Observability, opened.variant, opened.container, "observability"
        )

    def test_span_yields_a_handle_and_emits_one_named_span(self, opened: Opened) -> None:
        with opened.obs.span("report.build", rows=3) as span:
            assert isinstance(span, SpanHandle)
            span.set_attribute("report.kind", "nightly")
        spans = opened.spans()
        if not opened.exports:
            assert spans == []
            return
        [only] = [s for s in spans if s["name"] == "report.build"]
        assert only["attributes"]["rows"] == 3
        assert only["attributes"]["report.kind"] == "nightly"
        assert only["parent_id"] is None
        assert len(only["trace_id"]) == 32 and len(only["span_id"]) == 16

    def test_children_point_at_their_parent(self, opened: Opened) -> None:
        with opened.obs.span("outer"):
            with opened.obs.span("middle"), opened.obs.span("inner"):
                pass
            with opened.obs.span("sibling"):
                pass
        spans = {s["name"]: s for s in opened.spans()}
        if not opened.exports:
            assert spans == {}
            return
        assert spans["outer"]["parent_id"] is None
        assert spans["middle"]["parent_id"] == spans["outer"]["span_id"]
        assert spans["inner"]["parent_id"] == spans["middle"]["span_id"]
        assert spans["sibling"]["parent_id"] == spans["outer"]["span_id"]
        assert len({s["trace_id"] for s in spans.values()}) == 1
        assert len({s["span_id"] for s in spans.values()}) == 4

    def test_separate_roots_are_separate_traces(self, opened: Opened) -> None:
        with opened.obs.span("first"):
            pass
        with opened.obs.span("second"):
            pass
        spans = {s["name"]: s for s in opened.spans()}
        if opened.exports:
            assert spans["first"]["trace_id"] != spans["second"]["trace_id"]
            assert spans["second"]["parent_id"] is None

    def test_operation_carries_service_and_instance(self, opened: Opened) -> None:
        with opened.obs.operation("queue", "jobs", "push", queue="emails"):
            pass
        spans = opened.spans()
        if not opened.exports:
            assert spans == []
            return
        [span] = spans
        assert span["name"] == "queue.push"
        assert span["attributes"]["toolkit.service"] == "queue"
        assert span["attributes"]["toolkit.instance"] == "jobs"
        assert span["attributes"]["queue"] == "emails"
        assert span["resource"]["service.name"] == "orders"
        assert span["resource"]["toolkit.instance"] == "default"

    def test_an_error_propagates_and_marks_the_span(self, opened: Opened) -> None:
        with pytest.raises(KeyError), opened.obs.span("failing"):
            raise KeyError("a message that is not recorded")
        spans = opened.spans()
        if opened.exports:
            [span] = spans
            assert span["attributes"]["exception.type"] == "KeyError"
            assert span["status"] in ("error", 2)  # stdout / OTLP STATUS_CODE_ERROR
            assert "not recorded" not in repr(span)

    def test_string_attributes_are_capped(self, opened: Opened) -> None:
        with opened.obs.span("big", blob="x" * 10_000, skipped=None, obj=object()):
            pass
        spans = opened.spans()
        if opened.exports:
            [span] = spans
            assert len(span["attributes"]["blob"]) == 4096
            assert "skipped" not in span["attributes"]
            assert span["attributes"]["obj"].startswith("<object object")

    def test_bad_arguments_are_refused(self, opened: Opened) -> None:
        with pytest.raises(ValueError):
            opened.obs.span("")
        with pytest.raises(ValueError):
            opened.obs.add("requests", -1)

    def test_metrics_and_flush(self, opened: Opened) -> None:
        opened.obs.add("jobs.pushed", 2, queue="emails")
        opened.obs.add("jobs.pushed", 3, queue="emails")
        opened.obs.record("job.seconds", 0.5)
        assert opened.obs.flush(5.0) is True

    def test_threads_keep_their_own_parents(self, opened: Opened) -> None:
        def work(n: int) -> None:
            with opened.obs.span(f"t{n}"), opened.obs.span(f"t{n}.child"):
                pass

        threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(5)
        spans = {s["name"]: s for s in opened.spans()}
        if opened.exports:
            for n in range(4):
                assert spans[f"t{n}.child"]["parent_id"] == spans[f"t{n}"]["span_id"]
                assert spans[f"t{n}"]["parent_id"] is None
