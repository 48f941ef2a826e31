"""The ``secretstore`` adapter (``vault``, ``openbao``): HashiCorp Vault's or OpenBao's KV
v2 API, through hvac (the tests run it against OpenBao's dev server).

Secret ``FOO`` is the KV v2 secret at ``<prefix>/FOO`` of the mount ``mount`` (default
``secret``), field ``value``; ``name#field`` reads another field of the same secret.
``set`` writes ``{"value": ...}`` as a new version; ``delete`` removes the secret's
metadata and every version.

**Address.** ``addr`` is required, https only unless ``allow_insecure``, without
credentials, query or fragment. Every address the host resolves to must be public
(not private, loopback, link-local, multicast or reserved) unless ``allow_private``; the
check runs at connection time on the resolved addresses, and the socket connects to the
address that was checked, so a DNS answer cannot change between the two. Redirects are
not followed and environment proxies are ignored (a proxy would bypass the check). The
session is the provider base's (:mod:`toolkit_batteries.core.outbound.provider`).

**Token.** ``token``, else the file ``token_file``, which is refused unless its mode gives
nothing to group or others (``0600`` or stricter) or ``allow_insecure_token_file_perms`` is
set. When the server refuses the token (403) and the file has changed since it was read
(an agent rotated it), the file is read again and the call retried once.

**Lease renewal.** Opening looks the token up (``auth/token/lookup-self``): a refused token
fails the open. A renewable token with a TTL is renewed (``auth/token/renew-self``) by a
daemon thread at two thirds of each lease; a failed renewal is retried with backoff and
logged (never the token). ``close()`` stops the thread.

Requests time out after :data:`TIMEOUT` seconds. ``namespace`` is sent as
``X-Vault-Namespace``. Errors name the instance, the secret name and the HTTP status,
never a value, the token or the server's address.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import re
import stat
import threading
import time
from types import SimpleNamespace
from typing import Any, Self

from toolkit_batteries.core.adapter import ClosedResource, OpenContext
from toolkit_batteries.core.errors import (
    InvalidOptionsError,
    MissingExtraError,
    ServiceUnavailableError,
)
from toolkit_batteries.core.outbound import OutboundBlockedError, provider
from toolkit_batteries.core.tracing import traced

from ..base import SecretAccessDeniedError, Secrets, SecretsError
from ..options import SecretsOptions

with MissingExtraError.guard("secrets", "secretstore", "secretstore", "hvac"):
    import hvac
    import hvac.exceptions
    import requests

__all__ = [
    "DEFAULT_MOUNT",
    "TIMEOUT",
    "VaultSecrets",
    "check_addr",
    "check_location",
    "check_store_prefix",
    "read_token_file",
]

logger = logging.getLogger("toolkit.secrets")

#: Mount used when ``mount`` is empty (the server's default KV v2 mount).
DEFAULT_MOUNT = "secret"
#: Seconds before a request to the server gives up.
TIMEOUT = 30.0
#: The field a plain secret name reads and ``set`` writes.
VALUE_FIELD = "value"
#: Shortest wait between two renewal attempts, and the longest retry backoff.
MIN_RENEW_DELAY = 0.05
MAX_RENEW_BACKOFF = 30.0

_PATH = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*(?:/[A-Za-z0-9_][A-Za-z0-9_.-]*)*")


def _invalid(field: str, reason: str, instance: str) -> InvalidOptionsError:
    return InvalidOptionsError("secrets", field, reason, instance=instance)


def check_addr(
    addr: str, *, allow_insecure: bool, allow_private: bool, instance: str = "default"
) -> str:
    """Return ``addr`` normalised (no trailing ``/``) or raise ``InvalidOptionsError``.

    The shared outbound rules (:func:`toolkit_batteries.core.outbound.check_url`): https
    only unless ``allow_insecure``; a ``localhost`` name or a literal private/loopback/
    link-local IP is refused here unless ``allow_private`` (other host names are checked
    after resolution, at connection time). The value is never echoed.
    """
    return _endpoint(
        addr, allow_insecure=allow_insecure, allow_private=allow_private, instance=instance
    ).url


def _endpoint(
    addr: str, *, allow_insecure: bool, allow_private: bool, instance: str
) -> provider.Endpoint:
    """Return the provider base's endpoint of ``addr`` (what its guarded session dials)."""
    provider.required(
        addr, service="secrets", field="addr", adapter="secretstore", instance=instance
    )
    rules = SimpleNamespace(allow_insecure=allow_insecure, allow_private=allow_private)
    return provider.endpoint(
        rules, service="secrets", default="", instance=instance, field="addr", url=addr
    )


