"""companion print-tiles: the tile art of a variant as files.

    companion print-tiles --variant V --out DIR [--px-per-mm P] [--dpi D] [--paper a4|letter] [--no-sheets]

Writes one PNG per distinct face and ``tiles.json`` into DIR (CONTRACT.md,
"Files"), plus printable sheets (``DIR/sheets/<V>-<paper>-<k>.png`` and one
PDF; A4, or US Letter with ``--paper letter``) holding all 144 tiles with crop
marks, so that a group can print, cut and stick them on blank tiles.  Prints
one JSON summary line on stdout.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from companion.cli import word_arg
from companion.errors import BadInput
from companion.tiles import VARIANTS, tileset


def register(sub) -> None:
    """Add the ``print-tiles`` sub-command to the CLI's sub-parser action."""
    p = sub.add_parser(
        "print-tiles",
        help="write a variant's tile faces (PNGs, tiles.json) and printable A4 or Letter sheets",
        description=__doc__.splitlines()[0],
    )
    p.add_argument("--variant", required=True, metavar="V", type=word_arg, help=f"one of {', '.join(VARIANTS)}")
    p.add_argument("--out", required=True, metavar="DIR", help="output folder (created if missing)")
    p.add_argument("--px-per-mm", type=float, default=10.0, metavar="P",
                   help="resolution of the face PNGs, 10..100 px/mm (default 10)")
    p.add_argument("--dpi", type=int, default=300, metavar="D", help="resolution of the sheets (default 300)")
    p.add_argument("--paper", default="a4", metavar="PAPER", type=word_arg,
                   help="paper of the sheets: a4 (6 x 6 tiles a page, 4 pages) or letter (US Letter, 6 x 5, 5 pages)")
    p.add_argument("--no-sheets", action="store_true", help="skip the printable sheets")
    p.set_defaults(func=_print_tiles)


def _print_tiles(args: argparse.Namespace) -> int:
    from companion.cli import print_json
    from vision.art import other_sets_files, write_tile_set

    tileset(args.variant)  # BadInput for an unknown variant, before touching the disk
    from vision.art import PAPERS_MM
    if args.paper not in PAPERS_MM:
        raise BadInput(f"unknown paper {args.paper!r}: give a4 or letter")
    if not args.out.strip():           # (Path("") would be the current folder)
        raise BadInput("--out needs a folder name, e.g. --out tiles/")
    args.out = Path(args.out)
    if not 72 <= args.dpi <= 600:
        raise BadInput(f"--dpi must lie in 72..600, got {args.dpi}")
    if not 10 <= args.px_per_mm <= 100:      # (the library's own range starts at 0.5: the line named that)
        raise BadInput(f"--px-per-mm must lie in 10..100 (tile images at 10 px/mm or more), got {args.px_per_mm:.12g}")
    doc, sheets = write_tile_set(args.variant, args.out, args.px_per_mm, sheets=not args.no_sheets, dpi=args.dpi,
                                 paper=args.paper)
    others = other_sets_files(args.variant, args.out)
    if others:
        import sys
        from companion.wording import count
        print(f"companion print-tiles: note: {args.out} also holds {count(others, 'file')} of another tile set "
              "(faces or sheets of an earlier print-tiles), which its tiles.json does not list: print each set "
              "into a folder of its own, or remove them", file=sys.stderr)
    print_json({
        "variant": args.variant,
        "out": str(args.out),
        "tiles_json": str(Path(args.out) / "tiles.json"),
        "faces": len(doc["tiles"]),
        "tiles": sum(t["copies"] for t in doc["tiles"]),
        "px_per_mm": float(args.px_per_mm),
        "sheets": sheets["pages"],
        "pdf": sheets["pdf"],
    })
    return 0
