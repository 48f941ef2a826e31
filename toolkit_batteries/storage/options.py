"""Options of the ``storage`` service (object storage, presigned URLs, access policy)."""

from __future__ import annotations

import re

from toolkit_batteries.core.groups import OutboundSwitches
from toolkit_batteries.core.option_kinds import both_or_neither, relation, url
from toolkit_batteries.core.options import option, options_class

__all__ = ["BucketPolicy", "OperationPolicy", "StorageOptions"]


_PAIR_HINT = "set both, or neither (boto3's own credential chain)"


_ACCOUNT = re.compile(r"[A-Za-z0-9]{1,64}")


@options_class
class OperationPolicy:
    """Who may perform one operation on a bucket; deny wins over allow."""

    public: bool = option(False, doc="allow unsigned access")
    allow: tuple[str, ...] = option(
        [], doc="subjects granted access; * = any authenticated, anonymous = unauthenticated"
    )
    deny: tuple[str, ...] = option([], doc="subjects refused; deny wins over allow")


@options_class
class BucketPolicy:
    """The access policy of one bucket (or of ``Default``, the fallback)."""

    version: str = option("0", doc="policy schema version")
    read: OperationPolicy = option(OperationPolicy(), doc="downloads")
    write: OperationPolicy = option(OperationPolicy(), doc="new objects")
    update: OperationPolicy = option(OperationPolicy(), doc="overwrites")
    delete: OperationPolicy = option(OperationPolicy(), doc="deletions")


@options_class
class StorageOptions(OutboundSwitches):
    """Options of ``storage``; adapters ``local`` (default), ``objstore``, ``objstore_b``."""

    __checks__ = (
        both_or_neither(
            "toolkit_storage.W001",
            "access_key_id",
            "secret_access_key",
            warning=True,
            hint=_PAIR_HINT,
        ),
        url(
            "toolkit_storage.E002",
            private="*",  # the address check after DNS resolution runs at open
            adapters=("objstore", "objstore_b"),
            hint="use an https:// URL without credentials or query (http needs allow_insecure)",
        ).on("endpoint"),
        relation(
            "toolkit_storage.E003",
            lambda o: (
                None
                if o.endpoint or _ACCOUNT.fullmatch(o.account_id or "")
                else 'option "account_id" is missing or not letters and digits'
            ),
            adapters=("objstore_b",),
            hint="objstore_b needs its account id (or an endpoint)",
        ),
        relation(
            "toolkit_storage.W002",
            lambda o: (
                '"sync_fail" or "policy_sync" has no effect as configured'
                if (o.sync_fail and (o.policy_sync or "manual") != "auto")
                or (o.policy_sync == "auto" and not o.policy)
                else None
            ),
            warning=True,
            hint="sync_fail applies with policy_sync auto; auto needs a policy",
        ),
    )

    url_base: str = option("", doc="base URL of minted presigned URLs")
    root: str = option("", doc="directory objects are stored under")
    secret: str = option("", secret=True, doc="HMAC key of presigned URLs")
    public_url: str = option("", doc="public base URL of unsigned links")
    access_key_id: str = option("", doc="access key id (an identifier, not a secret)")
    secret_access_key: str = option("", secret=True, doc="secret access key")
    region: str = option("us-east-1", doc="region")
    endpoint: str = option("", doc="overrides the endpoint (compatible stores)")
    policy_sync: str = option(
        "", choices=("manual", "auto"), doc="bucket-policy sync: manual or auto"
    )
    sync_fail: str = option("", choices=("warn", "require"), doc="on sync failure: warn or require")
    account_id: str = option("", doc="account id (objstore_b)")
    policy: dict[str, BucketPolicy] = option(
        {}, doc="bucket name (or Default) to access policy; empty = legacy private mode"
    )
