"""Errors raised by the toolkit kernel.

Every message names services, instances, fields and adapters, never option values, so an
error can be logged or shown on a terminal without leaking a secret.

ToolkitError
├── ConfigurationError (ImproperlyConfigured)  bad configuration, found at load or open
│   ├── InvalidOptionsError (ValueError)       a value does not parse or is out of range
│   ├── UnknownServiceError (KeyError)         a service name the catalog does not know
│   ├── UnknownFieldError (KeyError)           an option key the service does not declare
│   ├── UnknownAdapterError (LookupError)      an adapter name no alias table resolves
│   ├── UnknownInstanceError (KeyError)        an instance that is not configured
│   ├── DispatcherRequiredError                a scheduler `options` block in settings
│   └── MissingExtraError (ImportError)        an adapter's optional dependency is absent
├── InvalidArgumentError (ValueError)          family: a caller's argument breaks a rule
├── NotFoundError (LookupError)                family: no such object
├── NotSupportedError                          family: an adapter lacks an operation
├── WebhookTooLargeError                       family: a webhook body over max_webhook_bytes
├── ServiceUnavailableError                    an open failed: a server is unreachable
└── CloseError                                 inside the ExceptionGroup of Container.close()
    ├── CloseTimeoutError (TimeoutError)       a service did not close within its limit
    └── ClosePanicError                        a close crashed with an unexpected exception

Configuration errors deliberately sit outside runtime errors so that code that swallows
runtime failures (fail-silently paths) can never hide a broken configuration.

:data:`HTTP_STATUS` is the one table from an error code (``{"error": {"code": ...}}``) to
its HTTP status, for every battery, the generated views and the compiler alike (see
``docs/http.md``).
"""

from __future__ import annotations

import difflib
import inspect
import string
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from types import MappingProxyType
from typing import Any, ClassVar

from django.core.exceptions import ImproperlyConfigured

# The compiler cannot import this package (it stays standalone), so the gRPC codes a
# schema may declare keep their statuses in its syntax tree; this module adds only the
# transport codes no schema declares. Either way one code has one status.
from toolkit_codegen.statuses import ERROR_STATUS as _SCHEMA_ERROR_STATUS

__all__ = [
    "HTTP_STATUS",
    "CloseError",
    "ClosePanicError",
    "CloseTimeoutError",
    "ConfigurationError",
    "DispatcherRequiredError",
    "InvalidArgumentError",
    "InvalidOptionsError",
    "MissingExtraError",
    "NotFoundError",
    "NotSupportedError",
    "ServiceUnavailableError",
    "ToolkitError",
    "UnknownAdapterError",
    "UnknownFieldError",
    "UnknownInstanceError",
    "UnknownServiceError",
    "WebhookTooLargeError",
    "did_you_mean",
    "http_status",
]

#: Error code -> HTTP status: the gRPC-canonical codes (``failed_precondition`` is 400,
#: ``unavailable`` 503, ...) plus the transport's own. Read-only.
HTTP_STATUS: Mapping[str, int] = MappingProxyType(
    {
        **_SCHEMA_ERROR_STATUS,
        "method_not_allowed": 405,
        "payload_too_large": 413,
        "unsupported_media_type": 415,
    }
)


def http_status(code: str) -> int:
    """Return the HTTP status of error ``code``; raise ``KeyError`` for an unknown code."""
    return HTTP_STATUS[code]


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """Return ``' (did you mean "x"?)'`` for the closest candidate, or an empty string."""
    matches = difflib.get_close_matches(name, sorted(candidates), n=1, cutoff=0.6)
    return f' (did you mean "{matches[0]}"?)' if matches else ""


