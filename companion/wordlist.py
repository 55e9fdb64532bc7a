"""The Word Mahjong dictionary: loaded once, lazily, from two maintained
packages (both project dependencies).

This is the I/O shell around :mod:`companion.words` (which is pure and takes a
word set).  The dictionary is

* the words of ``english-words``' two lists (package docs:
  ``get_english_words_set(sources)``): ``web2`` (Webster's Second
  International), whose entries are written as words are (a capital for a
  name: "Paris" the city, "John"), in its lower-case entries; and ``gcide``
  (the GNU Collaborative International Dictionary of English), whose
  headwords all start with a capital ("Box"), in its headwords of letters
  only, less the names ``web2`` writes with a capital.  Entries with
  hyphens, spaces or inner capitals are affixes ("-ing"), compounds or
  abbreviations, none of them a word a player spells; and
* the inflections of those words (plurals, past forms, -ing forms,
  comparisons: :func:`companion.words.inflection_bases`) that English text
  actually uses, as attested by the English word-frequency list of
  ``pyspellchecker`` (``SpellChecker().word_frequency``): neither dictionary
  list holds "trees" or "walked"; and the forms of those two kinds that
  spelling rules cannot make (BEGAN, OVERHEARD, GENTLEMEN, MICE, and
  HUNTERS from HUNTER from HUNT), found as inflections of them by the
  ``lemminflect`` package, when the same word-frequency list attests them.

docs/RULES.md 4.2 records the choice.
"""

from __future__ import annotations

import re
from functools import lru_cache

from companion.errors import BadInput

SOURCES = ("web2", "gcide")
_LOWER = re.compile(r"[a-z]+")
_NAME = re.compile(r"[A-Z][a-z]+")
_HEADWORD = re.compile(r"[A-Za-z][a-z]+")


@lru_cache(maxsize=1)
def words() -> frozenset[str]:
    """The dictionary as a frozenset of lower-case words (loaded on first
    call, about 0.7 s).

    Raises:
        BadInput: the ``english-words`` or ``pyspellchecker`` package is not
            installed.
    """
    try:
        from english_words import get_english_words_set
        from spellchecker import SpellChecker
        import lemminflect  # noqa: F401  (used by _lemmas)
    except ImportError:
        raise BadInput("the Word Mahjong dictionary needs the 'english-words', 'pyspellchecker' and "
                       "'lemminflect' packages (pip install english-words pyspellchecker lemminflect)") from None
    from companion.words import inflection_bases
    web2 = get_english_words_set(["web2"])
    base = {w for w in web2 if _LOWER.fullmatch(w)}
    names = {w.lower() for w in web2 if _NAME.fullmatch(w)} - base
    base |= {w.lower() for w in get_english_words_set(["gcide"]) if _HEADWORD.fullmatch(w)} - names
    used = SpellChecker(language="en", distance=1).word_frequency.dictionary
    inflected = {w for w in used if w not in base and _LOWER.fullmatch(w)
                 and any(b in base for b in inflection_bases(w))}
    known = base | inflected
    # forms spelling rules cannot make (began, overheard, gentlemen, mice)
    # and inflections of inflections (hunters: hunter, from hunt), by the
    # lemmas lemminflect gives them
    irregular = {w for w in used if w not in known and _LOWER.fullmatch(w)
                 and any(b != w and b in known for b in _lemmas(w))}
    return frozenset(known | irregular)


def _lemmas(word: str) -> set[str]:
    """Every lemma lemminflect knows for ``word`` (package docs:
    ``getAllLemmas(word)``, a dict from part of speech to lemmas)."""
    from lemminflect import getAllLemmas
    return {b for forms in getAllLemmas(word).values() for b in forms}


@lru_cache(maxsize=1)
def index():
    """A :class:`companion.words.WordIndex` over :func:`words`, built once,
    its anagrams ranked by ``pyspellchecker``'s English word frequencies."""
    from companion.words import WordIndex
    known = words()
    from spellchecker import SpellChecker
    return WordIndex(known, SpellChecker(language="en", distance=1).word_frequency.dictionary)
