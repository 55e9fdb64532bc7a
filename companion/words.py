"""Word construction for Word Mahjong: spelling a word with letter tiles and
wildcards, dictionary checks, and finding a word among free tiles.

Pure: the dictionary comes in as a set of lower-case words (the I/O shell
:mod:`companion.wordlist` loads it once).  Sources: Word Mahjong 2.1 Rule 2
"Word Construction Mode" (three or more free tiles spelling a valid English
word, submitted together) and Rule 3 "Wildcard Tiles" (a wildcard stands for
any letter A-Z).

Tiles are face ids of the ``word`` tile set (:mod:`companion.tiles`): the
letters ``"A"`` ... ``"Z"`` and ``"wild"``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import AbstractSet, Iterable, Mapping, Sequence

import numpy as np

from companion.errors import BadInput, IllegalMove
from companion.wording import count

WILD = "wild"
MIN_WORD = 3  # Word Mahjong 2.1 Rule 2: "Word Length >= 3"


def normalize(word: str) -> str:
    """Upper-case ``word`` and check it is letters A-Z only.

    Raises:
        BadInput: empty or holding anything but the letters A-Z.
    """
    w = word.strip().upper()
    if not w or not all("A" <= c <= "Z" for c in w):
        raise BadInput(f"bad word {word!r}: letters A-Z only")
    return w


def spell(word: str, faces: Sequence[str]) -> list[str]:
    """Check that ``faces`` (tile faces in spelling order) spell ``word``.

    Returns:
        the letter each tile stands for (a wildcard's letter is the word's
        letter at its place).

    Raises:
        BadInput: malformed word.  IllegalMove: too short, or a tile's letter
        differs from the word's letter at that place.
    """
    w = normalize(word)
    if len(w) < MIN_WORD:
        raise IllegalMove(f"{w} is too short: a word needs {MIN_WORD} or more letters")
    if len(w) != len(faces):
        given = "1 tile was" if len(faces) == 1 else f"{len(faces)} tiles were"
        raise IllegalMove(f"{w} has {count(len(w), 'letter')} but {given} given")
    for i, (c, f) in enumerate(zip(w, faces)):
        if f != WILD and f != c:
            raise IllegalMove(f"tile {i + 1} is {f!r}, not {c!r}: the tiles do not spell {w}")
    return list(w)


def inflection_bases(word: str) -> list[str]:
    """The words ``word`` could be an inflection of, by English spelling
    rules: plurals and third persons (-s, -es, -ies, -ves for -f and -fe, a
    doubled consonant as in quizzes, -ren as in children), past forms (-ed,
    -d, -ied, a doubled consonant) and past participles in -en (taken,
    eaten, written), present participles (-ing, a dropped e, a doubled
    consonant, -ying for -ie) and comparisons (-er, -est, -ier, -iest).  Over-generates on purpose (``"sing"`` gives ``"s"``): the
    dictionary decides which bases exist, and a corpus which inflections are
    real (:func:`companion.wordlist.words`).

    Args:
        word: lower-case letters.

    Returns:
        Candidate bases of two letters or more, in no particular order (may
        repeat).
    """
    w = word
    out: list[str] = []
    if w.endswith("ies"):
        out.append(w[:-3] + "y")
    if w.endswith("ves"):
        out += [w[:-3] + "f", w[:-3] + "fe"]
    if w.endswith("es"):
        out.append(w[:-2])
        if len(w) > 4 and w[-3] == w[-4]:
            out.append(w[:-3])
    if w.endswith("s") and not w.endswith("ss"):
        out.append(w[:-1])
    if w.endswith("ied"):
        out.append(w[:-3] + "y")
    if w.endswith("ed"):
        out += [w[:-2], w[:-1]]
        if len(w) > 4 and w[-3] == w[-4]:
            out.append(w[:-3])
    if w.endswith("en"):
        out += [w[:-1], w[:-2]]
        if len(w) > 4 and w[-3] == w[-4]:
            out.append(w[:-3] + "e")
    if w.endswith("ren"):
        out.append(w[:-3])
    if w.endswith("ing"):
        out += [w[:-3], w[:-3] + "e"]
        if len(w) > 5 and w[-4] == w[-5]:
            out.append(w[:-4])
        if w.endswith("ying"):
            out.append(w[:-4] + "ie")
    for suffix in ("er", "est"):
        if w.endswith(suffix):
            stem = w[:-len(suffix)]
            out += [stem, stem + "e"]
            if stem.endswith("i"):
                out.append(stem[:-1] + "y")
            if len(stem) > 2 and stem[-1] == stem[-2]:
                out.append(stem[:-1])
    return [b for b in out if len(b) >= 2]


def in_dictionary(word: str, words: AbstractSet[str]) -> bool:
    """True when ``word`` (any case) is in ``words`` (a set of lower-case words)."""
    return word.strip().lower() in words


def check_word(word: str, faces: Sequence[str], words: AbstractSet[str]) -> list[str]:
    """:func:`spell` plus the dictionary check (2.1 Rule 2 "Dictionary Validated").

    Raises:
        BadInput / IllegalMove: as :func:`spell`; IllegalMove when the word is
        not in the dictionary.
    """
    letters = spell(word, faces)
    if not in_dictionary(word, words):
        raise IllegalMove(f"{normalize(word)} is not in the dictionary")
    return letters


@dataclass
class WordIndex:
    """A dictionary prepared for "which words can these tiles spell" questions.

    Build it once per dictionary (it filters the words once, lazily).

    Attributes:
        words: lower-case words; only those of 3+ letters a-z are searched.
        frequency: how often each lower-case word is used (any scale), to
            rank the anagrams :meth:`spelled_by` finds; None: A-Z only.
    """

    words: AbstractSet[str]
    frequency: Mapping[str, int] | None = None
    _rows: tuple[str, ...] | None = field(default=None, repr=False)
    _anagrams: dict[str, tuple[str, ...]] | None = field(default=None, repr=False)
    _counts: tuple | None = field(default=None, repr=False)

    def _index(self) -> tuple[str, ...]:
        if self._rows is None:
            by_len: dict[int, list[str]] = {}
            for w in self.words:
                if len(w) >= MIN_WORD and w.isascii() and w.isalpha() and w.islower():
                    by_len.setdefault(len(w), []).append(w)
            rows: list[str] = []
            for n in sorted(by_len, reverse=True):      # longest first, then a-z
                rows += sorted(by_len[n])
            self._rows = tuple(rows)
        return self._rows

    def find(self, tiles: Iterable[str], limit: int = 1, max_len: int | None = None) -> list[str]:
        """Words (upper case) the tiles can spell, longest first, then A-Z.

        Args:
            tiles: face ids of the available tiles (letters and ``"wild"``).
            limit: how many words to return at most.
            max_len: the longest word wanted (None: as many letters as tiles).
        """
        counts = Counter(tiles)
        wilds = counts.pop(WILD, 0)
        have = Counter({k.lower(): v for k, v in counts.items()})
        drop = str.maketrans("", "", "".join(have))
        n = sum(have.values()) + wilds
        if max_len is not None:
            n = min(n, max_len)
        found = []
        for w in self._index():
            if len(w) > n or len(w.translate(drop)) > wilds:   # letters we lack entirely
                continue
            short = sum(max(0, c - have.get(k, 0)) for k, c in Counter(w).items())
            if short <= wilds:
                found.append(w.upper())
                if len(found) >= limit:
                    break
        return found


    def spelled_by(self, tiles: Iterable[str], limit: int = 1) -> list[str]:
        """Words (upper case) that use every one of ``tiles`` (face ids:
        letters and ``"wild"``) exactly once: what a set of tiles taken off
        the board together may have spelled (Word Mahjong 2.1 Rule 2, a
        wildcard standing for any letter, Rule 3).  The likeliest first: the
        most used in English by ``frequency`` (then A-Z), so that E, E, R, T
        gives TREE before RETE.  Empty for fewer than 3 tiles.
        """
        counts = Counter(tiles)
        wilds = counts.pop(WILD, 0)
        letters = "".join(sorted(k.lower() * v for k, v in counts.items()))
        if len(letters) + wilds < MIN_WORD:
            return []
        table = self._by_letters()
        found: set[str] = set()
        if wilds <= 2:
            import itertools
            for extra in itertools.combinations_with_replacement("abcdefghijklmnopqrstuvwxyz", wilds):
                found.update(table.get("".join(sorted(letters + "".join(extra))), ()))
        else:                                  # many wildcards: every word of that length that fits
            n = len(letters) + wilds
            found.update(w.lower() for w in self.find(tiles, limit=10 ** 9) if len(w) == n)
        freq = self.frequency or {}
        return [w.upper() for w in sorted(found, key=lambda w: (-freq.get(w, 0), w))[:limit]]

    def extends(self, tiles: Iterable[str], available: Iterable[str], max_len: int,
                min_frequency: int = 0) -> bool:
        """Whether some word longer than ``tiles`` (at most ``max_len``
        letters) uses every one of ``tiles`` and takes its other letters from
        ``available``: letters a player who has taken ``tiles`` off the board
        could still be spelling (Word Mahjong 2.1 Rule 2, "Select three or
        more free letter tiles sequentially"; a wildcard, taken or available,
        stands for any letter, Rule 3).

        Args:
            tiles: face ids taken (letters and ``"wild"``).
            available: face ids still to be had (e.g. the free tiles standing).
            max_len: the longest word looked for, letters.
            min_frequency: only words ``frequency`` counts at least this
                often (0: every word of the index).
        """
        have = Counter(tiles)
        wt = have.pop(WILD, 0)
        av = Counter(available)
        aw = av.pop(WILD, 0)
        n = sum(have.values()) + wt
        counts, lens, freq = self._letter_counts()
        rows = (lens > n) & (lens <= max_len)
        if min_frequency > 0:
            rows &= freq >= min_frequency
        h = np.zeros(26, np.int16)
        for k, v in have.items():
            if len(k) != 1 or not k.isascii() or not k.isalpha():
                return False
            h[ord(k.lower()) - 97] += v
            rows &= counts[:, ord(k.lower()) - 97] >= h[ord(k.lower()) - 97]   # every taken letter in the word
        if not rows.any():
            return False
        a = np.zeros(26, np.int16)
        for k, v in av.items():
            if len(k) == 1 and k.isascii() and k.isalpha():
                a[ord(k.lower()) - 97] += v
        rest = counts[rows].astype(np.int16) - h        # the word's letters not yet taken
        short = np.maximum(rest - a, 0).sum(axis=1)     # neither taken nor available: wildcards' work
        return bool((short <= wt + aw).any())

    def _letter_counts(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(counts, lengths, frequencies)``: (N, 26) uint8 letter counts of
        the index's words, (N,) int64 their lengths and (N,) int64 their
        ``frequency`` counts (0 where unknown; built once)."""
        if self._counts is None:
            rows = self._index()
            flat = np.frombuffer("".join(rows).encode("ascii"), np.uint8) - 97
            lens = np.array([len(w) for w in rows], np.int64)
            which = np.repeat(np.arange(len(rows)), lens)
            counts = np.zeros((len(rows), 26), np.uint8)
            np.add.at(counts, (which, flat), 1)
            f = self.frequency or {}
            self._counts = (counts, lens, np.array([f.get(w, 0) for w in rows], np.int64))
        return self._counts

    def _by_letters(self) -> dict[str, tuple[str, ...]]:
        """Words of the index by their sorted letters (built once)."""
        if self._anagrams is None:
            table: dict[str, list[str]] = {}
            for w in self._index():
                table.setdefault("".join(sorted(w)), []).append(w)
            self._anagrams = {k: tuple(v) for k, v in table.items()}
        return self._anagrams


