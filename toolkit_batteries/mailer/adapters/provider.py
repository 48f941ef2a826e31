"""The ``provider`` mailer: hands checked messages to another Django e-mail backend.

This is how a project reaches an e-mail provider's HTTP API: ``backend_path`` names a
django-anymail backend (``anymail.backends.postmark.EmailBackend``,
``anymail.backends.amazon_ses.EmailBackend``, ...) configured as anymail documents (the
``ANYMAIL`` setting). The anymail backend works unchanged: ``django_email_settings`` puts
its dotted path in ``EMAIL_BACKEND``, so ``send_mail`` and ``mail_admins`` call it
directly, and ``services.mailer()`` returns this adapter, which adds the typed ``send``
and the ``max_message_size`` check, then calls the same backend class. Any other Django
e-mail backend works the same way.
"""

from __future__ import annotations

from typing import Any, ClassVar

from django.core.mail.backends.base import BaseEmailBackend

from toolkit_batteries.core.options import Where
from toolkit_batteries.core.tracing import traced

from ..base import SOURCE, Mailer, Prepared, logger

__all__ = ["ProviderMailer", "provider_backend"]


def provider_backend(path: str, instance: str = "default") -> type[BaseEmailBackend]:
    """Import the backend class ``path`` names; refuse an empty path or a non-backend."""
    from toolkit_batteries.core.loading import import_dotted

    where = Where("mailer", instance, SOURCE)
    text = str(path or "").strip()
    if not text:
        raise where.invalid("backend_path", "is required by the provider adapter")
    try:
        cls = import_dotted(text)
    except LookupError:
        raise where.invalid("backend_path", "does not import") from None
    if not (isinstance(cls, type) and issubclass(cls, BaseEmailBackend)):
        raise where.invalid("backend_path", "is not a Django e-mail backend class")
    if issubclass(cls, ProviderMailer):
        raise where.invalid("backend_path", "cannot be the provider adapter itself")
    return cls


@traced("_deliver")
class ProviderMailer(Mailer):
    """A mailer whose delivery is another Django e-mail backend (django-anymail's)."""

    adapter_name: ClassVar[str] = "provider"

    def __init__(self, fail_silently: bool = False, **kwargs: Any) -> None:
        """Decode the options, then build the backend ``backend_path`` names."""
        Mailer.__init__(self, fail_silently, **kwargs)
        cls = provider_backend(self.options.backend_path, self.instance)
        #: The provider's backend this mailer hands messages to. It always raises;
        #: ``fail_silently`` is applied here (anymail is dropping its own support).
        self.delegate: BaseEmailBackend = cls(fail_silently=False)

    def _connect(self) -> bool | None:
        """Open the provider backend's connection (``with mailer:`` shares one)."""
        return self.delegate.open()  # type: ignore[no-any-return]

    def close(self) -> None:
        """Close the provider backend's connection."""
        self.delegate.close()

    def _deliver(self, prepared: list[Prepared]) -> int:
        """Hand the checked messages to the provider backend; return what it reports."""
        try:
            return int(self.delegate.send_messages([item.message for item in prepared]) or 0)
        except Exception as exc:
            if not self.fail_silently:
                raise
            logger.warning(
                "mailer.%s: the provider backend failed (%s); messages dropped",
                self.instance,
                type(exc).__name__,
                extra={"service": "mailer", "instance": self.instance},
            )
            return 0
