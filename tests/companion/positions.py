"""A test helper shared by the deal and solver tests: a real mid-game position."""

from __future__ import annotations

from companion.deals import Deal, random_deal
from companion.layouts import Layout
from companion.solver import solve


def mid_game(variant: str, layout: Layout, seed: int, pairs: int) -> tuple[Deal, list[bool]]:
    """The random deal ``seed`` of ``variant`` on ``layout`` (solvable: asserted)
    after the first ``pairs`` pairs of the solver's winning line are taken.

    Returns:
        ``(deal, present)``: the deal and one flag per slot.
    """
    d = random_deal(variant, layout, seed)
    res = solve(d)
    assert res.solvable, f"deal {seed} should be solvable"
    present = [True] * len(layout)
    for a, c in res.moves[:pairs]:
        present[a] = present[c] = False
    return d, present
