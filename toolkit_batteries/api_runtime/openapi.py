"""How drf-spectacular describes generated views: the same document as ``openapi.json``.

:class:`GeneratedSchema` (components, the paginated envelope of :class:`PageOf`, no
``security`` on public operations), :func:`extend_schema` built on it, and the
``bearerAuth`` scheme. Kept apart from the request path: none of it runs per request.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import ResolvedComponent
from drf_spectacular.utils import OpenApiResponse
from drf_spectacular.utils import extend_schema as spectacular_extend_schema
from rest_framework.fields import (
    JSONField,
)
from rest_framework.serializers import BaseSerializer

from .codec import JSON_MEDIA
from .fields import (
    JSON_VALUE_SCHEMA,
    EnumField,
    GreaterThanValidator,
    LessThanValidator,
)


@dataclass(frozen=True, slots=True)
class PageOf:
    """A paginated response of ``item`` serializers (for ``extend_schema``)."""

    item: type[BaseSerializer]


class GeneratedSchema(AutoSchema):
    """drf-spectacular's AutoSchema, made to describe generated views like ``openapi.json``.

    - Every entity, message and named enum of the app (the view's ``components`` and
      ``enum_components``) is registered, used by an operation or not, as the compiled
      document lists them all.
    - A :class:`PageOf` response is ``{items: [<ref>], next_cursor: string|null}``, inline.
    - ``auth: none`` operations carry no ``security`` key (not ``[{}]``).
    - Responses are never wrapped in a list: a view is not a list view.
    - A PATCH body is the full request component, not a partial ``Patched<Name>``.
    - What the server enforces beyond drf-spectacular's view is stated: a string's NUL
      refusal (its field's ``openapi_extra`` pattern) and ``@validate(gt:, lt:)`` exclusive
      bounds, so the document allows exactly what the serializers accept.
    """

    def _map_serializer_field(
        self, field: Any, direction: Any, bypass_extensions: bool = False
    ) -> Any:
        schema = super()._map_serializer_field(field, direction, bypass_extensions)
        if isinstance(field, JSONField) and not field.allow_null and isinstance(schema, dict):
            schema = {**JSON_VALUE_SCHEMA, **schema}  # not null: DRF refuses it
        return schema

    def _insert_field_validators(self, field: Any, schema: dict[str, Any]) -> None:
        super()._insert_field_validators(field, schema)
        schema.update(getattr(field, "openapi_extra", {}))
        for validator in field.validators:
            if isinstance(validator, GreaterThanValidator):
                schema["minimum"] = validator.limit_value
                schema["exclusiveMinimum"] = True
            elif isinstance(validator, LessThanValidator):
                schema["maximum"] = validator.limit_value
                schema["exclusiveMaximum"] = True

    def get_operation(
        self, path: str, path_regex: str, path_prefix: str, method: str, registry: Any
    ) -> dict[str, Any] | None:
        """Register the app's components, then build the operation as usual."""
        self.registry = registry
        self.path, self.path_regex, self.method = path, path_regex, method.upper()
        for serializer in getattr(self.view, "components", ()):
            self.resolve_serializer(serializer, "response")
        for name, values in getattr(self.view, "enum_components", {}).items():
            schema = {"type": "string", "enum": list(values)}
            component = ResolvedComponent(
                name=name,
                type=ResolvedComponent.SCHEMA,
                object=EnumField(values, component=name),
                schema=schema,
            )
            registry.register_on_missing(component)
        return super().get_operation(path, path_regex, path_prefix, method, registry)

    def _get_request_for_media_type(self, serializer: Any, direction: Any = "request") -> Any:
        # A generated PATCH validates its whole body (members = rpc parameters), so it is
        # not drf-spectacular's partial "Patched<Name>" component.
        method = self.method
        self.method = "POST" if method == "PATCH" else method
        try:
            return super()._get_request_for_media_type(serializer, direction)
        finally:
            self.method = method

    def _is_list_view(self, serializer: Any = None) -> bool:
        del serializer
        return False

    def get_auth(self) -> list[dict[str, Any]]:
        """Return the security requirements without DRF's "anonymous allowed" ``{}``."""
        return [requirement for requirement in super().get_auth() if requirement]

    def _get_response_for_code(
        self,
        serializer: Any,
        status_code: str,
        media_types: Any = None,
        direction: Any = "response",
    ) -> dict[str, Any]:
        response = serializer.response if isinstance(serializer, OpenApiResponse) else serializer
        if not isinstance(response, PageOf):
            return super()._get_response_for_code(serializer, status_code, media_types, direction)
        item = self.resolve_serializer(response.item, direction)
        schema = {
            "type": "object",
            "properties": {
                "items": {"type": "array", "items": item.ref},
                "next_cursor": {"type": "string", "nullable": True},
            },
            "required": ["items", "next_cursor"],
        }
        description = serializer.description if isinstance(serializer, OpenApiResponse) else ""
        return {"content": {JSON_MEDIA: {"schema": schema}}, "description": description or "OK"}


def extend_schema(**kwargs: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Return drf-spectacular's ``extend_schema`` decorator built on :class:`GeneratedSchema`.

    drf-spectacular bases a method's schema on ``REST_FRAMEWORK["DEFAULT_SCHEMA_CLASS"]``
    when it decorates it; starting from :class:`GeneratedSchema` instead keeps the served
    document right in a project that never set that setting.
    """
    decorate = spectacular_extend_schema(**kwargs)

    def decorator(method: Callable[..., Any]) -> Callable[..., Any]:
        method.kwargs = {"schema": GeneratedSchema}  # type: ignore[attr-defined]
        return decorate(method)

    return decorator


class BearerAuthScheme(OpenApiAuthenticationExtension):
    """Name ``BearerAuthentication`` ``bearerAuth`` (HTTP bearer), as ``openapi.json`` does."""

    target_class = "toolkit_batteries.auth.drf.BearerAuthentication"
    name = "bearerAuth"
    match_subclasses = True
    priority = 1

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        """Return the HTTP bearer scheme."""
        del auto_schema
        return {"type": "http", "scheme": "bearer"}