def check_store_prefix(prefix: str, instance: str = "default") -> str:
    """Return ``prefix`` as a KV path (no surrounding ``/``) or raise ``InvalidOptionsError``."""
    text = (prefix or "").strip().strip("/")
    if not text:
        raise _invalid("prefix", "is required", instance)
    if not _PATH.fullmatch(text):
        raise _invalid("prefix", "must be /-separated segments of letters, digits, _ . -", instance)
    return text


def check_mount(mount: str, instance: str = "default") -> str:
    """Return the KV mount path (``secret`` when empty) or raise ``InvalidOptionsError``."""
    text = (mount or "").strip().strip("/") or DEFAULT_MOUNT
    if not _PATH.fullmatch(text):
        raise _invalid("mount", "must be /-separated segments of letters, digits, _ . -", instance)
    return text


def check_location(options: Any, instance: str = "default") -> None:
    """Check ``addr`` and ``mount`` as opening does; the options' ``E003`` rule runs it.

    One function for both places, so ``manage.py check`` fails exactly where opening would.
    """
    check_addr(
        options.addr,
        allow_insecure=bool(options.allow_insecure),
        allow_private=bool(options.allow_private),
        instance=instance,
    )
    check_mount(options.mount, instance)


def _file_identity(info: os.stat_result) -> tuple[int, int, int, int]:
    return (info.st_dev, info.st_ino, info.st_mtime_ns, info.st_size)


def read_token_file(
    path: str, *, allow_insecure_perms: bool, instance: str = "default"
) -> tuple[str, tuple[int, int, int, int]]:
    """Return ``(token, identity)`` read from ``path``; ``identity`` tells a rewrite apart.

    The file is opened once and checked on its descriptor (no race between the check and
    the read): a regular file whose mode gives nothing to group or others, unless
    ``allow_insecure_perms``. Errors name the field, never the path's content.
    """
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(os.path.expanduser(path), flags)
    except OSError as exc:
        reason = "is a symbolic link" if exc.errno == errno.ELOOP else "cannot be opened"
        raise _invalid("token_file", reason, instance) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _invalid("token_file", "is not a regular file", instance)
        if info.st_mode & 0o077 and not allow_insecure_perms:
            raise _invalid(
                "token_file",
                "is readable beyond its owner (chmod 600, or set allow_insecure_token_file_perms)",
                instance,
            )
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(65_536)
    finally:
        os.close(fd)
    try:
        token = data.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise _invalid("token_file", "is not UTF-8 text", instance) from None
    if not token:
        raise _invalid("token_file", "is empty", instance)
    return token, _file_identity(info)


# ------------------------------------------------------------------ the adapter


