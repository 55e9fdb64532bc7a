"""The Word Mahjong dictionary: loaded once, lazily, from two maintained
packages (both project dependencies).

This is the I/O shell around :mod:`companion.words` (which is pure and takes a
word set).  The dictionary is

* the entries of ``english-words``' two lists, ``web2`` (Webster's Second
  International) and ``gcide`` (the GNU Collaborative International Dictionary
  of English), written in lower-case letters only as the lists give them
  (package docs: ``get_english_words_set(sources)``): capitalised entries are
  names ("Paris" the city, "John"), and entries with hyphens, spaces or
  capitals are affixes ("-ing"), compounds or abbreviations, none of them a
  word a player spells; and
* the regular inflections of those words (plurals, past forms, -ing forms,
  comparisons: :func:`companion.words.inflection_bases`) that English text
  actually uses, as attested by the English word-frequency list of
  ``pyspellchecker`` (``SpellChecker().word_frequency``): neither dictionary
  list holds "trees" or "walked".

docs/RULES.md 4.2 records the choice.
"""

from __future__ import annotations

import re
from functools import lru_cache

from companion.errors import BadInput

SOURCES = ("web2", "gcide")
_LOWER = re.compile(r"[a-z]+")


@lru_cache(maxsize=1)
def words() -> frozenset[str]:
    """The dictionary as a frozenset of lower-case words (loaded on first
    call, about 0.5 s).

    Raises:
        BadInput: the ``english-words`` or ``pyspellchecker`` package is not
            installed.
    """
    try:
        from english_words import get_english_words_set
        from spellchecker import SpellChecker
    except ImportError:
        raise BadInput("the Word Mahjong dictionary needs the 'english-words' and 'pyspellchecker' packages "
                       "(pip install english-words pyspellchecker)") from None
    from companion.words import inflection_bases
    base = {w for w in get_english_words_set(list(SOURCES)) if _LOWER.fullmatch(w)}
    used = SpellChecker(language="en", distance=1).word_frequency.dictionary
    inflected = {w for w in used if w not in base and _LOWER.fullmatch(w)
                 and any(b in base for b in inflection_bases(w))}
    return frozenset(base | inflected)


@lru_cache(maxsize=1)
def index():
    """A :class:`companion.words.WordIndex` over :func:`words`, built once."""
    from companion.words import WordIndex
    return WordIndex(words())