class ToolkitError(Exception):
    """Root of every error the toolkit raises on purpose.

    A subclass whose message is only its arguments put into words declares it instead of
    writing an ``__init__``: ``template`` is the message, and the names it holds are the
    constructor's arguments, in the order they first appear (each is kept as an attribute
    of the same name)::

        class QueueClosedError(QueueError, RuntimeError):
            code = "queue_closed"
            template = "queue.{instance}: the queue is closed"

    so the dozens of one-message errors across the batteries are declarations, each name
    written once, and the rule "an error keeps what it names" is written once. ``params``
    is declared only where the arguments differ from the template's names (another order,
    or an argument kept but not shown).
    """

    #: A stable, machine-readable code (used by the CLI's JSON envelopes).
    code = "toolkit_error"
    #: With ``template``: the constructor's arguments, in order, each kept as an attribute;
    #: derived from ``template`` unless the class declares it.
    params: ClassVar[tuple[str, ...]] = ()
    #: The message, formatted with ``params``; a class that sets it gets its ``__init__``.
    #: A ``{service}`` in it is no argument: it is the raising class's ``service``
    #: attribute, so a family declared once here serves every battery (see
    #: :class:`NotSupportedError`).
    template: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "template" in cls.__dict__:
            named = tuple(name for name in _template_names(cls.template) if name != "service")
            if "params" not in cls.__dict__:
                cls.params = named
            elif unknown := sorted(set(named) - set(cls.params)):
                # Caught when the module is imported, not when the error is first raised.
                raise TypeError(f"{cls.__qualname__}.template names {unknown} outside params")
            cls.__init__ = _declared_init(cls)  # type: ignore[method-assign]

    def __str__(self) -> str:
        """Return the message as given, also for a ``KeyError`` (which would quote it)."""
        return str(self.args[0]) if len(self.args) == 1 else super().__str__()


def _template_names(template: str) -> tuple[str, ...]:
    """Return the argument names ``template`` formats, in the order they first appear."""
    parsed = string.Formatter().parse(template)
    fields = (field.partition(".")[0].partition("[")[0] for _, field, _, _ in parsed if field)
    return tuple(dict.fromkeys(fields))


def _declared_init(cls: type[ToolkitError]) -> Callable[..., None]:
    """Return the ``__init__`` of a declared error: bind, keep, format, pass on."""
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    signature = inspect.Signature([inspect.Parameter(name, kind) for name in ("self", *cls.params)])
    template = cls.template

    def __init__(self: ToolkitError, *args: Any, **kwargs: Any) -> None:
        values = signature.bind(self, *args, **kwargs).arguments
        del values["self"]
        for name, value in values.items():
            setattr(self, name, value)
        service = getattr(type(self), "service", "")  # a family's battery, see ``template``
        super(cls, self).__init__(template.format(**{"service": service, **values}))

    __init__.__signature__ = signature  # type: ignore[attr-defined]
    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    return __init__


class ConfigurationError(ToolkitError, ImproperlyConfigured):
    """The configuration is wrong; fix settings or environment, then restart."""

    code = "invalid_configuration"


class InvalidOptionsError(ConfigurationError, ValueError):
    """A field's value failed to parse or validate; the value itself is never echoed."""

    code = "invalid_options"

    def __init__(
        self,
        service: str,
        field: str,
        reason: str,
        *,
        instance: str = "default",
        source: str = "",
    ) -> None:
        self.service = service
        self.instance = instance
        self.field = field
        self.reason = reason
        self.source = source
        where = f" (from {source})" if source else ""
        super().__init__(f'{service}.{instance}: option "{field}" {reason}{where}')


class UnknownServiceError(ConfigurationError, KeyError):
    """A configuration block names a service the catalog does not know."""

    code = "unknown_service"

    def __init__(self, service: str, known: Iterable[str]) -> None:
        self.service = service
        super().__init__(f'unknown service "{service}"{did_you_mean(service, known)}')


class UnknownFieldError(ConfigurationError, KeyError):
    """A configuration block holds an option key its service does not declare."""

    code = "unknown_field"

    def __init__(
        self, service: str, field: str, known: Iterable[str], *, instance: str = "default"
    ):
        self.service = service
        self.instance = instance
        self.field = field
        super().__init__(
            f'{service}.{instance}: unknown option "{field}"{did_you_mean(field, known)}'
        )


class UnknownAdapterError(ConfigurationError, LookupError):
    """An adapter name that neither the alias table nor a dotted path resolves."""

    code = "unknown_adapter"

    def __init__(self, service: str, adapter: str, available: Iterable[str], reason: str = ""):
        self.service = service
        self.adapter = adapter
        self.available = tuple(sorted(available))
        listed = ", ".join(self.available) or "none yet"
        detail = f": {reason}" if reason else did_you_mean(adapter, self.available)
        super().__init__(f'{service}: unknown adapter "{adapter}"{detail} (available: {listed})')


