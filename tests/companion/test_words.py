"""Word construction (Word Mahjong 2.1 Rules 2-3) and the english-words dictionary."""

from __future__ import annotations

import pytest

from companion import words as W
from companion.errors import BadInput, IllegalMove


def test_spell_with_letters_and_wildcards():
    assert W.spell("tree", ["T", "R", "E", "E"]) == list("TREE")
    assert W.spell("TREE", ["T", "wild", "E", "wild"]) == list("TREE")
    with pytest.raises(IllegalMove, match="tile 2 is 'A', not 'R'"):
        W.spell("tree", ["T", "A", "E", "E"])
    with pytest.raises(IllegalMove, match="too short"):
        W.spell("at", ["A", "T"])
    with pytest.raises(IllegalMove, match="4 letters but 3 tiles were given"):
        W.spell("tree", ["T", "R", "E"])
    with pytest.raises(IllegalMove, match="TREE has 4 letters but 1 tile was given"):
        W.spell("tree", ["T"])
    with pytest.raises(BadInput, match="letters A-Z"):
        W.normalize("don't")
    with pytest.raises(BadInput):
        W.normalize("")


def test_check_word_against_a_word_set():
    words = frozenset({"tree", "cat"})
    assert W.check_word("Cat", ["C", "A", "T"], words) == list("CAT")
    with pytest.raises(IllegalMove, match="CAX is not in the dictionary"):
        W.check_word("cax", ["C", "A", "X"], words)


def test_word_index_finds_longest_first():
    idx = W.WordIndex(frozenset({"tea", "eat", "ate", "teas", "seat", "zz", "tree", "a"}))
    assert idx.find(["T", "E", "A"], limit=5) == ["ATE", "EAT", "TEA"]
    assert idx.find(["T", "E", "A", "S"], limit=2) == ["SEAT", "TEAS"]
    assert idx.find(["T", "R", "E", "wild"], limit=1) == ["TREE"]        # wild stands for E
    assert idx.find(["T", "R", "E"]) == []
    assert idx.find(["Q", "X", "Z", "wild", "wild"]) == []


def test_words_spelled_by_every_tile_likeliest_first():
    idx = W.WordIndex(frozenset({"tea", "eat", "ate", "teas", "seat", "tree", "rete", "zz"}),
                      frequency={"tree": 9000, "eat": 500, "tea": 800})
    assert idx.spelled_by(["E", "R", "T", "E"], limit=5) == ["TREE", "RETE"]     # used more, then A-Z
    assert idx.spelled_by(["T", "E", "A"], limit=5) == ["TEA", "EAT", "ATE"]
    assert idx.spelled_by(["T", "E", "A", "S", "wild"]) == []                    # every tile, not 4 of 5
    assert idx.spelled_by(["wild", "S", "A", "E"], limit=5) == ["SEAT", "TEAS"]   # the wildcard as T
    assert idx.spelled_by(["wild"] * 3 + ["A"], limit=1) == ["SEAT"]             # many wildcards
    assert idx.spelled_by(["E", "E"]) == []                                       # under 3 tiles


def test_assign_uses_letters_before_wildcards():
    tiles = [(3, "wild"), (5, "T"), (7, "E"), (9, "R")]
    assert W.assign("tree", tiles) == [5, 9, 7, 3]
    with pytest.raises(IllegalMove, match="cannot spell"):
        W.assign("trees", tiles)


def test_english_words_dictionary():
    pytest.importorskip("english_words", reason="english-words is a project dependency")
    pytest.importorskip("spellchecker", reason="pyspellchecker is a project dependency")
    pytest.importorskip("lemminflect", reason="lemminflect is a project dependency")
    from companion import wordlist
    words = wordlist.words()
    assert wordlist.words() is words                      # loaded once
    assert len(words) > 200_000
    for w in ("tree", "stone", "quiz", "zebra", "jazz"):
        assert W.in_dictionary(w, words), w
    for w in ("xqz", "zzzt"):
        assert not W.in_dictionary(w, words)
    # GCIDE's headwords, which all start with a capital ("Box")
    for w in ("box", "hang", "proud", "feet", "paid", "held", "women", "heard", "became", "cookie"):
        assert W.in_dictionary(w, words), w
    # inflections the word-frequency list attests (RULES.md 4.2)
    for w in ("trees", "walked", "babies", "running", "stopped", "happier", "lying", "foxes", "boxes",
              "knives", "quizzes", "children", "forgiven", "written"):
        assert W.in_dictionary(w, words), w
    # forms no spelling rule makes, and inflections of inflections (lemminflect's lemmas)
    for w in ("began", "overheard", "gentlemen", "withdrew", "mice", "hunters", "policemen"):
        assert W.in_dictionary(w, words), w
    # no names Webster's writes with a capital, abbreviations, affixes or made-up inflections
    for w in ("john", "texas", "abc", "pre", "ed", "nasa", "dna", "informations", "childs", "goed"):
        assert not W.in_dictionary(w, words), w
    assert wordlist.index().find(["Q", "U", "I", "Z"], limit=1) == ["QUIZ"]


def test_inflection_bases_follow_english_spelling():
    for word, base in (("trees", "tree"), ("foxes", "fox"), ("babies", "baby"), ("walked", "walk"),
                       ("baked", "bake"), ("stopped", "stop"), ("carried", "carry"), ("making", "make"),
                       ("running", "run"), ("lying", "lie"), ("happier", "happy"), ("biggest", "big"),
                       ("nicer", "nice"), ("knives", "knife"), ("wolves", "wolf"), ("quizzes", "quiz"),
                       ("taken", "take"), ("eaten", "eat"), ("written", "write"), ("children", "child")):
        assert base in W.inflection_bases(word), (word, W.inflection_bases(word))
    assert W.inflection_bases("glass") == []           # -ss is no plural
    assert W.inflection_bases("tree") == []
