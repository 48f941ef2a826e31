"""The webhook battery's errors: a target the outbound rules refuse and a delivery whose
signature fails verification; messages name no secret, body or URL.

``webhook.base`` and ``webhook.signing`` re-import them, so old import paths keep working.
"""

from __future__ import annotations

from toolkit_batteries.core.errors import ToolkitError

__all__ = [
    "SignatureError",
    "TargetRefusedError",
    "WebhookError",
]


class WebhookError(ToolkitError):
    """A webhook operation was refused; messages name no secret, body or URL."""

    code = "webhook_error"


class TargetRefusedError(WebhookError, ValueError):
    """The target breaks the outbound rules (scheme, credentials, private address)."""

    code = "webhook_target_refused"

    def __init__(self, instance: str, reason: str) -> None:
        self.instance = instance
        super().__init__(f"webhook.{instance}: the target {reason}")


class SignatureError(ToolkitError, ValueError):
    """A delivery failed verification; ``reason`` says which check (never a value)."""

    code = "webhook_signature_invalid"

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(f"webhook: signature verification failed: {reason}")
