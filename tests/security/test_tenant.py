"""Issue 23 defect 8: in subdomain mode a client's header cannot pick the tenant.

On the landed code ``header: ""`` became ``X-Tenant-ID``, so a request to the apex domain
or a bare IP (a host the subdomain pattern does not match) chose any tenant by sending
the header. Now an empty ``header`` (the default) is no header source in subdomain mode,
and such a host is a 400; the header is a source only when named explicitly. Requests go
through Django's test client and the real middleware.
"""

from __future__ import annotations

import pytest
from django.test import Client

from tests.batteries.tenant.conftest import configured

ATTACKER_PICK = {"X-Tenant-ID": "globex"}


def assert_refused(response) -> None:
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_argument"
    assert "globex" not in response.content.decode()


@pytest.mark.parametrize("header", [None, ""])
@pytest.mark.parametrize("host", ["example.com", "203.0.113.7", "[2001:db8::1]", "evil.test"])
def test_a_host_outside_the_pattern_is_a_400_whatever_header_it_sends(
    header: str | None, host: str
) -> None:
    options = {} if header is None else {"header": header}
    with configured("subdomain", **options):
        client = Client()
        assert_refused(client.get("/whoami", headers={"Host": host, **ATTACKER_PICK}))
        assert_refused(client.get("/whoami", headers={"Host": host}))


def test_the_subdomain_decides_and_a_header_cannot_override_it() -> None:
    with configured("subdomain"):
        client = Client()
        both = {"Host": "acme.example.com", **ATTACKER_PICK}
        response = client.get("/whoami", headers=both)
        assert response.status_code == 200 and response.json()["tenant"] == "acme"


def test_the_header_source_in_subdomain_mode_is_opt_in_by_name() -> None:
    with configured("subdomain", header="X-Tenant-ID"):
        response = Client().get("/whoami", headers={"Host": "example.com", **ATTACKER_PICK})
        assert response.status_code == 200 and response.json()["tenant"] == "globex"


def test_header_mode_still_reads_x_tenant_id_by_default() -> None:
    with configured("header"):
        response = Client().get("/whoami", headers=ATTACKER_PICK)
        assert response.status_code == 200 and response.json()["tenant"] == "globex"
