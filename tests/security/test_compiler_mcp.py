"""``toolkit mcp`` reads and rewrites only the directory it serves.

Driven by the official MCP SDK client over stdio, as a coding agent would: a ``check`` of
``../`` or an absolute path, and a ``fmt`` with ``write: true`` of a schema outside the
served directory, are refused as tool errors; nothing outside is read back to the agent
or rewritten. Paths inside keep working.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_mcp_command import SCHEMA, _talk

#: A badly formatted schema whose text would be echoed back by a diagnostic.
SECRET = "entity   Secret {\n  id: uuid @primary\n  token: strin  // sk_live_do_not_leak\n}\n"


def test_paths_outside_the_served_directory_are_refused(tmp_path: Path) -> None:
    served = tmp_path / "served"
    (served / "schema").mkdir(parents=True)
    (served / "schema" / "app.toolkit").write_text(SCHEMA)
    outside = tmp_path / "private"
    outside.mkdir()
    secret = outside / "secret.toolkit"
    secret.write_text(SECRET)
    (served / "link").symlink_to(outside, target_is_directory=True)

    seen = _talk(
        served,
        [
            ("check", {"paths": ["../private/secret.toolkit"]}),
            ("check", {"paths": [str(secret)]}),
            ("check", {"paths": ["link/secret.toolkit"]}),
            ("fmt", {"paths": [str(secret)], "write": True}),
            ("breaking", {"old": ["schema"], "new": ["../private"]}),
            ("check", {"paths": ["schema"]}),
        ],
    )
    *refused, inside = seen["calls"]
    for result in refused:
        text = result.content[0].text
        assert result.is_error, text
        assert "inside the directory the server serves" in text
        assert "sk_live" not in text and "private" not in text
    assert secret.read_text() == SECRET  # fmt did not rewrite it

    assert not inside.is_error
    envelope = json.loads(inside.content[0].text)
    assert envelope["ok"] and envelope["exitCode"] == 0
