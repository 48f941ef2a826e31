"""User query text, parsed once into words and phrases that no engine can misread.

The grammar is deliberately small and the same on every adapter: words are ANDed, a
double-quoted section is a phrase (its words in that order, next to each other).
Nothing else is an operator: ``-``, ``OR``, ``NEAR``, ``*``, ``:``, parentheses and a
stray quote are ordinary text, so a user typing FTS syntax gets a search for their words
and never a database syntax error. Each adapter renders the parsed query in its own
engine's language from the *words* only (runs of letters and digits), which is what makes
escaping unnecessary: no character an engine treats specially survives parsing.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

__all__ = ["ParsedQuery", "parse_query", "words_of"]

#: A word: a run of letters or digits (``_`` and punctuation separate words, as in the
#: FTS5 ``unicode61`` tokenizer and PostgreSQL's parser).
_WORD = re.compile(r"[^\W_]+")
#: Longest query text accepted, in characters.
MAX_QUERY_LENGTH = 1024
#: Most words (over terms and phrases) one query may hold.
MAX_QUERY_WORDS = 64


def words_of(text: str) -> list[str]:
    """Return the lower-cased words of ``text``."""
    return [word.lower() for word in _WORD.findall(text)]


@dataclass(frozen=True)
class ParsedQuery:
    """A query as words: ``terms`` (each must occur) and ``phrases`` (each, in order)."""

    terms: tuple[str, ...]
    phrases: tuple[tuple[str, ...], ...]

    @property
    def empty(self) -> bool:
        """Tell whether the query has no word at all."""
        return not self.terms and not self.phrases

    def fts5(self) -> str:
        """Render as an FTS5 MATCH expression: every word inside a double-quoted string."""
        parts = [f'"{term}"' for term in self.terms]
        parts += ['"' + " ".join(phrase) + '"' for phrase in self.phrases]
        return " AND ".join(parts)

    def engine_text(self) -> str:
        """Render for a search server that reads bare words and ``"quoted phrases"``."""
        parts = list(self.terms) + ['"' + " ".join(phrase) + '"' for phrase in self.phrases]
        return " ".join(parts)

    def digest(self) -> str:
        """Return a short fingerprint of the query (ties a cursor to its query)."""
        return hashlib.blake2b(repr(self).encode(), digest_size=8).hexdigest()


def parse_query(text: str) -> ParsedQuery:
    """Parse user text: quoted sections become phrases, everything else words.

    An unmatched quote opens a phrase that runs to the end of the text. A phrase of one
    word is a term. Raises ``ValueError`` for text over :data:`MAX_QUERY_LENGTH`
    characters or :data:`MAX_QUERY_WORDS` words; the caller turns it into its error.
    """
    if len(text) > MAX_QUERY_LENGTH:
        raise ValueError(f"is longer than {MAX_QUERY_LENGTH} characters")
    terms: list[str] = []
    phrases: list[tuple[str, ...]] = []
    for position, chunk in enumerate(text.split('"')):
        words = words_of(chunk)
        if position % 2 and len(words) > 1:
            phrases.append(tuple(words))
        else:
            terms.extend(words)
    unique_terms = tuple(dict.fromkeys(terms))
    unique_phrases = tuple(dict.fromkeys(phrases))
    if len(unique_terms) + sum(len(p) for p in unique_phrases) > MAX_QUERY_WORDS:
        raise ValueError(f"has more than {MAX_QUERY_WORDS} words")
    return ParsedQuery(unique_terms, unique_phrases)
