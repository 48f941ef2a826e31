"""The ``workflows`` backend: ``generated/workflows.py``, one workflow per ``saga``.

``saga PlaceOrder { step reserve { execute: Stock.Reserve  compensate: Stock.Release } }``
becomes a :class:`toolkit_batteries.workflow.WorkflowDefinition` named ``PlaceOrder``,
registered when the module is imported (the app's ``workflows.py``, created once, imports
it; the workflow battery imports every installed app's ``workflows`` module on its
workers). Each step calls the rpc's handler method (``handlers.Stock().reserve``) with
no request (``None``) and the parameters it names taken from the run's input (uuid,
timestamp and date text converted), and records
the result as JSON (a model instance becomes a dict of its columns). Rpcs may live in
other modules: the handlers of every module share the app's ``handlers.py``. A schema
without sagas gets no file.
"""

from __future__ import annotations

from ..nodes import RpcRef, Schema
from ..pysource import Call, List, Raw, Tuple, assign
from . import BackendOptions
from ._django_common import PY_HEADER, handler_name

__all__ = ["generate", "render_app_workflows"]

#: Parameter types a step converts from their JSON text.
_TYPED = ("uuid", "timestamp", "date")

_RUNTIME = '''def _json(value: Any) -> Any:
    """Return a handler's result as a JSON value (a model instance: its columns)."""
    from django.core.serializers.json import DjangoJSONEncoder
    from django.db.models import Model

    if isinstance(value, Model):
        value = {f.attname: getattr(value, f.attname) for f in value._meta.concrete_fields}
    elif hasattr(value, "items") and hasattr(value, "next_cursor"):  # a Page
        value = {"items": [_json(i) for i in value.items], "next_cursor": value.next_cursor}
    return json.loads(json.dumps(value, cls=DjangoJSONEncoder))


def _typed(kind: str, value: Any) -> Any:
    """Return a JSON input value as the handler's parameter type (uuid, datetime, date)."""
    if value is None or not isinstance(value, str):
        return value
    if kind == "uuid":
        return uuid.UUID(value)
    if kind == "timestamp":
        return datetime.datetime.fromisoformat(value)
    if kind == "date":
        return datetime.date.fromisoformat(value)
    return value


def _rpc(
    service: str, method: str, params: tuple[tuple[str, str], ...], paginated: bool = False
) -> Callable[[StepContext], Any]:
    """Return a step function calling ``handlers.<service>().<method>`` with the run input.

    ``params`` pairs each parameter with its scalar kind, so a uuid travels as text in the
    run's JSON input and reaches the handler as a ``uuid.UUID``.
    """

    def run(ctx: StepContext) -> Any:
        from .. import handlers

        given = ctx.input if isinstance(ctx.input, dict) else {}
        kwargs = {name: _typed(kind, given[name]) for name, kind in params if name in given}
        if paginated:
            kwargs.update(cursor=given.get("cursor"), limit=given.get("limit", 50))
        return _json(getattr(getattr(handlers, service)(), method)(None, **kwargs))

    run.__name__ = run.__qualname__ = f"{service}.{method}"
    return run'''


def _step_call(schema: Schema, ref: RpcRef) -> Call:
    service = next(s for s in schema.services if s.name == ref.service)
    rpc = next(r for r in service.rpcs if r.name == ref.rpc)
    kinds = [Tuple([p.name, p.type.name if p.type.name in _TYPED else ""]) for p in rpc.params]
    args: list[object] = [ref.service, handler_name(rpc), Tuple(kinds)]
    if rpc.paginated:
        args.append(Raw("True"))
    return Call("_rpc", args)


def generate(schema: Schema, options: BackendOptions) -> dict[str, str]:
    """Return ``{"generated/workflows.py": text}``, or nothing for a schema without sagas."""
    if not schema.sagas:
        return {}
    definitions = []
    for saga in schema.sagas:
        steps = []
        for step in saga.steps:
            if step.execute is None:
                continue  # validation reports it; a valid schema never gets here
            kwargs: list[tuple[str, object]] = [("execute", _step_call(schema, step.execute))]
            if step.compensate is not None:
                kwargs.append(("compensate", _step_call(schema, step.compensate)))
            if step.pivot:
                kwargs.append(("pivot", Raw("True")))
            steps.append(Call("Step", [step.name], kwargs))
        definitions.append(
            Call("WorkflowDefinition", [saga.name], [("steps", List(steps, explode=True))])
        )
    text = "\n\n".join(
        [
            PY_HEADER + "\n" + '"""The schema\'s sagas, as workflow battery definitions."""',
            "from __future__ import annotations",
            "import datetime\nimport json\nimport uuid\nfrom collections.abc import Callable\n"
            "from typing import Any",
            "from toolkit_batteries.workflow import "
            "Step, StepContext, WorkflowDefinition, register",
            '__all__ = ["DEFINITIONS"]' + "\n\n\n" + _RUNTIME + "\n",
            assign("DEFINITIONS", List(definitions, explode=True)),
            "for _definition in DEFINITIONS:\n    register(_definition)",
        ]
    )
    return {"generated/workflows.py": text + "\n"}


def render_app_workflows(app_label: str) -> str:
    """Return the app's ``workflows.py``: registers the schema's sagas, room for the user's."""
    return (
        f'"""Workflows of the {app_label} app, imported by the workflow battery\'s workers.\n\n'
        "The schema's ``saga`` declarations are generated into ``generated/workflows.py``\n"
        "(rewritten by ``manage.py compile_schema``) and registered by importing it; register\n"
        "hand-written ``WorkflowDefinition``s below.\n"
        '"""\n\n'
        "try:\n"
        "    from .generated import workflows as generated  # noqa: F401  (registers them)\n"
        "except ImportError as exc:  # not compiled yet, or no saga left\n"
        '    if getattr(exc, "name", None) != f"{__package__}.generated.workflows":\n'
        "        raise\n"
    )