def clearable(tiles: Iterable[str], words: Sequence[str], max_nodes: int = 20_000) -> bool | None:
    """Whether ``tiles`` (face ids: letters and ``"wild"``) can all be
    cleared by classic pairs and words, whatever order the layout allows:
    a necessary condition for clearing the board (free tiles are not
    looked at).  Pairs are two identical letters or two wildcards (Word
    Mahjong Rule 3: a wildcard may "pair with any other Wildcard tile"); a
    word is one of ``words`` (upper case, e.g. :meth:`WordIndex.find` of the
    same tiles) spelled with letters and wildcards.  Depth-first over the
    rarest letter, memoised.

    Returns:
        True or False; None when ``max_nodes`` positions were looked at
        without an answer.
    """
    start = Counter(tiles)
    cands = [(w, Counter(w)) for w in words]
    seen: dict[tuple, bool] = {}
    nodes = 0

    class _Budget(Exception):
        pass

    def rec(c: Counter) -> bool:
        nonlocal nodes
        key = tuple(sorted(c.items()))
        if key in seen:
            return seen[key]
        nodes += 1
        if nodes > max_nodes:
            raise _Budget
        wilds = c.get(WILD, 0)
        letters = [k for k in c if k != WILD]
        if not letters:
            ok = wilds % 2 == 0 or any(len(w) <= wilds for w, _ in cands)
            seen[key] = ok
            return ok
        rare = min(letters, key=lambda k: (c[k], k))
        ok = False
        if c[rare] >= 2:
            ok = rec(+(c - Counter({rare: 2})))
        for w, need in cands:
            if ok:
                break
            if rare not in need:
                continue
            short = sum(max(0, n - c.get(k, 0)) for k, n in need.items())
            if short > wilds:
                continue
            used = Counter({k: min(n, c.get(k, 0)) for k, n in need.items()})
            used[WILD] += short
            ok = rec(+(c - used))
        seen[key] = ok
        return ok

    try:
        return rec(+start)
    except _Budget:
        return None


def assign(word: str, tiles: Sequence[tuple[int, str]]) -> list[int]:
    """Pick tiles (``(slot index, face)`` pairs) spelling ``word``, letters
    first, wildcards for the rest; returns slot indices in spelling order.

    Raises:
        IllegalMove: the tiles cannot spell the word.
    """
    w = normalize(word)
    pool: dict[str, list[int]] = {}
    for i, f in tiles:
        pool.setdefault(f, []).append(i)
    out = []
    for c in w:
        if pool.get(c):
            out.append(pool[c].pop(0))
        elif pool.get(WILD):
            out.append(pool[WILD].pop(0))
        else:
            raise IllegalMove(f"the tiles cannot spell {w}")
    return out
