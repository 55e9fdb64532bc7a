"""Layout parsers and files: KMahjongg ``.layout``, GNOME Mahjongg ``.map``, mah's
``boards.json`` and the contract's layout JSON (companion/layouts.py,
companion/layout_files.py).

Hand-made files check each format's rules and each fault's one-line message;
the real corpus (../shared/corpus/layouts) checks that every real file imports,
and which real layouts can or cannot be built on the 18 x 8 mat.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from companion.errors import BadInput
from companion.layout_files import load_layout, read_layout_file
from companion.layouts import (Layout, Slot, check_layout, floating_slots, gnome_map_names,
                               normalise_name, parse_gnome_map, printable_name, parse_kmahjongg,
                               parse_layout_json, parse_mah_boards, shifted_to_origin)
from companion.rules import Board

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
CORPUS = SHARED / "corpus" / "layouts"


def _fails(parse, text: str, source: str, line: int, fault: str) -> None:
    """``parse(text, source)`` raises BadInput of one line "SOURCE:LINE: ...fault..."."""
    with pytest.raises(BadInput) as exc:
        parse(text, source)
    msg = str(exc.value)
    assert msg.startswith(f"{source}:{line}: "), msg
    assert fault in msg, msg
    assert "\n" not in msg


def _corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.skip(f"../shared/corpus not found: {CORPUS} (the real layouts)")
    return CORPUS


# --------------------------------------------------------------------------- KMahjongg

def _km11(rows_by_layer: list[list[str]], w: int, h: int) -> str:
    out = ["kmahjongg-layout-v1.1", "# Board size in quarter tiles", f"w{w}", f"h{h}",
           "# Board depth", f"d{len(rows_by_layer)}"]
    for z, rows in enumerate(rows_by_layer):
        out.append(f"# Level {z}")
        out += rows
    return "\n".join(out) + "\n"


# two tiles side by side, a third on top straddling them, a fourth half a row down
SMALL = _km11([["1212..", "434312", "....43", "......"],
               [".12...", ".43...", "......", "......"]], 6, 4)


class TestKMahjongg:
    def test_v11_header_and_half_offsets(self):
        lay = parse_kmahjongg(SMALL, "small.layout")
        assert lay.name == "small"
        assert lay.source == "small.layout"
        assert lay.slots == (Slot(0, 0, 0), Slot(2, 0, 0), Slot(4, 1, 0), Slot(1, 0, 1))

    def test_v10_fixed_32_by_16_by_5(self):
        board = ["." * 32] * 80
        board = list(board)
        board[0] = "12" + "." * 30            # layer 0, row 0
        board[1] = "43" + "." * 30
        board[16 + 0] = "12" + "." * 30       # layer 1, row 0
        board[16 + 1] = "43" + "." * 30
        board[4 * 16 + 14] = "." * 30 + "12"  # layer 4, row 14
        board[4 * 16 + 15] = "." * 30 + "43"
        text = "kmahjongg-layout-v1.0\n# comment\n" + "\n".join(board) + "\n"
        lay = parse_kmahjongg(text, "v10.layout")
        assert lay.slots == (Slot(0, 0, 0), Slot(0, 0, 1), Slot(30, 14, 4))

    @pytest.mark.parametrize("text, line, fault", [
        ("kmahjongg-layout-v2\n", 1, "not a KMahjongg layout"),
        (_km11([["1212", "4343"]], 4, 2).replace("1212", "12X2"), 8, "unexpected character 'X' in column 3"),
        (_km11([["1212", "434"]], 4, 2), 9, "row has 3 characters, expected 4"),
        (_km11([["1212", "4343"]], 4, 3), 9, "2 board rows, expected 3"),
        (_km11([["1212", "4343"]], 4, 1), 9, "2 board rows, expected 1"),
        (_km11([["1212", "4343"]], 4, 2).replace("w4", "wide"), 3, "bad header line"),
        (_km11([["...1", "...."]], 4, 2), 8, "sticks out of the 4 x 2 board"),
        (_km11([["1212", "4343"]], 4, 2).replace("h2\n", ""), 1, "without header line h"),
        ("kmahjongg-layout-v1.0\n" + "\n".join(["." * 32] * 79) + "\n", 80, "79 board rows, expected 80"),
    ])
    def test_malformed_names_file_and_line(self, text, line, fault):
        _fails(parse_kmahjongg, text, "bad.layout", line, fault)

    def test_only_the_1_marks_make_tiles(self):
        # KMahjongg reads tiles from the "1"s; castle.layout and crab.layout draw
        # one tile as "12" over "32", which KMahjongg (and we) accept.
        text = _km11([["12..", "32.."]], 4, 2)
        assert parse_kmahjongg(text, "x.layout").slots == (Slot(0, 0, 0),)


# --------------------------------------------------------------------------- GNOME

MAP = """<?xml version="1.0"?>
<!-- two maps; coordinates in whole tiles -->
<mahjongg>
  <map name="Tiny Bridge" scorename="tiny">
    <layer z="0">
      <row y="0" left="0" right="2"/>
      <tile x="3" y="0.5"/>
      <column x="0" top="1" bottom="2"/>
    </layer>
    <block z="1" left="0.5" right="1.5" top="0" bottom="0"/>
    <tile x="1" y="0" z="2"/>
  </map>
  <map name="Solo" scorename="solo">
    <col x="0" top="0" bottom="1"/>
  </map>
