"""Schema text several test modules compile: one copy, so a grammar change edits one place."""

from __future__ import annotations

__all__ = ["TEAM_TAG_NOTE"]

#: Three entities joined by a ``belongs_to`` and a ``many_to_many``: the relation tests'
#: model (a note of a team, with tags), each with an ``owner`` to check reads against.
TEAM_TAG_NOTE = """\
entity Team {
  id: uuid @primary
  owner: string
}

entity Tag {
  id: uuid @primary
  label: string
}

entity Note {
  id: uuid @primary
  owner: string
  team_id: uuid
  belongs_to team: Team @foreign_key(team_id)
  many_to_many tags: Tag { join_table: note_tags }
}
"""
