"""A real-prose corpus: paragraphs of the standard library's own documentation.

The paragraphs are extracted at test time from the docstrings of a fixed list of
standard-library modules (public-domain-compatible text shipped with every Python, so the
repository carries no copy): each docstring is split at blank lines, whitespace is
folded, and only paragraphs of real sentences are kept (12+ words, mostly alphabetic, no
doctest or code lines). The order is fixed, so a run always sees the same corpus.
"""

from __future__ import annotations

import importlib
import inspect
import re
from functools import lru_cache

from toolkit_batteries.search.query import words_of

MODULES = (
    "argparse", "asyncio.events", "asyncio.locks", "asyncio.queues", "asyncio.tasks",
    "base64", "bisect", "calendar", "collections", "concurrent.futures._base",
    "configparser", "contextlib", "copy", "csv", "dataclasses", "datetime", "decimal",
    "difflib", "email.message", "email.utils", "enum", "fractions", "ftplib", "functools",
    "getopt", "gettext", "glob", "gzip", "hashlib", "heapq", "hmac", "html.parser",
    "http.client", "http.cookiejar", "http.server", "imaplib", "inspect", "ipaddress",
    "json", "json.decoder", "json.encoder", "locale", "logging", "logging.handlers",
    "mailbox", "mimetypes", "netrc", "numbers", "operator", "optparse", "os", "pathlib",
    "pickle", "pkgutil", "platform", "plistlib", "poplib", "pprint", "queue", "random",
    "re", "sched", "secrets", "selectors", "shelve", "shlex", "shutil", "smtplib",
    "socket", "socketserver", "sqlite3", "ssl", "statistics", "string", "subprocess",
    "tarfile", "tempfile", "textwrap", "threading", "timeit", "tokenize", "trace",
    "traceback", "typing", "unittest.case", "unittest.mock", "urllib.parse",
    "urllib.request", "uuid", "warnings", "weakref", "zipfile", "zoneinfo",
)  # fmt: skip

#: English stop words (PostgreSQL's english configuration drops them).
_STOP_WORDS = frozenset(
    {
        "about",
        "above",
        "after",
        "again",
        "against",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "could",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "from",
        "further",
        "have",
        "having",
        "here",
        "into",
        "more",
        "most",
        "other",
        "over",
        "same",
        "should",
        "some",
        "such",
        "than",
        "that",
        "their",
        "theirs",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "under",
        "until",
        "very",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "whom",
        "with",
        "would",
        "your",
        "yours",
        "itself",
        "also",
        "will",
        "the",
        "and",
        "for",
        "are",
        "was",
        "not",
        "but",
        "can",
        "has",
        "had",
        "his",
        "her",
        "its",
        "our",
        "you",
        "all",
        "any",
        "nor",
        "off",
        "out",
        "own",
        "too",
        "who",
        "why",
        "how",
    }
)
_CODE = re.compile(r">>>|\.\.\.\s|^\s*[\w.]+\(.*\)\s*$|[{}\[\]=]{2,}|::$", re.MULTILINE)


def _docstrings(module_name: str) -> list[str]:
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return []
    found = [inspect.getdoc(module) or ""]
    for name in sorted(vars(module)):
        if name.startswith("_"):
            continue
        member = getattr(module, name)
        if getattr(member, "__module__", None) != module.__name__:
            continue
        found.append(inspect.getdoc(member) or "")
        if inspect.isclass(member):
            for attribute in sorted(vars(member)):
                if not attribute.startswith("_"):
                    found.append(inspect.getdoc(getattr(member, attribute, None)) or "")
    return found


def _prose(paragraph: str) -> bool:
    words = paragraph.split()
    if len(words) < 12 or _CODE.search(paragraph):
        return False
    alphabetic = sum(1 for word in words if word.strip(".,;:()'\"").isalpha())
    return alphabetic / len(words) >= 0.8


@lru_cache(maxsize=1)
def paragraphs(limit: int = 400) -> tuple[str, ...]:
    """Return up to ``limit`` distinct prose paragraphs, in a fixed order."""
    seen: dict[str, None] = {}
    for module_name in MODULES:
        for doc in _docstrings(module_name):
            for block in re.split(r"\n\s*\n", doc):
                if not _prose(block):
                    continue
                text = " ".join(block.split())
                seen.setdefault(text, None)
                if len(seen) >= limit:
                    return tuple(seen)
    return tuple(seen)


def unique_phrase(position: int, length: int = 4) -> str:
    """Return ``length`` consecutive words found only in paragraph ``position``.

    Words are compared by their first five letters, so a stemmed variant elsewhere in the
    corpus cannot make the phrase ambiguous on a stemming engine, and stop words are left
    out (PostgreSQL drops them from a phrase, which would shorten it).
    """
    corpus = paragraphs()

    def key(words: list[str]) -> list[str]:
        return [word[:5] for word in words]

    others = [key(words_of(text)) for i, text in enumerate(corpus) if i != position]
    tokens = corpus[position].split()
    for start in range(len(tokens) - length + 1):
        # Whole words only: "context.capitals" is one token to PostgreSQL's parser.
        window = [t.lower() for t in tokens[start : start + length - 1]]
        window.append(tokens[start + length - 1].rstrip(".,;:").lower())
        if not all(w.isalpha() and len(w) >= 3 for w in window) or set(window) & _STOP_WORDS:
            continue
        probe = key(window)
        if not any(other[i : i + length] == probe for other in others for i in range(len(other))):
            return " ".join(window)
    raise LookupError(f"paragraph {position} has no unique {length}-word phrase")


def probes(count: int = 7) -> list[tuple[int, str]]:
    """Return ``count`` (position, unique phrase) pairs spread over the corpus."""
    corpus = paragraphs()
    found: list[tuple[int, str]] = []
    for start in range(0, len(corpus), len(corpus) // count):
        for position in range(start, len(corpus)):
            try:
                found.append((position, unique_phrase(position)))
            except LookupError:
                continue
            break
    return found[:count]
