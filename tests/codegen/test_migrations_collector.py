"""The ``migrations`` backend pauses the cyclic garbage collector only while it runs.

Building a big ``0001_initial`` allocates hundreds of thousands of acyclic objects, so
the backend switches the collector off for its own length (a third of its time on a
500-entity schema). These tests hold it to giving the collector back as it found it:
on, off, and after a migration that fails to load.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from toolkit_codegen.backends import BackendError, BackendOptions, generate
from toolkit_codegen.compiler import load_sources

#: Enough entities for the build to allocate past the collector's thresholds.
SCHEMA = "".join(
    f"""
entity Item{n} {{
  id: uuid @primary
  name: string @validate(min_len: 1, max_len: 10)
  size: int32 @default(1)
  created_at: timestamp @default(now())
  index(name)
}}
"""
    for n in range(40)
)


@pytest.fixture
def collector_state() -> Iterator[None]:
    """Restore the collector's state whatever a test leaves behind."""
    enabled = gc.isenabled()
    yield
    if enabled:
        gc.enable()
    else:
        gc.disable()


def _schema():  # type: ignore[no-untyped-def]
    loaded = load_sources({"app.toolkit": SCHEMA})
    assert loaded.ok, loaded.diagnostics
    return loaded.schema


def test_the_collector_is_off_during_the_build_and_on_again_after(
    collector_state: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolkit_codegen.backends import migrations

    build = migrations._generate
    seen: list[bool] = []

    def watched(*args: object, **kwargs: object) -> dict[str, str]:
        seen.append(gc.isenabled())  # the collector's state while the migration is built
        return build(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(migrations, "_generate", watched)
    gc.enable()
    files = generate("migrations", _schema(), BackendOptions())
    assert "migrations/0001_initial.py" in files
    assert seen == [False]
    assert gc.isenabled()


def test_a_disabled_collector_stays_disabled(collector_state: None) -> None:
    gc.disable()
    files = generate("migrations", _schema(), BackendOptions())
    assert "migrations/0001_initial.py" in files
    assert not gc.isenabled()


def test_the_collector_comes_back_when_the_backend_fails(collector_state: None) -> None:
    gc.enable()
    broken = BackendOptions(existing_migrations={"migrations/0001_initial.py": "def ("})
    with pytest.raises(BackendError) as raised:
        generate("migrations", _schema(), broken)
    assert "invalid Python" in str(raised.value.diagnostics[0])
    assert gc.isenabled()


def test_function_defaults_are_written_alike_on_every_field() -> None:
    """The serialiser's answer for ``uuid.uuid4`` / ``timezone.now`` is cached per build."""
    text = generate("migrations", _schema(), BackendOptions())["migrations/0001_initial.py"]
    assert "default=uuid.uuid4" in text and "default=django.utils.timezone.now" in text
    assert "import uuid" in text and "import django.utils.timezone" in text
