"""Relevance on real prose: a phrase query finds its paragraph first, on every adapter.

The corpus is 400 paragraphs of the standard library's documentation
(:mod:`.corpus`); each probe is four consecutive words that occur in one paragraph only.
"""

from __future__ import annotations

import pytest

from .corpus import paragraphs, probes

PROBES = probes()


@pytest.fixture
def indexed(opened):
    corpus = paragraphs()
    assert len(corpus) == 400
    for start in range(0, len(corpus), 200):
        opened.search.bulk_index(
            "docs",
            [
                (f"p{i}", {"body": text}, {"part": i % 3})
                for i, text in enumerate(corpus[start : start + 200], start)
            ],
        )
    assert opened.search.count("docs") == 400
    return opened


def test_a_phrase_finds_its_paragraph_first(indexed):
    assert len(PROBES) == 7
    for position, phrase in PROBES:
        page = indexed.search.query("docs", f'"{phrase}"')
        assert page.doc_ids[:1] == [f"p{position}"], (position, phrase, page.doc_ids)
        assert "<mark>" in page.hits[0].snippet


def test_the_phrase_words_unquoted_still_rank_the_paragraph_first(indexed):
    hits = 0
    for position, phrase in PROBES:
        page = indexed.search.query("docs", phrase, limit=5)
        assert f"p{position}" in page.doc_ids, position
        hits += page.doc_ids[0] == f"p{position}"
    assert hits >= len(PROBES) - 2


def test_a_filter_keeps_or_removes_the_paragraph(indexed):
    position, words = PROBES[2]
    phrase = f'"{words}"'
    assert indexed.search.query("docs", phrase, filters={"part": position % 3}).doc_ids == [
        f"p{position}"
    ]
    assert indexed.search.query("docs", phrase, filters={"part": (position + 1) % 3}).doc_ids == []
