"""Options of the ``media`` service (image and video storage and derivation)."""

from __future__ import annotations

from datetime import timedelta

from toolkit_batteries.core.groups import OutboundSwitches
from toolkit_batteries.core.option_kinds import both_or_neither, program, relation, url
from toolkit_batteries.core.options import ByteSize, Duration, option, options_class

__all__ = ["MediaOptions"]


_PAIR_HINT = "set both, or neither (boto3's own credential chain)"


def _own_store(options: MediaOptions) -> bool:
    """Tell whether ``objstore`` keeps its own bucket (no ``storage`` instance named)."""
    return not str(options.storage or "").strip()


def _bucket_problem(options: MediaOptions) -> str | None:
    from toolkit_batteries.storage.keys import InvalidKeyError, check_bucket_name

    try:
        check_bucket_name(options.bucket)
    except InvalidKeyError:
        return 'option "bucket" is missing or not a valid bucket name'
    return None


@options_class
class MediaOptions(OutboundSwitches):
    """Options of ``media``; adapters ``local`` (default) and ``objstore``."""

    __checks__ = (
        both_or_neither(
            "toolkit_media.W002",
            "access_key_id",
            "secret_access_key",
            warning=True,
            hint=_PAIR_HINT,
        ),
        relation(
            "toolkit_media.E002",
            _bucket_problem,
            adapters=("objstore",),
            when=_own_store,
            hint="objstore needs a bucket: 3 to 63 lower-case letters, digits, - or .",
        ),
        url(
            "toolkit_media.E003",
            private="*",  # the address check after DNS resolution runs at open
            adapters=("objstore",),
            when=_own_store,
            hint="use an https:// URL without credentials or query (http needs allow_insecure)",
        ).on("endpoint"),
        program(
            "toolkit_media.W001",
            reason="is not found",
            message='{where}: the binary of option "{field}" {reason}',
            warning=True,
            hint="install Debian's ffmpeg package (video calls fail without it)",
        ).on("ffmpeg", "ffprobe"),
    )

    storage: str = option(
        "",
        doc="a STORAGES alias to keep files in (Django's storages[alias]); replaces the "
        "adapter's own store (root, bucket, endpoint, keys)",
    )
    root: str = option("/tmp/media", doc="local root directory")
    base_url: str = option("/media", doc="base URL of served assets")
    max_download_bytes: ByteSize = option(ByteSize(64 * 1024 * 1024), doc="bound on one download")
    max_pixels: int = option(52428800, doc="bound on the decoded pixel count")
    derived_ttl: Duration = option(timedelta(minutes=10), doc="lifetime of derived assets")
    presign_ttl: Duration = option(timedelta(hours=1), doc="lifetime of presigned URLs")
    max_duration: Duration = option(timedelta(0), doc="bound on media duration; 0 = unlimited")
    endpoint: str = option("", doc="custom storage URL")
    region: str = option("us-east-1", doc="storage region")
    bucket: str = option("", doc="bucket name")
    access_key_id: str = option("", doc="access key id (an identifier, not a secret)")
    secret_access_key: str = option("", secret=True, doc="secret access key")
    ffmpeg: str = option("ffmpeg", doc="video tool binary path")
    ffprobe: str = option("ffprobe", doc="probe tool binary path")
