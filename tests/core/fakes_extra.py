"""An adapter module that reports its missing optional dependency the toolkit way."""

from toolkit_batteries.core.errors import MissingExtraError

raise MissingExtraError("geo", "geo_a", "geo", "vendor_geo_sdk")