</mahjongg>
"""


class TestGnomeMap:
    def test_names(self):
        assert gnome_map_names(MAP) == ["Tiny Bridge", "Solo"]

    def test_shapes_in_half_tile_units(self):
        lay = parse_gnome_map(MAP, "m.map", "tiny bridge")
        assert lay.name == "Tiny Bridge"
        assert lay.slots == (Slot(0, 0, 0), Slot(2, 0, 0), Slot(4, 0, 0), Slot(6, 1, 0),
                             Slot(0, 2, 0), Slot(0, 4, 0),
                             Slot(1, 0, 1), Slot(3, 0, 1), Slot(2, 0, 2))

    def test_gnome_short_name_picks_the_map_too(self):
        # GNOME's scorename ("easy" is its Turtle) names a map when no map has that name
        assert parse_gnome_map(MAP, "m.map", "TINY").name == "Tiny Bridge"
        assert parse_gnome_map(MAP, "m.map", "solo").slots == (Slot(0, 0, 0), Slot(0, 2, 0))

    def test_col_alias_and_layer_default(self):
        assert parse_gnome_map(MAP, "m.map", "Solo").slots == (Slot(0, 0, 0), Slot(0, 2, 0))

    def test_several_maps_need_a_name(self):
        with pytest.raises(BadInput) as exc:
            parse_gnome_map(MAP, "m.map")
        msg = str(exc.value)
        assert msg.startswith("m.map: holds 2 maps")
        assert "'Tiny Bridge'" in msg and "'Solo'" in msg

    def test_a_name_that_several_maps_hold_is_refused(self):
        two = ('<mahjongg>\n<map name="A">\n<tile x="0" y="0"/>\n</map>\n'
               '<map name="A">\n<tile x="1" y="0"/>\n</map>\n<map name="B"><tile x="0" y="0"/></map>\n</mahjongg>')
        for asked in ("A", "a"):
            with pytest.raises(BadInput) as exc:
                parse_gnome_map(two, "m.map", asked)
            assert str(exc.value) == (f"m.map: holds 2 maps named 'A' (lines 2, 5), so --map-name {asked!r} "
                                      "cannot tell them apart; give each map its own name")
        assert parse_gnome_map(two, "m.map", "B").slots == (Slot(0, 0, 0),)
        # names that differ only in what a lookup ignores are the same name to --map-name
        alike = '<mahjongg><map name="Twin Peaks"><tile x="0" y="0"/></map><map name="twin-peaks"><tile x="1" y="0"/></map></mahjongg>'
        with pytest.raises(BadInput, match=r"holds 2 maps named 'Twin Peaks', 'twin-peaks', so"):
            parse_gnome_map(alike, "m.map", "twin peaks")

    def test_unknown_map_name_lists_the_names(self):
        with pytest.raises(BadInput, match=r"no map named 'Nope'; the maps are: 'Tiny Bridge', 'Solo'"):
            parse_gnome_map(MAP, "m.map", "Nope")

    @pytest.mark.parametrize("text, line, fault", [
        ('<mahjongg>\n<map name="a">\n<row y="0" left="0" right="1">\n</map>\n</mahjongg>', 4,
         "malformed XML"),
        ('<mahjongg>\n<map name="a">\n<row y="0" left="0"/>\n</map>\n</mahjongg>', 3,
         "<row> needs attribute 'right'"),
        ('<mahjongg>\n<map name="a">\n<tile x="one" y="0"/>\n</map>\n</mahjongg>', 3,
         "<tile> attribute x='one' is not a number"),
        # Python's float() reads these as 10 and 3; GNOME writes plain decimals
        ('<mahjongg>\n<map name="a">\n<tile x="1_0" y="0"/>\n</map>\n</mahjongg>', 3,
         "<tile> attribute x='1_0' is not a number"),
        ('<mahjongg>\n<map name="a">\n<tile x="\u0663" y="0"/>\n</map>\n</mahjongg>', 3,
         "<tile> attribute x='\u0663' is not a number"),
        ('<mahjongg>\n<map name="a">\n\n<tile x="0.25" y="0"/>\n</map>\n</mahjongg>', 4,
         "not a whole or half tile position"),
        ('<mahjongg>\n<tile x="0" y="0"/>\n</mahjongg>', 2, "<tile> outside a <map>"),
        ('<mahjongg>\n<map name="a">\n<tile x="0" y="0"/>\n<row y="0" left="0" right="1"/>\n'
         '</map>\n</mahjongg>', 4, "slot 0,0,0 given twice (first on line 3)"),
        ('<mahjongg>\n<map name="a">\n<row y="0" left="3" right="1"/>\n</map>\n</mahjongg>', 3,
         "left=3 is right of right=1"),
        ('<mahjongg>\n<map>\n</map>\n</mahjongg>', 2, "<map> needs attribute 'name'"),
    ])
    def test_malformed_names_file_and_line(self, text, line, fault):
        _fails(parse_gnome_map, text, "bad.map", line, fault)

    def test_a_bare_doctype_is_read_and_an_internal_subset_refused_by_name(self):
        # a DOCTYPE in the prolog (after the XML declaration and comments) is
        # well-formed XML: read as without it, line numbers kept
        body = MAP.split("\n", 1)[1]
        for doctype in ("<!DOCTYPE mahjongg>", '<!DOCTYPE mahjongg SYSTEM "mahjongg.dtd">'):
            for text in (MAP.replace("<mahjongg>", doctype + "\n<mahjongg>"), doctype + "\n" + body):
                assert parse_gnome_map(text, "dt.map", "tiny").slots == parse_gnome_map(MAP, "m.map", "tiny").slots
        bad = MAP.replace("<mahjongg>", "<!DOCTYPE mahjongg>\n<mahjongg>").replace('right="2"', 'right="x"')
        _fails(parse_gnome_map, bad, "dt.map", 7, "attribute right='x' is not a number")
        # entity declarations are not expanded: refused, saying why
        subset = MAP.replace("<mahjongg>", '<!DOCTYPE mahjongg [\n<!ENTITY big "x">\n]>\n<mahjongg>')
        _fails(parse_gnome_map, subset, "dt.map", 3, "a DOCTYPE with an internal subset")

    def test_no_map_at_all(self):
        with pytest.raises(BadInput, match=r"^empty\.map: no <map> element found$"):
            parse_gnome_map("<mahjongg></mahjongg>", "empty.map")


# --------------------------------------------------------------------------- JSON

BOARDS = """[
{"id":"1","name":"Strip","cat":"Shapes","map":[[0,[[0,[[0,3],8]]]],[1,[[0,3]]]]},
{"id":"2","name":"Dot","cat":"Shapes","map":[[0,[[1,5],[3,[5]]]]]}
]
"""


class TestJson:
    def test_mah_compact_cells(self):
        strip, dot = parse_mah_boards(BOARDS, "b.json")
        assert strip.name == "Strip" and strip.source == "b.json#Strip"
        # [x0, count] -> count tiles 2 apart; a bare x -> one tile; cells may be a bare x
        assert strip.slots == (Slot(0, 0, 0), Slot(2, 0, 0), Slot(4, 0, 0), Slot(8, 0, 0), Slot(3, 0, 1))
        assert dot.slots == (Slot(5, 1, 0), Slot(5, 3, 0))

    @pytest.mark.parametrize("text, line, fault", [
        ('[\n{"name":"A","map":[[0,[[0,[[0,"x"]]]]]]}\n]', 2,
         "board 0 ('A'): cell [0, \"x\"] in row y=0 layer 0 is not x or [x0, count]"),
        ('[\n{"name":"A","map":[]},\n{"name":"B","map":[[0,[[0,[1,1]]]]]}\n]', 3,
         "board 1 ('B'): slot 1,0,0 given twice"),
        ('[\n{"name":"A","map":[]},\n{"name":"B" "map":[]}\n]', 3, "malformed JSON"),
        ('[\n{"map":[]}\n]', 2, "board 0 has no \"name\" string"),
    ])
    def test_mah_malformed(self, text, line, fault):
        _fails(parse_mah_boards, text, "bad.json", line, fault)

    def test_contract_json_round_trip(self):
        lay = Layout("mini", (Slot(0, 0, 0), Slot(2, 0, 0), Slot(1, 0, 1)))
        text = json.dumps(lay.to_json(), indent=1)
        back = parse_layout_json(text, "mini.json")
        assert back.name == "mini" and back.slots == lay.slots and back.source == "mini.json"

    @pytest.mark.parametrize("text, line, fault", [
        ('{"name": "a",\n "slots": [[0, 0, 0],\n  [2, 0]]}', 3, "slot 1 is [2, 0], expected [x, y, z]"),
        ('{"name": "a",\n "slots": [[0, 0, 0],\n  [0, 0, 0]]}', 3, "slot 0,0,0 given twice (first on line 2)"),
        ('{"name": "a",\n "slots": [[0, 0, -1]]}', 2, "z >= 0"),
        ('{"name": "a",\n "slots": [[0, 0, 0],,]}', 2, "malformed JSON"),
        ('[1, 2]', 1, "must be an object"),
        ('{"name": "a"}', 1, "needs a \"slots\" list"),
        ('{"name": "a",\n "slots": [[2147483648, 6, 0]]}', 2, "coordinates must lie within +-2147483647"),
        ('{"name": "a",\n "slots": [[0, 6, 10000000000000000000000000000000]]}', 2, "within +-2147483647"),
    ])
    def test_contract_json_malformed(self, text, line, fault):
        _fails(parse_layout_json, text, "bad.json", line, fault)


# --------------------------------------------------------------------------- load_layout

class TestLoadLayout:
    @pytest.mark.parametrize("spec", ["cupids-citadel", "Cupid's Citadel", "CUPIDS_CITADEL",
                                      "cupids citadel", "the cupid's citadel", " Cupid’s Citadel "])
    def test_builtin_names_are_normalised(self, spec):
        assert load_layout(spec).name == "cupids-citadel"

    def test_titles_with_the(self):
        assert load_layout("The Dragon's Tail").name == "dragons-tail"
        assert load_layout("dragons tail").name == "dragons-tail"
        assert normalise_name("The Scholar's Bookrest") == "thescholarsbookrest"

    @pytest.mark.parametrize("spec, name", [
        ("twinhearts", "twin-hearts"), ("cupidscitadel", "cupids-citadel"), ("TwinHearts", "twin-hearts"),
        ("thetwinhearts", "twin-hearts"), ("twin_hearts", "twin-hearts"), ("Sprint (flat)", "sprint-flat"),
        ("sprintflat", "sprint-flat"), ("sprint 2layer", "sprint-2layer"), ("Sprint (2 layers)", "sprint-2layer"),
        ("dragon's.tail", "dragons-tail"), ("Cupid\u2019s  Citadel!", "cupids-citadel")])
    def test_only_letters_and_digits_of_a_name_count(self, spec, name):
        assert load_layout(spec).name == name

    def test_no_two_builtin_layouts_share_a_spelling(self):
        from companion import codex
        keys = {}
        for k in codex.BUILTIN_NAMES:
            title = codex.title(k)
            bare = title[4:] if title.startswith("The ") else title
            for spelling in {normalise_name(k), normalise_name(title), normalise_name(bare)}:
                assert keys.setdefault(spelling, k) == k, (spelling, keys[spelling], k)
            assert load_layout(k).name == k and load_layout(title).name == k
            assert load_layout(normalise_name(title)).name == k

    def test_unknown_name_suggests_the_closest(self):
        with pytest.raises(BadInput) as exc:
            load_layout("pagoda")
        msg = str(exc.value)
        assert msg.startswith("unknown layout 'pagoda'; did you mean pagoda-of-peace")
        with pytest.raises(BadInput, match=r"did you mean turtle"):
            load_layout("turtel")

    def test_files_of_each_kind_keep_their_coordinates(self, tmp_path):
        (tmp_path / "small.layout").write_text(SMALL)
        (tmp_path / "two.map").write_text(MAP)
        (tmp_path / "boards.json").write_text(BOARDS)
        mini = {"name": "mini", "slots": [[10, 3, 0], [12, 3, 0]]}
        (tmp_path / "mini.json").write_text(json.dumps(mini))
        assert load_layout(str(tmp_path / "small.layout")).slots[2] == Slot(4, 1, 0)
        assert load_layout(str(tmp_path / "two.map"), "Solo").slots == (Slot(0, 0, 0), Slot(0, 2, 0))
        assert load_layout(str(tmp_path / "boards.json"), "dot").name == "Dot"
        got = load_layout(str(tmp_path / "mini.json"))
        assert got.to_json() == mini
        assert shifted_to_origin(got).slots != got.slots  # the file's origin was kept

    def test_content_sniffing_without_suffix(self, tmp_path):
        (tmp_path / "noext").write_text(SMALL)
        assert len(read_layout_file(tmp_path / "noext")) == 4

    def test_map_needs_map_name(self, tmp_path):
        (tmp_path / "two.map").write_text(MAP)
        with pytest.raises(BadInput, match=r"two\.map: holds 2 maps, choose one with --map-name"):
            load_layout(str(tmp_path / "two.map"))

    def test_map_name_on_a_single_layout_file(self, tmp_path):
        (tmp_path / "small.layout").write_text(SMALL)
        with pytest.raises(BadInput, match=r"--map-name 'x' applies to \.map"):
            load_layout(str(tmp_path / "small.layout"), "x")

    @pytest.mark.parametrize("make, fault", [
        (lambda d: d / "missing.layout", "not found"),
        (lambda d: d, "is a folder"),
    ])
    def test_unreadable(self, tmp_path, make, fault):
        path = make(tmp_path)
        spec = str(path) + ("/" if path == tmp_path else "")
        with pytest.raises(BadInput, match=fault):
            load_layout(spec)

    def test_not_utf8(self, tmp_path):
        # a comment in a one-byte encoding (Latin-1) is read; bytes where the
        # layout should be are still refused, by the parser, on their line
        p = tmp_path / "latin.layout"
        p.write_bytes(SMALL.replace("# Level 0", "# Gr\xfc\xdfe, level 0").encode("latin-1"))
        assert load_layout(str(p)).slots == parse_kmahjongg(SMALL, "small.layout").slots
        p = tmp_path / "bin.layout"
        p.write_bytes(b"kmahjongg-layout-v1.0\n\xff\xfe\n")
        with pytest.raises(BadInput, match=r"bin\.layout:2: "):
            load_layout(str(p))

    @pytest.mark.parametrize("codec", ["utf-16", "utf-16-le", "utf-16-be"])
    def test_utf16_with_its_byte_order_mark(self, tmp_path, codec):
        # break-test: a .layout saved by Windows Notepad as "Unicode" was
        # refused as "first line '\xff\xfek\x00m\x00...' is not ..."
        bom = "" if codec == "utf-16" else "\ufeff"        # Python's "utf-16" writes its own
        want = parse_kmahjongg(SMALL, "small.layout").slots
        p = tmp_path / "small.layout"
        p.write_bytes((bom + SMALL.replace("\n", "\r\n")).encode(codec))
        assert load_layout(str(p)).slots == want
        j = tmp_path / "small.json"
        j.write_bytes((bom + json.dumps({"name": "small", "slots": [list(x) for x in want]})).encode(codec))
        assert load_layout(str(j)).slots == want
        m = tmp_path / "m.map"
        m.write_bytes((bom + MAP.replace('<?xml version="1.0"?>', '<?xml version="1.0" encoding="UTF-16"?>'))
                      .encode(codec))
        assert load_layout(str(m), "tiny bridge").slots == parse_gnome_map(MAP, "m.map", "tiny bridge").slots


# --------------------------------------------------------------------------- the corpus

GNOME_NAMES = ["Turtle", "The Ziggurat", "Four Bridges", "Cloud", "Tic-Tac-Toe", "Red Dragon",
               "Overpass", "Pyramid's Walls", "Confounding Cross", "Taipei"]


@pytest.fixture(scope="module")
def corpus() -> dict[str, list[Layout]]:
    base = _corpus()
    km = [parse_kmahjongg(p.read_text(encoding="utf-8"), str(p))
          for p in sorted((base / "kmahjongg").glob("*.layout"))]
    text = (base / "gnome-mahjongg" / "mahjongg.map").read_text(encoding="utf-8")
    gnome = [parse_gnome_map(text, "mahjongg.map", n) for n in gnome_map_names(text)]
    mah = parse_mah_boards((base / "mah" / "boards.json").read_text(encoding="utf-8"), "boards.json")
    return {"kmahjongg": km, "gnome": gnome, "mah": mah}


def test_every_corpus_file_imports(corpus):
    # none of the real files is malformed: 72 KMahjongg, 10 GNOME maps, 84 mah boards
    assert len(corpus["kmahjongg"]) == 72
    assert [m.name for m in corpus["gnome"]] == GNOME_NAMES
    assert len(corpus["mah"]) == 84
    assert all(check_layout(lay).playable for group in corpus.values() for lay in group)


def test_kmahjongg_default_is_the_turtle(corpus):
    default = next(lay for lay in corpus["kmahjongg"] if lay.name == "default")
    gnome_turtle = corpus["gnome"][0]
    # GNOME's Turtle is KMahjongg's default moved 1 half-unit left
    assert {Slot(s.x - 1, s.y, s.z) for s in default.slots} == set(gnome_turtle.slots)


def _unbuildable(group: list[Layout]) -> dict[str, tuple[str, ...]]:
    return {lay.name: check_layout(lay).problems for lay in group if not check_layout(lay).buildable}


def test_gnome_maps_that_cannot_be_built_on_the_mat(corpus):
    bad = _unbuildable(corpus["gnome"])
    # Taipei's 8 and Red Dragon's 1 tiles over three quarters of the layer
    # below rest there (their centre over the support): both can be built
    assert set(bad) == {"The Ziggurat", "Four Bridges", "Tic-Tac-Toe", "Overpass", "Confounding Cross"}
    assert bad["The Ziggurat"] == ("14 tiles not resting on tiles below, e.g. 8,6,2",)
    assert bad["Overpass"] == ("40 tiles not resting on tiles below, e.g. 2,6,1",
                               "footprint 24x18 half-units is larger than the mat's 36x16")
    assert bad["Four Bridges"] == ("footprint 26x18 half-units is larger than the mat's 36x16",)
    assert bad["Confounding Cross"] == ("footprint 22x18 half-units is larger than the mat's 36x16",)
    assert {m.name for m in corpus["gnome"] if floating_slots(m.slots)} == {"The Ziggurat", "Overpass"}


def test_a_tile_rests_when_its_centre_lies_over_its_support():
    # a tile covers four quarter cells; below it, tiles of layer 0 at x = 0
    # (quarters 0-1) and x = 2 (quarters 2-3), rows 0-1
    base = [Slot(0, 0, 0), Slot(2, 0, 0), Slot(0, 2, 0)]
    rests = lambda top: floating_slots(base + [top]) == []
    assert rests(Slot(1, 0, 1))          # over two tiles, all four quarters held
    assert rests(Slot(1, 1, 1))          # quarters (1,1), (2,1), (1,2) held, (2,2) over nothing: three
    assert not rests(Slot(3, 0, 1))      # half over x = 2, half over nothing: it tips
    assert not rests(Slot(3, 1, 1))      # one quarter held
    assert not rests(Slot(8, 0, 1))      # none
    # two diagonal quarters: the centre lies between them
    assert floating_slots([Slot(0, 0, 0), Slot(2, 2, 0), Slot(1, 1, 1)]) == []
    assert floating_slots([Slot(0, 0, 0), Slot(0, 2, 0), Slot(1, 1, 1)]) == [Slot(1, 1, 1)]


def test_kmahjongg_layouts_fit_the_mat_but_some_need_more_tiles(corpus):
    bad = _unbuildable(corpus["kmahjongg"])
    # every KMahjongg board fits 36 x 16 and rests on its tiles; 14 need more
    # than one 144-tile set
    assert all(len(p) == 1 and p[0].startswith("needs ") for p in bad.values())
    assert sorted(bad) == ["alien", "castle", "castle2", "cross", "girl", "hole", "mask", "maze",
                           "pyramid", "stax", "theatre", "tower", "triangle", "up&down"]
    assert bad["tower"] == ("needs 228 tiles; one set holds 144",)


def test_mah_boards_that_cannot_be_built(corpus):
    bad = _unbuildable(corpus["mah"])
    floating = sorted(lay.name for lay in corpus["mah"] if floating_slots(lay.slots))
    assert len(bad) == 42
    assert floating == ["Beatle", "Deceptive", "Interweaved", "Interweaved 2", "Superimposed",
                        "Teotihucan", "The Question Mark", "Vagues"]
    assert "Turtle" not in bad


@pytest.mark.parametrize("name", ["Overpass", "The Ziggurat"])
def test_unbuildable_maps_are_still_playable_by_the_engine(corpus, name):
    lay = next(m for m in corpus["gnome"] if m.name == name)
    rep = check_layout(lay)
    assert rep.playable and not rep.buildable
    assert any("not resting on tiles below" in p for p in rep.problems)
    # the engine clears it: always take the first free tile, check the rule as we go
    board = Board(lay)
    order = []
    while board.n_present:
        free = board.free_indices()
        assert free, f"{name}: no free tile with {board.n_present} left"
        board.remove(free[0])
        order.append(free[0])
        assert board.free_flags() == board.free_flags_full()
    assert len(order) == 144


def test_gnome_free_snapshot_tile_for_tile(corpus):
    """GNOME Mahjongg's own fixture (tests/test-game.vala): the free flag of every
    tile of Turtle and Taipei at the start, coordinates in half-tile units."""
    snap = json.loads((CORPUS / "gnome-mahjongg" / "free-snapshot.json").read_text(encoding="utf-8"))
    for name, tiles in snap["layouts"].items():
        lay = next(m for m in corpus["gnome"] if m.name == name)
        want = {Slot(t["x"], t["y"], t["z"]): t["free"] for t in tiles}
        assert set(want) == set(lay.slots), name
        flags = Board(lay).free_flags()
        got = {s: flags[i] for i, s in enumerate(lay.slots)}
        assert got == want, name
    assert sum(t["free"] for t in snap["layouts"]["Turtle"]) == 35
    assert sum(t["free"] for t in snap["layouts"]["Taipei"]) == 21


def test_load_layout_reads_the_corpus_files(corpus):
    base = _corpus()
    assert load_layout(str(base / "kmahjongg" / "default.layout")).slots == corpus["kmahjongg"][
        [lay.name for lay in corpus["kmahjongg"]].index("default")].slots
    assert load_layout(str(base / "gnome-mahjongg" / "mahjongg.map"), "taipei").name == "Taipei"
    assert len(load_layout(str(base / "mah" / "boards.json"), "Fly")) == 144
    with pytest.raises(BadInput, match=r"mahjongg\.map: holds 10 maps, choose one with --map-name: "
                                       r"'Turtle', 'The Ziggurat'"):
        load_layout(str(base / "gnome-mahjongg" / "mahjongg.map"))


def test_a_layout_without_slots_is_reported_not_a_crash(tmp_path, capsys):
    from companion.cli import main
    empty = Layout("none", (), "test")
    assert empty.bounds() == (0, 0, 0, 0)
    assert not check_layout(empty).playable
    path = tmp_path / "none.json"
    path.write_text(json.dumps({"name": "none", "slots": []}))
    assert main(["layouts", "show", str(path)]) == 0
    out = capsys.readouterr().out
    assert "0 tiles" in out and "NOT playable" in out and "layout has no tiles" in out


def test_a_kmahjongg_desktop_file_is_named_not_a_layout(tmp_path):
    # KMahjongg ships each layout with an INI ".desktop" description beside it
    desktop = tmp_path / "alien.desktop"
    desktop.write_text("[KMahjonggLayout]\nName=Alien\nFileName=alien.layout\n")
    with pytest.raises(BadInput, match=r"alien.desktop:1: not a layout file"):
        read_layout_file(desktop)


def test_check_on_mat_refuses_an_empty_layout_and_slots_off_the_grid():
    from companion import codex
    from companion.layouts import check_on_mat

    check_on_mat(codex.builtin("turtle"))                         # fits
    check_on_mat(Layout("corners", (Slot(0, 0, 0), Slot(34, 14, 0)), "test"))   # the grid's last cell
    with pytest.raises(BadInput, match="'empty' has no slots"):
        check_on_mat(Layout("empty", (), "test"))
    with pytest.raises(BadInput, match=r"slot \(100, 0, 0\) lies outside its 36 x 16 half-tile grid"):
        check_on_mat(Layout("far", (Slot(0, 0, 0), Slot(100, 0, 0)), "test"))
    with pytest.raises(BadInput, match=r"slot \(35, 0, 0\)"):      # its right half would hang off
        check_on_mat(Layout("edge", (Slot(35, 0, 0),), "test"))
    # layer 15 is a 320 mm stack, still read; a slot above it, or below the
    # mat, is a broken file (a camera 2 km up for z = 100 000 000)
    check_on_mat(Layout("tower", tuple(Slot(0, 0, z) for z in range(16)), "test"))
    with pytest.raises(BadInput, match=r"slot \(0, 0, 16\) lies on layer 16, and a camera reads layers 0-15"):
        check_on_mat(Layout("too-tall", (Slot(0, 0, 16),), "test"))
    with pytest.raises(BadInput, match=r"slot \(0, 0, -1\) lies on layer -1"):
        check_on_mat(Layout("sunk", (Slot(0, 0, -1),), "test"))


def test_check_on_mat_refuses_tiles_no_table_can_hold_and_keeps_those_it_can():
    from companion.layouts import check_on_mat

    # (2, 0) and (3, 1) on one layer share the quarter cell (3, 1): two tiles in one place
    with pytest.raises(BadInput, match=r"'clash' cannot stand on the mat: tiles \(2, 0, 0\) and \(3, 1, 0\) "
                                       r"overlap on layer 0"):
        check_on_mat(Layout("clash", (Slot(0, 0, 0), Slot(2, 0, 0), Slot(3, 1, 0)), "test"))
    with pytest.raises(BadInput, match=r"'twice' cannot stand on the mat: slot \(4, 4, 0\) is given twice"):
        check_on_mat(Layout("twice", (Slot(4, 4, 0), Slot(4, 4, 0)), "test"))
    # the same cells on two layers stack, an odd count stands, and so does a
    # tile with half its footprint over the one below (five of the corpus's
    # KMahjongg and GNOME layouts have tiles not resting on all four cells)
    check_on_mat(Layout("stack", (Slot(2, 0, 0), Slot(2, 0, 1), Slot(3, 1, 2)), "test"))
    check_on_mat(Layout("overhang", (Slot(0, 0, 0), Slot(1, 0, 1)), "test"))


@pytest.mark.parametrize("text", ["\uff15,0,0", "1_0,0,0", "1,2", "a,b,c", "1.5,0,0"])
def test_a_slot_is_three_ascii_integers(text):
    # int() alone would read a full-width 5 or "1_0" as numbers
    with pytest.raises(BadInput, match="expected x,y,z integers"):
        Slot.parse(text)
    assert Slot.parse(" -2, +4 ,1") == Slot(-2, 4, 1)


@pytest.mark.parametrize("given, kept", [
    ("Cupid's Citadel", "Cupid's Citadel"),
    ("evil\x1b[31mRED\x07\nnext", "evil [31mRED next"),        # ESC and BEL of an escape sequence, a newline
    ("  tab\there \u2028line  ", "tab here line"),              # a tab, a line separator, the ends
    ("abc\u202eFED", "abc FED"),                                 # a right-to-left override
    ("\U0001f469\u200d\U0001f52c lab", "\U0001f469\u200d\U0001f52c lab"),   # an emoji sequence keeps its joiner
    ("\x1b\x07", "layout"),                                      # nothing printable left
    ("\u200d\u200d", "layout"),                                  # joiners alone show nothing
    ("\udcff\udcfe", "\\xff\\xfe"),                              # a file name's bytes that are not UTF-8
    ("a" + "\u0301" * 500 + "b", "a\u0301\u0301b"),                 # accents stacked past two dropped
    ("Cre\u0300me", "Cre\u0300me"),                                # a decomposed accent kept
    ("x" * 81, "x" * 77 + "..."),                                 # over NAME_MAX (80)
    ("x" * 80, "x" * 80),
])
def test_a_layout_name_is_made_printable_on_one_line(given, kept):
    assert printable_name(given) == kept
    assert Layout(given, ((0, 0, 0),)).name == kept


def test_a_layout_file_name_with_an_escape_sequence_is_printed_without_it(tmp_path, capsys):
    # session 22's break-test: `layouts show` and `game start` wrote a file's
    # name raw, so ESC [31m turned the terminal red and a newline split the line
    from companion.cli import main
    path = tmp_path / "evil.json"
    path.write_text(json.dumps({"name": "evil\x1b[31mRED\x07\nnext" + "x" * 300,
                                "slots": [[0, 0, 0], [2, 0, 0], [4, 0, 0], [6, 0, 0]]}))
    assert main(["layouts", "show", str(path)]) == 0
    out = capsys.readouterr().out
    first = out.splitlines()[0]
    assert "\x1b" not in out and "\x07" not in out
    shown = ("evil [31mRED next" + "x" * 300)[:77] + "..."
    assert first.startswith(shown + ": 4 tiles")
    assert main(["layouts", "show", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["name"] == shown


def test_a_layout_named_by_a_file_name_that_is_not_utf8_serves_its_page(tmp_path):
    # session 24's break-test: a game on `./\xff\xfe.layout` stored the name as
    # lone surrogates, and the phone page answered 500 (UnicodeEncodeError)
    import os
    from companion.cli import main
    from companion.ledger import Ledger
    from companion.web import create_app
    src = tmp_path / os.fsdecode(b"\xff\xfe.json")
    src.write_text(json.dumps({"slots": [[0, 0, 0], [2, 0, 0], [4, 0, 0], [6, 0, 0]]}))
    led = tmp_path / "l.sqlite"
    assert main(["game", "start", "--ledger", str(led), "--variant", "love", "--mode", "sprint", "--players",
                 "Ada,Bo", "--layout", str(src), "--seed", "3", "--t", "0"]) == 0
    with Ledger(led) as ledger:
        assert ledger.events()[0].data["layout"] == "\\xff\\xfe"
    client = create_app({"LEDGER": str(led), "TESTING": True}).test_client()
    page = client.get("/")
    assert page.status_code == 200 and "\\xff\\xfe" in page.get_data(as_text=True)


def test_layout_json_slots_are_the_top_level_ones_whatever_else_the_file_holds():
    # extra fields are ignored (README): a "slots" list inside one of them,
    # written before the real one, once became the layout's slots (2 of 4)
    text = ('{"name": "row", "editor": {"slots": [[0, 0, 0], [2, 0, 0]]},\n'
            ' "slots": [[0, 0, 0], [4, 0, 0], [8, 0, 0], [12, 0, 0]]}')
    lay = parse_layout_json(text, "row.json")
    assert lay.slots == (Slot(0, 0, 0), Slot(4, 0, 0), Slot(8, 0, 0), Slot(12, 0, 0))
    # a bad slot of the real list is still named on its own line
    _fails(parse_layout_json, '{"editor": {"slots": [[1, 1, 1]]},\n"slots": [[0, 0, 0],\n[2, 0, -1]]}',
           "bad.json", 3, "slot 1 is [2, 0, -1]")
    # a member given twice counts once, its last value, as json reads it
    twice = '{"slots": [[0, 0, 0], [4, 0, 0]], "slots": [[0, 0, 0], [2, 0, 0], [4, 0, 0], [6, 0, 0]]}'
    assert [s.x for s in parse_layout_json(twice, "twice.json").slots] == [0, 2, 4, 6]


def test_a_layout_file_is_read_by_its_name_as_given_blanks_and_all(tmp_path, monkeypatch):
    # blanks around a built-in name do not matter, but a file's name is its
    # own: "row.json " (a trailing space) once read the file row.json
    monkeypatch.chdir(tmp_path)
    Path("row.json").write_text(json.dumps({"name": "three", "slots": [[0, 0, 0], [2, 0, 0], [4, 0, 0]]}))
    Path("row.json ").write_text(json.dumps({"name": "two", "slots": [[0, 0, 0], [2, 0, 0]]}))
    Path(" lead.json").write_text(json.dumps({"name": "lead", "slots": [[0, 0, 0], [4, 0, 0]]}))
    assert load_layout("row.json ").name == "two"
    assert load_layout(" lead.json").slots == (Slot(0, 0, 0), Slot(4, 0, 0))
    assert load_layout(" turtle ").name == "turtle"
    with pytest.raises(BadInput, match="not found"):
        load_layout("lead.json")


def test_a_board_named_in_over_80_characters_is_chosen_by_its_name(tmp_path):
    # a board's name is kept to 80 characters; --map-name with the board's
    # whole name once found "no board named ..." (a .map's map was found)
    long = ("The Very Long Board Name Of The Grand Tournament Final Round Number Twelve "
            "Edition Twenty Twenty Five")
    boards = tmp_path / "boards.json"
    boards.write_text(json.dumps([{"id": "1", "name": long, "map": [[0, [[0, [[0, 2]]]]]]},
                                  {"id": "2", "name": "Other", "map": [[0, [[0, [[0, 4]]]]]]}]))
    lay = load_layout(str(boards), long)
    assert lay.slots == (Slot(0, 0, 0), Slot(2, 0, 0))
    assert lay.name == long[:77] + "..."
    assert len(load_layout(str(boards), lay.name)) == 2        # the name as listed works too
    assert len(load_layout(str(boards), "other")) == 4
