"""The Word Mahjong dictionary: loaded once, lazily, from the maintained
``english-words`` package (PyPI ``english-words``, a project dependency).

This is the I/O shell around :mod:`companion.words` (which is pure and takes a
word set).  We join the package's two lists, ``web2`` (Webster's Second
International) and ``gcide`` (the GNU Collaborative International Dictionary
of English), in their lower-case, letters-only forms (package docs:
``get_english_words_set(sources, alpha=True, lower=True)``).  Neither list
holds regular plurals or verb forms ("trees", "walked"); docs/RULES.md says so.
"""

from __future__ import annotations

from functools import lru_cache

from companion.errors import BadInput

SOURCES = ("web2", "gcide")


@lru_cache(maxsize=1)
def words() -> frozenset[str]:
    """The dictionary as a frozenset of lower-case words (loaded on first call).

    Raises:
        BadInput: the ``english-words`` package is not installed.
    """
    try:
        from english_words import get_english_words_set
    except ImportError:
        raise BadInput("the Word Mahjong dictionary needs the 'english-words' package "
                       "(pip install english-words)") from None
    return frozenset(get_english_words_set(list(SOURCES), alpha=True, lower=True))


@lru_cache(maxsize=1)
def index():
    """A :class:`companion.words.WordIndex` over :func:`words`, built once."""
    from companion.words import WordIndex
    return WordIndex(words())
