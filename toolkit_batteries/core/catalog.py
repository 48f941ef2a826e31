"""The catalog of the 37 services: the one list every other list is derived from.

Each row says: the service's name (its configuration key, accessor and Django app
``toolkit_<name>``), its adapters by canonical (neutral) name, default first, the product
each adapter talks to (``kvserver`` -> ``redis``), the options class and the battery's
public class. Configuration decodes against it (an unknown service fails with a "did you
mean"), the container builds one accessor per row, :mod:`toolkit_batteries.core.loading`
derives the product aliases from it, ``services.pyi`` and ``toolkit new --list-batteries``
are generated from it and ``docs/`` is checked against it. Importing it imports nothing
else: options classes and adapter tables are loaded by dotted path when first needed.

Keys are the neutral names (DESIGN.md "Names"); product names are data beside them, so a
product can be renamed or added without touching any other table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from importlib import import_module
from typing import Any

__all__ = ["SERVICES", "ServiceSpec", "battery_hook", "options_class_of", "product_aliases"]


@dataclass(frozen=True, slots=True)
class ServiceSpec:
    """One row of the catalog."""

    #: The configuration name (``TOOLKIT["cache"]``, ``CACHE__DEFAULT__...``).
    name: str
    #: The spec's adapters, canonical (neutral) names, default first.
    adapters: tuple[str, ...]
    #: The class name inside ``toolkit_batteries.<name>.options``.
    options: str
    #: The battery's public class (what the accessor returns), inside ``<package>.base``.
    base: str
    #: Canonical adapter -> the product names it answers to, the shown one first
    #: (``sqlserver`` -> ``("postgres", "postgresql")``). Adapters of no product are absent.
    products: dict[str, tuple[str, ...]] = field(default_factory=dict, hash=False)

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

    @property
    def base_path(self) -> str:
        """Return the dotted path of the public class (``toolkit_batteries.cache.base.Cache``)."""
        return f"{self.package}.base.{self.base}"

    @property
    def accessor_doc(self) -> str:
        """Return the docstring of this service's accessor (container's and ``services``').

        Built here, from the row alone, so ``services`` can document its accessors without
        importing the container at ``django.setup()``.
        """
        others = ", ".join(self.adapters[1:]) or "none"
        return (
            f"Return the {self.name} service (instance 'default' unless named).\n\n"
            f"Opens on the first call and returns the same object afterwards. Adapters:\n"
            f"{self.default_adapter} (default), {others}. Configure it as\n"
            f'TOOLKIT["{self.name}"] or {self.name.upper()}__<INSTANCE>__<FIELD> variables.'
        )

    def product(self, adapter: str) -> str | None:
        """Return the product ``adapter`` talks to (``kvserver`` -> ``redis``), else ``None``."""
        names = self.products.get(adapter)
        return names[0] if names else None


def _row(name: str, adapters: str, options: str, base: str) -> tuple[str, ServiceSpec]:
    """Parse ``"memory kvserver=redis sqlserver=postgres,postgresql"`` into a row."""
    canonical: list[str] = []
    products: dict[str, tuple[str, ...]] = {}
    for item in adapters.split():
        adapter, _, names = item.partition("=")
        canonical.append(adapter)
        if names:
            products[adapter] = tuple(names.split(","))
    return name, ServiceSpec(name, tuple(canonical), options, base, products)


#: Every configurable service, keyed by name; the accessor is the same snake-case name.
#: Adapters are listed default first, exactly as the spec's option reference; ``=`` gives
#: the products an adapter answers to (the first is the one shown).
SERVICES: dict[str, ServiceSpec] = dict(
    (
        _row("ai", "llm_a=anthropic llm_b=openai llm_c=gemini llm_d=openrouter", "AIOptions", "AI"),
        _row("analytics", "log analytics_b=posthog", "AnalyticsOptions", "Analytics"),
        _row("auth", "jwt session oidc", "AuthOptions", "Authenticator"),
        _row("billing", "stub billing_a=stripe billing_b=paddle", "BillingOptions", "Billing"),
        _row("cache", "memory kvserver=redis db", "CacheOptions", "Cache"),
        _row("cdn", "noop cdn_a=cloudflare", "CDNOptions", "CDN"),
        _row("crypto", "local kms", "CryptoOptions", "Crypto"),
        _row("db", "sqlfile=sqlite,sqlite3 sqlserver=postgres,postgresql", "DBOptions", "Database"),
        _row("document", "local remote=gotenberg latex", "DocumentOptions", "Document"),
        _row("eventbus", "memory kvserver=redis", "EventBusOptions", "EventBus"),
        _row("flag", "static remotecfg=firebase", "FlagOptions", "Flag"),
        _row("geo", "static geo_a=google geo_b=nominatim,osm", "GeoOptions", "Geo"),
        _row("i18n", "embed remote", "I18nOptions", "I18n"),
        _row("idempotency", "memory kvserver=redis db", "IdempotencyOptions", "Idempotency"),
        _row("lock", "memory kvserver=redis", "LockOptions", "Lock"),
        _row("log", "slog noop log_b=zerolog pretty", "LogOptions", "Logger"),
        _row("mailer", "log smtp", "MailerOptions", "Mailer"),
        _row("media", "local objstore=s3", "MediaOptions", "Media"),
        _row("notification", "log sms=twilio push=fcm", "NotificationOptions", "Notification"),
        _row("observability", "stdout noop otlp", "ObservabilityOptions", "Observability"),
        _row("outbox", "db memory cdc", "OutboxOptions", "Outbox"),
        _row("password", "argon2id", "PasswordOptions", "PasswordHasher"),
        _row("payment", "stub payment_a=stripe payment_b=paddle", "PaymentOptions", "Payment"),
        _row("permission", "noop rbac policyfile=casbin", "PermissionOptions", "Authorizer"),
        _row("queue", "memory kvserver=redis db sqs", "QueueOptions", "Queue"),
        _row("ratelimit", "memory kvserver=redis", "RateLimitOptions", "RateLimiter"),
        _row("resilience", "memory kvserver=redis", "ResilienceOptions", "Policy"),
        _row("router", "stdhttp router_a=fiber", "RouterOptions", "Router"),
        _row(
            "scheduler", "embedded sqlserver=postgres,postgresql", "SchedulerOptions", "Scheduler"
        ),
        _row(
            "search",
            "db sqlserver=postgres,postgresql searchengine=meilisearch sqlfile=sqlite,sqlite3",
            "SearchOptions",
            "Search",
        ),
        _row("secrets", "env secretstore=vault,openbao", "SecretsOptions", "Secrets"),
        _row("session", "memory kvserver=redis db", "SessionOptions", "SessionStore"),
        _row("storage", "local objstore=s3 objstore_b=r2", "StorageOptions", "Storage"),
        _row("tenant", "single header", "TenantOptions", "Tenant"),
        _row(
            "vectorstore",
            "db sqlfile=sqlite,sqlite3 sqlvector=pgvector vecengine=qdrant",
            "VectorStoreOptions",
            "VectorStore",
        ),
        _row("webhook", "http queue", "WebhookOptions", "Webhook"),
        _row("workflow", "memory db sqlserver=postgres,postgresql", "WorkflowOptions", "Workflow"),
    )
)


@cache
def options_class_of(service: str) -> type:
    """Import and return the options dataclass of ``service``."""
    spec = SERVICES[service]
    return getattr(import_module(f"{spec.package}.options"), spec.options)


def product_aliases() -> dict[str, tuple[str, ...]]:
    """Return product name -> the canonical adapters it names, in catalog order.

    ``stripe`` is ``("billing_a", "payment_a")``: each battery resolves it to the one it has.
    """
    aliases: dict[str, tuple[str, ...]] = {}
    for spec in SERVICES.values():
        for adapter, names in spec.products.items():
            for name in names:
                if adapter not in aliases.get(name, ()):
                    aliases[name] = (*aliases.get(name, ()), adapter)
    return aliases


def battery_hook(service: str, module: str, name: str) -> Any:
    """Return ``toolkit_batteries.<service>.<module>.<name>`` if the battery declares it.

    How the kernel reaches what a battery adds to its behaviour (a doctor row, a
    shared-state finding) without importing the battery by name: the battery's
    ``<module>`` is looked up by path, and a battery without it has no such hook.
    An import error raised *inside* an existing module propagates.
    """
    if service not in SERVICES:
        return None
    path = f"{SERVICES[service].package}.{module}"
    try:
        found = import_module(path)
    except ModuleNotFoundError as exc:
        if exc.name and (path == exc.name or path.startswith(exc.name + ".")):
            return None
        raise
    return getattr(found, name, None)
