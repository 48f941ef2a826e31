"""The catalog of the 37 services: name, accessor, default adapter, options class.

This table is the single place that knows which services exist. Configuration decodes
against it (an unknown service fails with a "did you mean"), the container builds one
accessor per row, and ``docs/`` lists the same rows. Importing it imports nothing else:
options classes and adapter tables are loaded by dotted path when first needed.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import import_module

__all__ = ["SERVICES", "ServiceSpec", "options_class_of"]


@dataclass(frozen=True, slots=True)
class ServiceSpec:
    """One row of the catalog."""

    #: The configuration name (``TOOLKIT["cache"]``, ``CACHE__DEFAULT__...``).
    name: str
    #: The spec's adapters, canonical (neutral) names, default first.
    adapters: tuple[str, ...]
    #: The class name inside ``toolkit_batteries.<name>.options``.
    options: str

    @property
    def default_adapter(self) -> str:
        """Return the adapter the built-in defaults select."""
        return self.adapters[0]

    @property
    def package(self) -> str:
        """Return the battery's package (and Django app) module path."""
        return f"toolkit_batteries.{self.name}"

    @property
    def label(self) -> str:
        """Return the battery's Django app label (``toolkit_<name>``)."""
        return f"toolkit_{self.name}"


def _row(name: str, adapters: str, options: str) -> tuple[str, ServiceSpec]:
    return name, ServiceSpec(name, tuple(adapters.split()), options)


#: Every configurable service, keyed by name; the accessor is the same snake-case name.
#: Adapters are listed default first, exactly as the spec's option reference.
SERVICES: dict[str, ServiceSpec] = dict(
    (
        _row("ai", "llm_a llm_b llm_c llm_d", "AIOptions"),
        _row("analytics", "log analytics_b", "AnalyticsOptions"),
        _row("auth", "jwt session oidc", "AuthOptions"),
        _row("billing", "stub billing_a billing_b", "BillingOptions"),
        _row("cache", "memory kvserver db", "CacheOptions"),
        _row("cdn", "noop cdn_a", "CDNOptions"),
        _row("crypto", "local kms", "CryptoOptions"),
        _row("db", "sqlfile sqlserver", "DBOptions"),
        _row("document", "local remote latex", "DocumentOptions"),
        _row("eventbus", "memory kvserver", "EventBusOptions"),
        _row("flag", "static remotecfg", "FlagOptions"),
        _row("geo", "static geo_a geo_b", "GeoOptions"),
        _row("i18n", "embed remote", "I18nOptions"),
        _row("idempotency", "memory kvserver db", "IdempotencyOptions"),
        _row("lock", "memory kvserver", "LockOptions"),
        _row("log", "slog noop log_b pretty", "LogOptions"),
        _row("mailer", "log smtp", "MailerOptions"),
        _row("media", "local objstore", "MediaOptions"),
        _row("notification", "log sms push", "NotificationOptions"),
        _row("observability", "stdout noop otlp", "ObservabilityOptions"),
        _row("outbox", "db memory cdc", "OutboxOptions"),
        _row("password", "argon2id", "PasswordOptions"),
        _row("payment", "stub payment_a payment_b", "PaymentOptions"),
        _row("permission", "noop rbac policyfile", "PermissionOptions"),
        _row("queue", "memory kvserver db", "QueueOptions"),
        _row("ratelimit", "memory kvserver", "RateLimitOptions"),
        _row("resilience", "memory kvserver", "ResilienceOptions"),
        _row("router", "stdhttp router_a", "RouterOptions"),
        _row("scheduler", "embedded sqlserver", "SchedulerOptions"),
        _row("search", "db sqlserver searchengine sqlfile", "SearchOptions"),
        _row("secrets", "env secretstore", "SecretsOptions"),
        _row("session", "memory kvserver db", "SessionOptions"),
        _row("storage", "local objstore objstore_b", "StorageOptions"),
        _row("tenant", "single header", "TenantOptions"),
        _row("vectorstore", "db sqlfile sqlvector vecengine", "VectorStoreOptions"),
        _row("webhook", "http queue", "WebhookOptions"),
        _row("workflow", "memory db sqlserver", "WorkflowOptions"),
    )
)


@cache
def options_class_of(service: str) -> type:
    """Import and return the options dataclass of ``service``."""
    spec = SERVICES[service]
    return getattr(import_module(f"{spec.package}.options"), spec.options)
