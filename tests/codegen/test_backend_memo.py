"""What the backends derive once per schema (``per_schema``) answers as the scan did."""

from __future__ import annotations

import pytest

from toolkit_codegen.backends import (
    BackendError,
    BackendOptions,
    entity_named,
    generate,
    module_named,
)
from toolkit_codegen.backends._django_models import build_specs
from toolkit_codegen.compiler import load_sources
from toolkit_codegen.nodes import Schema

TEXT = """
entity User {
  id: uuid @primary
  class: string
}
entity Post {
  id: uuid @primary
  title: string
}
message Note {
  text: string
}
"""


def _load(text: str) -> Schema:
    loaded = load_sources({"app.toolkit": text})
    assert loaded.ok, [str(d) for d in loaded.diagnostics]
    return loaded.schema


def test_name_checks_keep_each_backends_phase_on_the_same_schema() -> None:
    """The walk is shared between backends; the diagnostics still name the backend."""
    schema = _load(TEXT)
    for backend in ("models", "serializers", "models"):
        with pytest.raises(BackendError) as caught:
            generate(backend, schema, BackendOptions())
        assert [d.phase for d in caught.value.diagnostics] == [backend]
        assert "field class is a Python keyword" in caught.value.diagnostics[0].message


def test_indexes_answer_what_the_schema_scans_answer() -> None:
    schema = _load(TEXT.replace("class: string", "kind: string"))
    for name in ("User", "Post", "Note", "Missing"):
        assert entity_named(schema, name) is schema.entity(name)
        assert module_named(schema, name) is schema.module_of(name)
    assert entity_named(schema, "Note") is None


def test_a_new_schema_is_derived_afresh() -> None:
    """The memo holds the last schema by identity: a different schema is not served stale."""
    first = _load(TEXT.replace("class: string", "kind: string"))
    second = _load(TEXT.replace("class: string", "body: string"))
    assert [f.name for f in build_specs(first)[0].fields] == ["id", "kind"]
    assert [f.name for f in build_specs(second)[0].fields] == ["id", "body"]
    assert build_specs(second) is build_specs(second)
    assert [f.name for f in build_specs(first)[0].fields] == ["id", "kind"]