@traced("_read", "_write", "_remove")
class VaultSecrets(Secrets):
    """Secrets from a Vault (or OpenBao) KV v2 mount, through an hvac client."""

    adapter_name = "secretstore"

    def __init__(self, options: SecretsOptions, *, instance: str = "default") -> None:
        """Validate the options, build the client and look the token up (one request)."""
        self.instance = instance
        allow_insecure = bool(options.allow_insecure)
        allow_private = bool(options.allow_private)
        self._endpoint = _endpoint(
            options.addr,
            allow_insecure=allow_insecure,
            allow_private=allow_private,
            instance=instance,
        )
        self._addr = self._endpoint.url
        self.prefix = check_store_prefix(options.prefix, instance)
        self.mount = check_mount(options.mount, instance)
        self._token_file = "" if options.token else (options.token_file or "").strip()
        self._allow_insecure_perms = bool(options.allow_insecure_token_file_perms)
        self._token_identity: tuple[int, int, int, int] | None = None
        if options.token:
            token = options.token.strip()
        elif self._token_file:
            token, self._token_identity = read_token_file(
                self._token_file, allow_insecure_perms=self._allow_insecure_perms, instance=instance
            )
        else:
            raise _invalid(
                "token", "is required by the secretstore adapter (or token_file)", instance
            )
        provider.warn_relaxed(logger, self._endpoint)
        self._session = provider.requests_session(self._endpoint)
        self._client = hvac.Client(
            url=self._addr,
            token=token,
            namespace=(options.namespace or "").strip() or None,
            session=self._session,
            timeout=TIMEOUT,
            verify=True,
            allow_redirects=False,
        )
        self._kv = self._client.secrets.kv.v2
        self._token_lock = threading.Lock()
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None
        #: Monotonic time the current token lease ends (``None``: it does not expire).
        self.token_expires: float | None = None
        self.renewals = 0
        try:
            looked = self._call(self._client.auth.token.lookup_self, "token lookup")
        except BaseException:
            self._session.close()
            raise
        data = looked.get("data") or {} if isinstance(looked, dict) else {}
        ttl = float(data.get("ttl") or 0)
        if ttl > 0:
            self.token_expires = time.monotonic() + ttl
        if ttl > 0 and data.get("renewable"):
            self._renewer = threading.Thread(
                target=self._renew_loop,
                args=(ttl,),
                name=f"toolkit-secrets-{instance}-renew",
                daemon=True,
            )
            self._renewer.start()

    @classmethod
    def open(cls, ctx: OpenContext) -> Self:
        return cls(ctx.options, instance=ctx.instance)

    # ------------------------------------------------------------------ operations

    def _read(self, path: str, field: str) -> str | None:
        try:
            answer = self._call(
                self._kv.read_secret_version,
                "read",
                may_miss=True,
                path=f"{self.prefix}/{path}",
                mount_point=self.mount,
                raise_on_deleted_version=True,
            )
        except _Missing:
            return None
        try:
            data = answer["data"]["data"]
        except (KeyError, TypeError):
            raise SecretsError(
                f"secrets.{self.instance}: the secrets server answered a read without data"
            ) from None
        if not isinstance(data, dict):
            return None
        value = data.get(field or VALUE_FIELD)
        if value is None or isinstance(value, str):
            return value
        return json.dumps(value, separators=(",", ":"), sort_keys=True)

    def _write(self, path: str, value: str) -> None:
        self._call(
            self._kv.create_or_update_secret,
            "write",
            path=f"{self.prefix}/{path}",
            secret={VALUE_FIELD: value},
            mount_point=self.mount,
        )

    def _remove(self, path: str) -> bool:
        full = f"{self.prefix}/{path}"
        try:
            self._call(
                self._kv.read_secret_metadata,
                "read",
                may_miss=True,
                path=full,
                mount_point=self.mount,
            )
        except _Missing:
            return False
        self._call(
            self._kv.delete_metadata_and_all_versions, "delete", path=full, mount_point=self.mount
        )
        return True

    def _where(self, path: str, field: str) -> str:
        where = f"path {self.prefix}/{path} of mount {self.mount}"
        return f"no field {field} at {where}" if field else f"nothing at {where}"

    def ping(self) -> None:
        """Look the token up: raises ``ServiceUnavailableError`` or ``SecretAccessDeniedError``."""
        self._call(self._client.auth.token.lookup_self, "token lookup")

    def close(self) -> None:
        """Stop the renewal thread and close the HTTP session."""
        self._stop.set()
        renewer = self._renewer
        if renewer is not None and renewer is not threading.current_thread():
            renewer.join(timeout=TIMEOUT)
        self._client = self._kv = ClosedResource("secrets", self.instance)  # type: ignore[assignment]
        self._session.close()

    # ------------------------------------------------------------------ plumbing

    def _call(self, method: Any, what: str, *, may_miss: bool = False, **kwargs: Any) -> Any:
        """Run one hvac call; map its errors to the battery's, without their text.

        A 404 raises ``_Missing`` when ``may_miss`` (a secret that does not exist), else
        ``ServiceUnavailableError``. A 403 with a token file that has changed since it
        was read reloads the token and retries once.
        """
        for attempt in (0, 1):
            try:
                return method(**kwargs)
            except OutboundBlockedError:  # an address refused at connection time
                raise provider.blocked_error(self._endpoint) from None
            except hvac.exceptions.InvalidPath:
                if may_miss:
                    raise _Missing from None
                raise ServiceUnavailableError(
                    "secrets", f"{what} failed (404)", instance=self.instance
                ) from None
            except hvac.exceptions.Forbidden:
                if attempt == 0 and self._reload_token():
                    continue
                raise SecretAccessDeniedError(self.instance, f"{what}: 403") from None
            except hvac.exceptions.Unauthorized:
                raise SecretAccessDeniedError(self.instance, f"{what}: 401") from None
            except hvac.exceptions.VaultError as exc:
                raise ServiceUnavailableError(
                    "secrets", f"{what} failed ({type(exc).__name__})", instance=self.instance
                ) from None
            except requests.RequestException as exc:
                raise ServiceUnavailableError(
                    "secrets", f"{what} failed ({type(exc).__name__})", instance=self.instance
                ) from None
            except ValueError:  # a body that is not JSON
                raise ServiceUnavailableError(
                    "secrets", f"{what} failed (unreadable answer)", instance=self.instance
                ) from None
        raise AssertionError("unreachable")  # pragma: no cover

    def _reload_token(self) -> bool:
        """Re-read ``token_file`` if it changed since it was read; return whether it did."""
        if not self._token_file:
            return False
        with self._token_lock:
            try:
                identity = _file_identity(os.stat(os.path.expanduser(self._token_file)))
            except OSError:
                return False
            if identity == self._token_identity:
                return False
            try:
                token, self._token_identity = read_token_file(
                    self._token_file,
                    allow_insecure_perms=self._allow_insecure_perms,
                    instance=self.instance,
                )
            except InvalidOptionsError as exc:
                logger.warning("secrets.%s: token file not reloaded: %s", self.instance, exc)
                return False
            self._client.token = token
            logger.info("secrets.%s: token reloaded from token_file", self.instance)
            return True

    def _renew_loop(self, ttl: float) -> None:
        """Renew the token at two thirds of each lease until closed."""
        delay = max(ttl * 2 / 3, MIN_RENEW_DELAY)
        backoff = MIN_RENEW_DELAY
        while not self._stop.wait(delay):
            try:
                answer = self._call(self._client.auth.token.renew_self, "token renewal")
            except (SecretsError, ServiceUnavailableError) as exc:
                left = (self.token_expires or 0) - time.monotonic()
                backoff = min(backoff * 2, MAX_RENEW_BACKOFF)
                delay = max(min(backoff, left / 2), MIN_RENEW_DELAY)
                logger.warning(
                    "secrets.%s: token renewal failed (%s); retrying in %.2fs",
                    self.instance,
                    type(exc).__name__,
                    delay,
                )
                continue
            auth = answer.get("auth") or {} if isinstance(answer, dict) else {}
            lease = float(auth.get("lease_duration") or 0)
            self.renewals += 1
            backoff = MIN_RENEW_DELAY
            if lease <= 0 or auth.get("renewable") is False:
                self.token_expires = None if lease <= 0 else time.monotonic() + lease
                logger.info("secrets.%s: token renewed; no further renewal", self.instance)
                return
            self.token_expires = time.monotonic() + lease
            delay = max(lease * 2 / 3, MIN_RENEW_DELAY)
            logger.debug("secrets.%s: token renewed for %.0fs", self.instance, lease)


class _Missing(Exception):
    """Internal: the server answered 404."""
