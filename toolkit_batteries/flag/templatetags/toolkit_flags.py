"""Template tags of the flag battery (``{% load toolkit_flags %}``).

::

    {% load toolkit_flags %}
    {% flag "new_checkout" as checkout_on %}
    {% if checkout_on %}<a href="/checkout/v2">Try the new checkout</a>{% endif %}
    {% flag_value "theme" default="light" as theme %}

The subject and tenant come from the context's ``request`` (the ``request`` context
processor): the signed-in user and ``request.tenant``. Without a request there is no
subject and no tenant. ``instance=`` picks a flag instance other than ``default``.
"""

from __future__ import annotations

from typing import Any

from django import template

from ..request import subject_of, tenant_of

register = template.Library()


def _context_request(context: Any) -> Any:
    return context.get("request")


@register.simple_tag(takes_context=True)
def flag(context: Any, name: str, default: bool = False, instance: str = "default") -> bool:
    """Return whether flag ``name`` is on for the request's user and tenant."""
    from toolkit_batteries import services

    request = _context_request(context)
    return services.flag(instance).enabled(
        name, subject=subject_of(request), tenant=tenant_of(request), default=default
    )


@register.simple_tag(takes_context=True)
def flag_value(context: Any, name: str, default: Any = None, instance: str = "default") -> Any:
    """Return flag ``name``'s value for the request's user and tenant, else ``default``."""
    from toolkit_batteries import services

    request = _context_request(context)
    return services.flag(instance).value(
        name, subject=subject_of(request), tenant=tenant_of(request), default=default
    )