class UnknownInstanceError(ConfigurationError, KeyError):
    """An accessor asked for an instance that no layer configures."""

    code = "unknown_instance"

    def __init__(self, service: str, instance: str, known: Iterable[str]) -> None:
        self.service = service
        self.instance = instance
        super().__init__(
            f'{service}: no instance "{instance}" is configured{did_you_mean(instance, known)}'
        )


class DispatcherRequiredError(ConfigurationError):
    """The scheduler's dispatcher is injected in code; a settings ``options`` block drops it."""

    code = "dispatcher_is_required"

    def __init__(self, instance: str = "default") -> None:
        self.instance = instance
        super().__init__(
            f"scheduler.{instance}: dispatcher_is_required: the scheduler takes no settings "
            '"options" block (its dispatcher is injected in code); set close_timeout, dsn and '
            "dedicated_pool through the environment instead"
        )


class MissingExtraError(ConfigurationError, ImportError):
    """An adapter needs an optional dependency that is not installed."""

    code = "missing_extra"

    def __init__(self, service: str, adapter: str, extra: str, module: str) -> None:
        self.service = service
        self.adapter = adapter
        self.extra = extra
        super().__init__(
            f'{service}: adapter "{adapter}" needs the "{module}" package; '
            f'install it with: pip install "django-toolkit[{extra}]"'
        )

    @classmethod
    @contextmanager
    def guard(cls, service: str, adapter: str, extra: str, module: str) -> Iterator[None]:
        """Turn an ``ImportError`` in the block (an adapter's vendor imports) into this error.

        Written once for every adapter module that imports an optional SDK at the top, so
        the message and the dropped import traceback (``from None``) cannot drift apart.
        """
        try:
            yield
        except ImportError:
            raise cls(service, adapter, extra, module) from None


class InvalidArgumentError(ToolkitError, ValueError):
    """Family: a caller's argument breaks a rule (``invalid_argument``, HTTP 400).

    The code and the ``ValueError`` go together everywhere; a battery's error that
    refuses an argument lists this first among its bases and declares only its message.
    """

    code = "invalid_argument"


class NotFoundError(ToolkitError, LookupError):
    """Family: no such object (``not_found``, HTTP 404), also a ``LookupError``."""

    code = "not_found"


class NotSupportedError(ToolkitError):
    """Family: an adapter cannot do this operation; the battery's subclass names the service.

    A battery declares ``class XNotSupportedError(NotSupportedError, XError)`` with
    ``XError.service = "x"``: the code and the message are written here once.
    """

    code = "unimplemented"
    template = '{service}.{instance}: adapter "{adapter}" does not support {operation}'


class WebhookTooLargeError(ToolkitError):
    """Family: a webhook body over ``max_webhook_bytes``, refused before it was parsed."""

    code = "payload_too_large"
    template = "{service}.{instance}: webhook body over max_webhook_bytes ({limit})"


class ServiceUnavailableError(ToolkitError):
    """A service could not reach its server; the message names the service, never the DSN."""

    code = "service_unavailable"

    def __init__(self, service: str, reason: str, *, instance: str = "default") -> None:
        self.service = service
        self.instance = instance
        super().__init__(f"{service}.{instance}: unavailable: {reason}")


class CloseError(ToolkitError):
    """Base of the errors gathered by :meth:`Container.close`."""

    code = "close_failed"

    def __init__(self, service: str, instance: str, message: str) -> None:
        self.service = service
        self.instance = instance
        super().__init__(f"{service}.{instance}: {message}")


class CloseTimeoutError(CloseError, TimeoutError):
    """A service's close did not finish within its time limit."""

    code = "close_timeout"

    def __init__(self, service: str, instance: str, timeout: float) -> None:
        self.timeout = timeout
        super().__init__(service, instance, f"close did not finish within {timeout:g}s")


class ClosePanicError(CloseError):
    """A service's close raised an unexpected exception (the Python face of a Go panic)."""

    code = "close_panic"

    def __init__(self, service: str, instance: str, cause: BaseException) -> None:
        self.cause = cause
        super().__init__(service, instance, f"close crashed with {type(cause).__name__}")
