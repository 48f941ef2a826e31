"""``toolkit breaking`` tells clients the truth about renames, against a git commit.

A ``@renamed_from`` rename keeps the data (``field_renamed``, informational), but when
the entity travels in an rpc's JSON the member clients read changes name: the
breaking ``field_renamed_in_api`` names the rpcs. ``--against <ref>`` compares the
working tree's ``schema/`` with the one committed at a ref.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from .conftest import base_env, run_toolkit

BEFORE = """\
entity Note {
  id: uuid @primary
  title: string
}

entity Audit {
  id: uuid @primary
  actor: string
}

service NoteService {
  rpc GetNote(id: uuid) -> Note {
    http: GET "/v1/notes/{id}"
    auth: none
  }
}
"""


def _git(repo: Path, *args: str) -> None:
    env = base_env(
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.com",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.com",
    )
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def test_renaming_a_field_an_rpc_returns_breaks_the_api_against_a_commit(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "project"
    schema = repo / "schema" / "app.toolkit"
    schema.parent.mkdir(parents=True)
    schema.write_text(BEFORE)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "v1")

    # A storage-only rename: Audit travels in no rpc.
    schema.write_text(BEFORE.replace("  actor: string", '  who: string @renamed_from("actor")'))
    quiet = run_toolkit("--json", "breaking", "--against", "main", cwd=repo)
    assert quiet.returncode == 0, quiet
    assert [c["kind"] for c in quiet.json["data"]["changes"]] == ["field_renamed"]

    schema.write_text(BEFORE.replace("  title: string", '  heading: string @renamed_from("title")'))
    loud = run_toolkit("breaking", "--against", "main", cwd=repo)
    assert loud.returncode == 4, loud
    assert "  field Note.title renamed to heading (field_renamed)" in loud.stdout
    assert (
        "✘ field Note.title renamed to heading changes the JSON of NoteService.GetNote: "
        'clients reading or sending "title" break'
    ) in loud.stdout, loud.stdout

    head = run_toolkit("--json", "breaking", "--against", "HEAD", "schema/app.toolkit", cwd=repo)
    assert head.json["data"]["breaking"] == 1
    missing = run_toolkit("breaking", "--against", "no-such-ref", cwd=repo)
    assert missing.returncode == 1, missing
    assert "git rev-parse" in missing.stderr
