"""The companion: a referee and score ledger for Mahjong-solitaire-family table games.

The engine modules (tiles, layouts, rules, claims, solver, variants, game) are
pure: no I/O, no clock, no unseeded randomness.  I/O lives in cli.py, ledger.py,
the web package and the vision package.
"""

__version__ = "0.1.0"
