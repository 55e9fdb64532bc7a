"""The layered board from one photograph.

:func:`recognize` chains the stages (pose -> projected slot faces -> patches ->
classifier -> :func:`reconstruct`); :func:`reconstruct` is the pure decision
logic over classifier probabilities, testable with hand-made inputs.

The photo is a snapshot of a game on a known layout in which tiles have only
ever been removed (../shared/CONTRACT.md, ``recognize``), so the set of present
tiles is closed downwards: a present tile implies every tile it covers, since a
covered tile cannot have been removed (Love/Candy/Mindful Mahjong 2.1 Law 1,
Word Mahjong 2.1 Rule 1: only free tiles leave the board).  Layers are decided
top-down:

1. a slot covered by a tile already found present is present, face null (its
   face cannot be seen), with its cover's confidence;
2. otherwise its patch (sampled at the slot's own layer height) decides:
   a face -> present with that face; "none" -> empty; "occluded" (a hand, a
   taller stack or the frame edge hides the face) -> present, face null, low
   confidence (never a confident wrong answer), unless a lower slot it would
   cover turns out to show its own face (then it is empty: a tile there would
   hide that face);
3. a face seen at layer ``z`` could also be the face of the tile right below
   seen at the wrong height (the tile at ``z`` removed); when the slot below
   looks more like an aligned face than this one does, this slot is empty;
4. an empty slot between two present tiles of its layer was pinched when it
   would have left, so it cannot be empty (the free rule, rule books 2.1 Law 1):
   when the neighbours are the surer reading, the slot is present; and
   over the whole board (``only_free_left``, as :func:`recognize` reads a
   photo), the empty slots must be ones a game could have emptied one free
   tile at a time (:func:`companion.rules.unreachable`): otherwise the
   cheapest unsure decisions that make it so turn (:func:`_mend_reachability`);
5. in the games whose tiles leave in pairs (not Word Mahjong), as many tiles
   as the layout has slots, less an even number, stand: an odd count turns
   the least sure decision that can legally turn (:func:`_mend_parity`);
6. every face is one of the variant's faces, and no face is given more often
   than its copies (tile set, ../shared/seeds rule books 1.2 "Component
   Inventory"): the surplus, least confident first, takes its next best face.

With the presence model (:mod:`vision.presence`, ``models/presence.onnx``),
rules 2-3 change for stacked and partly hidden slots: their presence is the
model's log-odds weighed with the classifier's two windows
(``ReconstructSettings.presence_weights``); a present slot shows its face when
the classifier reads one, else it is unseen.

A second pass adds two priors to the log-odds of the slots the presence
model judges: how far the game has gone, read from the stacks the photo shows
clearly, and each slot's chance to be full still at that point of a game on
this layout (:func:`removal_odds`: upper layers and row ends leave first).

Two comparisons with the print art at the photo's own resolution
(:mod:`vision.artcheck`) sharpen what the 1 px/mm classifier windows read: a
raised slot the presence model is unsure of gets the evidence of its face's
size (a face one layer lower is 2-3 % smaller), and a face read with little
to spare is compared with its likeliest faces' art before faces are given.

Besides, a slot whose face the tiles already found on higher layers hide from
the camera (a steep view past a taller stack, :func:`hidden_fraction`) is not
judged empty on its window: it is unseen (present, face null, low confidence).
When the pose stage had to assume the focal length (a nearly overhead view
without ``--camera``), :func:`recognize` fits it to where the faces on top
of their columns lie, found by their print art (:func:`focal_from_art`), or,
where too few are found, picks it by how well the raised tiles' faces line
up with their windows (:func:`focal_from_faces`).

Free flags come from :class:`companion.rules.Board` (the only home of the
rule).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass, replace

import numpy as np

from companion.layouts import Layout, Slot
from companion.rules import Board, Geometry
from companion.tiles import tileset

UNSEEN_CONFIDENCE = 0.5  # confidence reported for a slot whose face is hidden
#: a reading whose confidence is under this is "unsure": the overlay marks it
#: for a look by eye (:func:`unsure_slots`).  On development photos 1000-1199
#: (199 read, 28 656 slots, 359 wrong readings) 0.7 marks 5.4 % of the slots
#: (7.7 a photo) and 57 % of the wrong readings; 106 photos are entirely
#: right and 156 are right or have every wrong reading marked (0.6: 3.8 % of
#: the slots, 147 photos; 0.8: 7.9 %, 162; 0.9: 13.3 %, 169).
UNSURE_BELOW = 0.7
#: a camera file whose focal length differs from the markers' own
#: (:func:`vision.pose.markers_focal_px`) by more than this share is advised
#: on: the markers of a planar mat fit a wrong focal length well (a
#: newcomer's file 25 % short fitted with 0.88 px, and 14 readings went
#: wrong outside the marked slots instead of 3)
CAMERA_FILE_FOCAL_MISFIT = 0.12


@dataclass(frozen=True)
class ReconstructSettings:
    """Numbers of the decision logic.

    Attributes:
        occluded_above: a slot whose "occluded" probability exceeds this is
            reported present with an unknown face.
        height_margin: log-odds margin by which the slot right below must look
            more like an aligned face than this slot, for this slot's face to
            be taken as the lower tile's (rule 3).  It is the prior log-odds
            of "the upper tile is there" against "the upper tile is gone and
            the lower one shows": about 0.72 : 0.28 over stacked pairs in games
            of the built-in layouts with 0-60 % of the tiles removed as random
            free pairs (log 2.6 = 0.94), so a tie goes to the upper tile.
        in_view_margin_px: a face whose projected quad comes closer than this to
            the image border (or leaves it) is treated as occluded.
        hidden_above: a slot whose face is hidden by more than this fraction
            by tiles on higher layers (tilted view, :func:`hidden_fraction`) ...
        hidden_face_min: ... and whose window does not show a face with at
            least this probability is unseen (present, face null), not empty.
        hidden_samples: grid points per side of a face for
            :func:`hidden_fraction`.
        partly_hidden_above, partly_hidden_conf: a face read on a tile hidden
            by more than ``partly_hidden_above`` with a confidence below
            ``partly_hidden_conf`` is not reported (face null, "occluded"): a
            partly hidden face is unknown rather than a guess (issue 4: "an
            occluded slot gives face null with low confidence rather than a
            confident wrong answer").  On development photos 1000-1159 this
            withdraws 22 wrong faces on tiles less than 60 % visible and
            3 faces of tiles more visible (photos entirely right: 60 -> 63 of
            160).  Session 12 (the classifier trained with occluder bands,
            which reads more half-hidden faces and is surer of them): 0.3 ->
            0.5, fitted on the faces of development photos 1000-1199 and
            1400-1599 logged with their hidden share (face errors 489 ->
            476, photos with one 125 -> 114; 0.4-0.55 within 4; with the
            session-11 classifier the same change was neutral, 523 -> 525).
            Checked again in session 13 with the shipped (8-epoch) model,
            whole photos (``bench/tune_reconstruct.py``, 1000-1199 and
            1400-1559: right / faces missed on visible tiles / wrong faces):
            0.5 231 / 213 / 189; 0.4 234 / 205 / 195; 0.3 231 / 201 / 201;
            0.6 230 / 223 / 188 (wrong slots 238 in all four).  0.5 stays:
            0.4's three photos are within noise and it reports more wrong
            faces.
        hidden_face_max: a face hidden by more than this share is never
            reported, however sure its window reads (face null, "occluded"):
            what the window shows is then mostly the tile in front (in a
            steep view, the taller neighbour's face).  Both this rule and the
            one above take the hidden share again from the final decisions
            (a slot above first taken as "occluded" may have been found empty
            since).  On development photos 1000-1159 and 1200-1359 (``bench/
            tune_reconstruct.py``), without the rule (limit 1.01): 140 photos
            entirely right, 383 faces missed on visible tiles, 410 wrong
            faces reported; with 0.8: 143 / 389 / 386.  Checked on
            1400-1559: 73 / 232 / 225 -> 73 / 233 / 218.
        hidden_present_above: a slot the presence model judges whose face
            the tiles found standing on higher layers hide by more than this
            share stands, unseen (face null, confidence
            :data:`UNSEEN_CONFIDENCE`): the photo cannot tell, and most such
            slots hold a tile (on development photos 1000-1159 and
            1200-1359, 92 of the 120 slots hidden over 0.9; the model and
            priors had 46 of them wrong).  ``bench/tune_reconstruct.py``:
            off (1.01): 151 photos entirely right, 396 wrong slots; 0.9: 152 /
            384; 0.95: 152 / 385; 0.8: 153 / 383.  Checked on 1400-1559: off
            77 / 231; 0.9: 78 / 223; 0.8: 78 / 234.
        presence_margin: a slot the presence model judges is empty when its
            log-odds fall below this.
        presence_unsure, presence_none_above: a slot the presence model finds
            present by less than ``presence_unsure`` log-odds is empty all the
            same when the classifier reads "none" above ``presence_none_above``
            in its window and in the windows of every slot it covers (no face
            anywhere in the stack: an empty mat, not a hidden tile).
        presence_face_min: a slot the presence model finds present shows its
            face when the face probabilities sum to at least this (and beat
            "occluded"), and its face is not mostly hidden by higher tiles
            (``hidden_above``, unless the face reads at ``hidden_face_min``);
            otherwise it is unseen (present, face null).
        presence_weights: ``(a, b, c, d)``: the presence log-odds used are
            ``a q + b lo - c lo_below + d``, with ``q`` the presence model's
            output, ``lo`` the classifier's log-odds face : none at the slot
            and ``lo_below`` the best of the slots it covers (both clipped to
            +-8; -8 where it covers none).  Fitted by logistic regression
            on development photos (``bench/fit_presence.py``).
        presence_prior_weight, presence_prior_sure: the photo's prior.  After
            a first pass, the share of the slots the presence model judged
            with more than ``presence_prior_sure`` log-odds either way that
            are present (:func:`_confident_share`) says how far the game has
            gone; a second pass adds ``presence_prior_weight x logit(share)``
            to every judged slot's log-odds, so a stack the photo shows poorly
            (nearly overhead, far away) leans the way the clear ones went.
            0.847 when fitted alone with ``presence_weights``
            (``bench/fit_presence.py``); 0.5 beside the layout's prior (below).
        presence_prior_cap: ``|logit(share)|`` is clipped to this, so the
            prior never moves a slot by more than ``presence_prior_weight x
            presence_prior_cap`` log-odds (1.25): a reading surer than
            that (say a top tile just taken, early in a game) stands whatever
            the rest of the photo says.  Identical results on the development
            photos (their shares stay inside).
        layout_prior_weight, layout_prior_games: the layout's prior.  After
            the first pass, the number of slots found empty says how many
            tiles have left; :func:`removal_odds` (``layout_prior_games``
            simulated games of random free pairs on the layout) gives each
            slot's chance to be full still at that point (upper layers and
            row ends go first: they are free first), and the second pass adds
            ``layout_prior_weight x logit(chance)`` (chance clipped to
            0.02-0.98) to every judged slot's log-odds.  The two priors' weights
            were chosen together on development photos 1000-1159 and
            1200-1359 (``python bench/tune_reconstruct.py``): the share's
            prior alone (0.847, 0) gives 127 photos of 320 entirely right, 492
            wrong slots and 475 faces missed on visible tiles; (0.5, 0.5)
            gives 136, 416 and 429 (0.3-0.8 all within 2 photos and 3 % of
            the errors); on photos 1400-1559, kept apart while choosing:
            64, 297, 274 against 68, 268, 264.  Splitting the odds by how many
            of the slot's sides still hold a tile was tried and dropped
            (better on the first ranges, worse on 1400-1559).  0 leaves it
            out.
        focal_search: when the pose stage had to assume the focal length (a
            nearly overhead view without ``--camera``, see
            :func:`focal_from_faces`), pick it by how well the tiles' faces line
            up with their slots instead.
        focal_ratios: candidate focal lengths, as ratios of the assumed one
            (0.64-1.18 spans horizontal fields of view of about 47-80 degrees
            at 16:9).
        focal_slots: at most this many raised slots score a candidate: those
            with the largest (layer + 1) x distance from the image centre.
        focal_art, focal_art_range, focal_art_steps, focal_art_faces,
            focal_art_min_faces, focal_art_face_min, focal_art_min_score,
            focal_art_huber_px, focal_art_top_prior, focal_art_scatter_px2:
            the focal length of a nearly overhead view taken from where the
            faces actually lie (:func:`focal_from_art`): up to
            ``focal_art_faces`` faces on top of their columns, read with at
            least ``focal_art_face_min`` face probability (best face at
            least 0.9 of that), located by their print art (correlation at
            least ``focal_art_min_score``); ``focal_art_steps`` focal lengths
            spaced evenly in log over ``focal_art_range`` (ratios of the
            assumed one), each scored by the likelihood of the faces'
            distances from where that camera puts them: Huber
            (``focal_art_huber_px``) over ``focal_art_scatter_px2``, a raised
            face at its own height with the share of tops still standing,
            at each lower height of its column with the rest; that share is
            the likeliest of 10 within ``focal_art_top_prior``.  With fewer
            than ``focal_art_min_faces`` faces located (another tile set read
            through a profile, a blurred photo) the search of
            ``focal_ratios`` decides.  Chosen on photos whose focal length
            had to be assumed (wrong slots plus wrong faces, against 669 by
            the older search on 162 photos of early and middle games: the
            70 development photos of 1000-1799, 68 of 17 built-in layouts,
            24 of KMahjongg layouts; and 247 on 40 late-game photos): each
            face at whichever height fits best (the first form) 175 wrong
            slots on the development photos alone against 276 but short
            focal lengths on tall layouts, a break-test found; a fixed share
            0.6 / 0.7 / 0.8 / 0.9 / 0.95: 556 / 496 / 477 / 457 / 471, late
            games 189 at 0.9; the share fitted within 0.5-0.95: 562 and
            114; within 0.7-0.95: 481 and 148 (the default); scatter 1 or
            4 px^2 instead of 2: 546, 475 (at 0.7 and 0.9).  At most 40, 60
            or 120 faces: 481, 482 (the default, about 20 ms faster than
            120), 481; 30 focal lengths instead of 60: 484.
        focal_art_lengthen: the fitted focal length times this.  The
            presence decisions suffer more from a focal length too short
            (raised windows pushed outward past their faces) than too long:
            on the same photos 1.0 / 1.015 / 1.03 / 1.045 / 1.06 leave 482 /
            445 / 425 / 443 / 449, late games 148 / - / 156 / - / 149.  On
            photo 9 of a break-test (turtle, 3.1 % short) 3 slots are wrong
            that the true focal length reads right.
        focal_art_deal_prior: ``focal_art_top_prior`` for a video's first
            frame when it shows the whole deal (the referee's default:
            every top stands).  Bench game 17803 (Word on the turtle, 2
            degrees from overhead, 945 px true): 879 px with the usual
            prior, 949 px with this one; on 7 other overhead games it moved
            the focal length by under 1 %.
        art_parallax_weight, art_parallax_unsure, art_parallax_sigma_mm,
            art_parallax_clip: a raised slot whose presence log-odds lie
            within ``art_parallax_unsure`` of even and whose window reads a
            face gets ``art_parallax_weight`` times
            :func:`vision.artcheck.parallax_evidence` (clipped to
            ``art_parallax_clip``) added: where the face's art lies in the
            window, against where the tile below's face would lie (tiles off
            their slots by ``art_parallax_sigma_mm`` per axis).  On
            development photos 1000-1359 (photos entirely right / wrong
            slots / faces missed / wrong faces): without 160 / 318 / 302 /
            288; weight 0.5: 161 / 314 / 301 / 290; 1.0: 159 / 325 / 311 /
            300; 0.5 within 6 of even: 161 / 317 / 303 / 291; 0.5 with 2.5
            mm: 161 / 312 / 299 / 288 (chosen).  On 1400-1559: 90 / 136 /
            132 / 125 without, 91 / 134 / 130 / 123 with; on the
            independent renderer (tiles squarely on their slots) 82 against
            84 of 160 photos entirely right.
        placement_faces, placement_min_faces, placement_face_min,
            placement_min_score, placement_gain, placement_floor_mm,
            placement_below_tilt_deg, placement_min_corr: the spread of the
            parallax evidence taken from the photo itself (session 16).
            ``art_parallax_sigma_mm`` is what hand-placed tiles need (up to
            3 mm off their slots); where the tiles lie squarely, a face's
            position tells its height far better.  In a view tilted less
            than ``placement_below_tilt_deg`` (where the walls round a slot
            barely show and the presence model is least sure), when raised
            slots are judged, :func:`placement_spread` locates up to
            ``placement_faces`` sure faces on layer 0 (at least
            ``placement_min_faces``, else nothing changes); the evidence's
            spread becomes ``placement_gain`` times theirs, at least
            ``placement_floor_mm`` and at most ``art_parallax_sigma_mm``.
            With a spread ``s`` under the default, the evidence is
            ``(art_parallax_sigma_mm / s)^2`` times stronger, and so are the
            band of log-odds it is asked within and its clip; its art must
            then correlate at least ``placement_min_corr``.  On the bench's
            renderer (tiles up to 3 mm off) the spread found is 1.3-2.1 mm,
            so the default stands and development photos 1000-1199 and
            1400-1559 read the same (126 / 131 / 127 / 107 and 105 / 107 /
            86 / 82 against 105 / 108 / 87 / 83).  On the independent
            renderer (``bench/bench_altrender.py``: tiles squarely on their
            slots, spread found 0.02-0.25 mm), photos 0-159 (chosen on;
            photos entirely right, and those tilted under 12 degrees): 93
            -> 120 and 14 -> 40 of 51 (floor 0.5 mm: 110 and 30; 0.3: 117
            and 37; 0.12: 124 and 44); photos 160-479 (kept apart): 215 ->
            249 and 45 -> 76 of 102, presence 99.10 -> 99.59 %, faces 98.33
            -> 99.44 % (floor 0.5: 235 and 62; 0.12: 252 and 79).  No photo
            read right before is read wrong.  Without the tilt limit or
            ``placement_min_corr`` (floor 0.5), 104 and 109 on 0-159 against
            110: in steep views the art found in a slot's window is as often
            a neighbour's face, and a sharp spread turned those into sure
            readings.
        art_scale, art_scale_faces, art_scale_probe, art_scale_tolerance,
            art_scale_min_score: the size of this photo's faces against
            their print art (session 17, :func:`photo_art_fit`), by which the
            height evidence and the parallax evidence cut their windows.  The
            height evidence tells a top face from the one 20 mm below by 2-3 %
            of size, so faces printed a few per cent small (a printer's "fit
            to page") read as lower ones everywhere.  ``art_scale_probe`` sure
            faces on layer 0 whose art correlates at least
            ``art_scale_min_score`` are sized
            (:func:`vision.artcheck.face_scale`); when their median lies
            ``art_scale_tolerance`` or more from 1, up to ``art_scale_faces``
            are, and their median is the scale; else it is 1.  False leaves
            it out.  The independent renderer with its faces printed smaller
            (``bench/bench_altrender.py --face-scale``; photos entirely right,
            0-159 chosen on / 160-479 kept apart): at 95 %, 91 -> 120 and 205
            -> 248; at 97 %, 108 -> 123 and 234 -> 255; at 100 %, 120 -> 124
            and 249 -> 249.  Development photos 1000-1179 and 1400-1579 (right /
            wrong slots / faces missed / wrong faces): off 232 / 242 / 237 /
            201; sizing 8 faces always 232 / 237 / 232 / 200 (about 6 ms a
            photo with stacks); 5 faces 231 / 240 / 234 / 202; the probe of 4
            within 1.5 % 232 / 243 / 237 / 201, about 3 ms.  A minimum
            correlation of 0.5 instead of 0.6 read a blurred bench photo's
            scale 1.03 from four weak faces and turned it wrong.
        art_size_weight, art_size_unsure, art_size_max, art_size_below_px,
            art_size_min_score: session 18: a raised slot whose window reads
            a face and whose presence log-odds (the height evidence added)
            still lie within ``art_size_unsure`` of even gets
            ``art_size_weight`` times :func:`vision.artcheck.size_evidence`
            added: the log-likelihood ratio of the face's size, fitted over a
            range of ratios at the photo's scale, between that of a face at
            the slot's height and that of the face one layer lower; at most
            ``art_size_max`` slots each time a layer's presence is asked (a
            layer and pass of :func:`reconstruct`, not a photo: up to 27
            slots a photo on the development photos below, 19 of 360 over
            12; a budget a photo, as the height evidence's, read those 19 no
            better: 71 / 81 / 78 wrong slots / faces missed / wrong faces
            against 70 / 80 / 77), the least sure first, only where
            the two heights' windows lie less than ``art_size_below_px``
            apart (px), and no evidence from an art correlating under
            ``art_size_min_score``.  The same cue as the height evidence,
            read more finely.  Whole photos, development 1000-1179 and
            1400-1579 (right / wrong slots / faces missed / wrong faces): off
            232 / 243 / 237 / 201; weight 0.3: 232 / 236 / 230 / 194; 0.5: 233
            / 231 / 225 / 190; 0.8: 232 / 229 / 223 / 187.  Checked on
            1200-1349 and 1600-1749: off 181 / 241 / 211 / 188; 0.5: 185 / 226
            / 196 / 174; 0.8: 185 / 227 / 197 / 175.  A first, linear form
            (the place between the heights, less one half, weight 1) gave 231
            / 232 / 226 / 190 and 180 / 234 / 201 / 177: it weighed a blurred
            face's size as much as a sharp one's (a sharp face's size spreads
            half as far), and a fit at the end of the ratios tried as a
            measurement.  Minimum correlations of 0.7 (linear form: 232 / 239)
            and 0.8 (233 / 241) gave up more than they saved; the size in
            place of the height evidence (linear, weights 2-4): 222-223 /
            260-264.  About 2 ms a photo with stacks (two or three slots
            sized).
        parity_max_cost: in a game whose tiles leave the board in pairs
            (``reconstruct(removes_in_pairs=True)``), a board read with a count
            of tiles of the wrong parity has one decision wrong: the least sure
            one that can change legally changes, when its log-odds are below
            this (a surer reading stands: say a photo taken between a
            player's two picks).  On development photos 1000-1159,
            1200-1359 and 1400-1559 (480, a quarter of them Word Mahjong),
            with the layout's prior: without the rule 196 photos entirely
            right, 677 wrong slots, 699 faces missed on visible tiles; with
            it, limit 0.5: 204 / 667 / 687, 0.75: 204 / 666 / 686, 1.0: 204 /
            671 / 688, 1.5: 204 / 684 / 693, 2.5: 206 / 687 / 694.
        reach_max_cost, reach_candidates, reach_max_changes: a photo of a
            game played by the rules (``reconstruct(only_free_left=True)``)
            shows a board that the free rule can reach from the full layout:
            the empty slots can be cleared one by one, each free when it goes
            (:func:`clearable`; rule books 2.1 Law 1 / Rule 1).  Where the
            decisions give a board it cannot reach, the cheapest set of at
            most ``reach_max_changes`` changed decisions among the
            ``reach_candidates`` cheapest candidates (the empty slots that
            cannot have left, the standing tiles beside them that pinch
            them, the empty slots under them) that reaches it is made, when
            its summed log-odds stay under ``reach_max_cost``
            (:func:`_mend_reachability`).  Session 28, development photos
            1000-1179 and 1400-1579 (``bench/tune_reconstruct.py``; right /
            wrong slots / faces missed on visible tiles / wrong faces): off
            235 / 223 / 206 / 181; 2.5: 235 / 224 / 205 / 176; 4: 235 / 223
            / 204 / 175; 6: 235 / 223 / 204 / 174; on 1200-1349 and
            1600-1749: off 193 / 221 / 190 / 171, 4 (and 4 with at most 2
            changes): 193 / 221 / 192 / 171.  Rare (about one photo in 30
            reads an unreachable board, most of them with other mistakes
            too) and within noise on whole photos; kept for the rule's sake
            and the fewer wrong faces.
        art_check_below, art_check_weight, art_check_candidates: a slot whose
            best face holds less than ``art_check_below`` of its faces'
            probability is looked at again at the photo's resolution against
            the print art of its ``art_check_candidates`` likeliest faces
            (:func:`vision.artcheck.check_faces`; the part of the face hidden
            by standing tiles in front left out), each candidate's
            probability reweighed by ``exp(art_check_weight x correlation)``.
            0 weight leaves it out.  Chosen on development photos 1000-1159
            and 1200-1359 (``bench/tune_reconstruct.py``; photos entirely
            right / faces missed on visible tiles / wrong faces reported):
            without: 133 / 404 / 429; weight 10, 3 candidates, whole
            windows: 141 / 383 / 409; with the hidden part left out (and
            ``hidden_face_max``): 149 / 377 / 366; 4 candidates: 151 / 374 /
            364 (5: 151 / 375 / 365; weight 12: 152 / 373 / 363; weight 15,
            3 candidates: 151 / 376 / 367; below 0.75: 151 / 372 / 362),
            all with a per-pixel mask of the hidden part; comparing the
            largest band of the face in full sight instead, as now (a
            quarter of the time): 151 / 374 / 367.  Checked on 1400-1559:
            without 69 / 245 / 239; mask 79 / 228 / 205; band 77 / 231 / 209.
        art_height_weight, art_height_unsure: a raised slot whose presence
            model's log-odds lie within ``art_height_unsure`` of even, and
            whose window reads a face, gets ``art_height_weight`` times
            :func:`vision.artcheck.height_evidence` added to them (before
            ``presence_weights``): how much better the face's print art fits
            at the slot's height than one layer lower, at the photo's own
            resolution.  This is the height cue a nearly overhead photo still
            holds: the face 20 mm lower is 2-3 % smaller.  On development
            photos 1000-1159 and 1200-1359 (photos entirely right / wrong
            slots / faces missed on visible tiles / wrong faces): without
            152 / 384 / 373 / 366; weight 40: 156 / 369 / 348 / 338; 60:
            158 / 357 / 334 / 325; 80: 160 / 353 / 324 / 313; 100: 161 / 356 /
            325 / 314; 130: 160 / 358 / 327 / 315.  Checked on 1400-1559:
            without 78 / 223 / 230 / 208; 100: 81 / 190 / 190 / 169.  Within
            5 log-odds instead of 3 (weight 60, an earlier form of the
            evidence): 160 / 340 on development photos, 82 / 212 on
            1400-1559 (3: 160 / 352, 81 / 198).  0 weight leaves it out.
        art_min_score: neither comparison with the art counts where no
            correlation reaches this (a blurred, shadowed or grey face: the
            correlations are noise; a break-test found a right face turned
            wrong on correlations of 0.17 and 0.28).
        art_check_max, art_height_max: at most this many faces are looked at
            again, the least sure first, and at most this many raised slots
            get the height evidence, the least sure first, per photo: a
            blurred or grey photo can have 50 unsure faces, and each look
            costs about 1-2 ms.  With 4 candidates, on development photos
            1000-1159 and 1200-1359
            (photos entirely right / wrong slots / faces missed / wrong
            faces): no limits, no minimum: 161 / 354 / 325 / 314; limits 6
            and 8: 160 / 357 / 331 / 320; minimum 0.3: 160 / 343 / 327 /
            318; 0.45: 160 / 345 / 333 / 326; minimum 0.3 with limits 8 and
            12: 160 / 336 / 318 / 310; with 12 and 20: 161 / 336 / 318 / 310;
            the same with 3 candidates (the default, about 25 % faster):
            160 / 336 / 321 / 311.  On 1400-1559:
            81 / 190 / 190 / 169; 81 / 205 / 209 / 187; 82 / 200 / 208 /
            186; 82 / 200 / 206 / 185; 81 / 194 / 199 / 177; 82 / 187 / 192 /
            170 (3 candidates: the same).  Session 13, with the shipped
            models, on 1000-1199 and 1400-1559 (right / wrong slots): the
            defaults 231 / 238; ``art_height_max`` 40: 231 / 236; 40 within 4
            log-odds: 231 / 238; 40 within 5: 232 / 236; 60 within 5: 232 /
            236; within 5 at 20: 230 / 246; ``art_height_weight`` 150: 229 /
            247; ``art_parallax_weight`` 1.0: 230 / 242; ``art_check_max``
            24: 231 / 238.  All within noise: the defaults stay.  Session 18,
            with the size evidence (``art_size_weight``), on 1000-1179 and
            1400-1579 (right / wrong slots / faces missed / wrong faces):
            within 3 log-odds 233 / 231 / 225 / 190, 4: 234 / 223 / 218 / 185,
            5: 234 / 221 / 218 / 182; weight 70 and 130 within 3: 233 / 237 and
            232 / 233; on 1200-1349 and 1600-1749: 185 / 226 / 196 / 174, 188
            / 222 / 194 / 171, 187 / 217 / 193 / 170; the independent
            renderer's photos 0-159: 126, 125, -; in alternating runs 4 costs
            0.4 ms a photo and 5 costs 1.7 ms: within 4.
        blank_read_above, blank_read_below, blank_read_max,
        blank_shown_max_conf: the second read of partly hidden faces
            (session 21; :func:`reconstruct`'s ``blank_read``, the classifier
            of blanked windows ``models/tiles-blank.onnx``): a standing top
            tile whose face the standing tiles of higher layers hide by more
            than ``blank_read_above`` (and at most ``hidden_face_max``) is
            read again with that part blanked, unless the plain read shows
            its face with at least ``blank_read_below`` of the face
            probability, at most ``blank_read_max`` a photo, the most hidden
            first.  On development photos 1000-1179 and 1400-1579
            (``bench/tune_reconstruct.py``; right / wrong slots / faces
            missed on visible tiles / wrong faces), without the second read
            233 / 219 / 214 / 183; with it 235 / 219 / 206 / 180; above 0.2
            instead of 0.05: 235 / 219 / 208 / 182; ``blank_read_below`` 0.9:
            234 / 219 / 207 / 181 (twice the windows read); 0 (only the
            unseen faces): 234 / 219 / 209 / 183.  On 1200-1349 and 1600-1749
            (not chosen on): 189 / 226 / 195 / 172 without, 193 / 226 / 192
            / 175 with.  In a first form the blanked read always replaced the plain
            one: of the faces it changed on the first 360 photos, 118 went
            from unseen to right (109 of them on tiles under 60 % in sight,
            which the figures above do not count), 5 from wrong to right, 19
            from right to unseen and 15 from unseen to wrong, most of those
            read with a confidence of 0.02-0.36 in a photo of faces 20 px
            wide (236 / 219 / 207 / 192): hence the rules that the blanked
            read must be surer of its best face than the plain one to replace
            it, and that a face it alone shows must reach
            ``partly_hidden_conf``.  A face read from the blanked read is
            reported at most ``blank_shown_max_conf`` sure, under
            :data:`UNSURE_BELOW`, so the overlay marks it for a look: a
            break-test found a Word tile 44 % in sight read F (truly P) at
            0.80, and on the bench an O 60 % in sight was read U at 0.83.
            The classifier's face : none log-odds of the blanked read given to
            the presence decisions of partly hidden slots instead of the plain
            read's: 235 / 225 / 207 / 194 (not adopted).
    """

    occluded_above: float = 0.5
    height_margin: float = 0.9
    in_view_margin_px: float = 2.0
    hidden_above: float = 0.5
    hidden_face_min: float = 0.8
    hidden_samples: int = 7
    partly_hidden_above: float = 0.4
    hidden_face_max: float = 0.8
    hidden_present_above: float = 0.9
    partly_hidden_conf: float = 0.5
    presence_margin: float = 0.0
    presence_unsure: float = 2.0
    presence_none_above: float = 0.75
    presence_face_min: float = 0.35
    presence_weights: tuple[float, float, float, float] = (0.800, 0.351, 0.323, -1.001)
    presence_prior_weight: float = 0.5
    presence_prior_sure: float = 3.0
    presence_prior_cap: float = 2.5
    layout_prior_weight: float = 0.5
    layout_prior_games: int = 100
    focal_search: bool = True
    focal_ratios: tuple[float, ...] = (0.64, 0.68, 0.73, 0.78, 0.84, 0.9, 0.96, 1.03, 1.1, 1.18)
    focal_slots: int = 32
    focal_art: bool = True
    focal_art_range: tuple[float, float] = (0.6, 1.25)
    focal_art_steps: int = 60
    focal_art_faces: int = 60
    focal_art_min_faces: int = 6
    focal_art_face_min: float = 0.5
    focal_art_min_score: float = 0.4
    focal_art_huber_px: float = 5.0
    focal_art_top_prior: tuple[float, float] = (0.7, 0.95)
    focal_art_scatter_px2: float = 2.0
    focal_art_lengthen: float = 1.03
    focal_art_deal_prior: tuple[float, float] = (0.95, 1.0)
    parity_max_cost: float = 0.75
    reach_max_cost: float = 4.0
    reach_candidates: int = 12
    reach_max_changes: int = 3
    art_check_below: float = 0.6
    art_check_weight: float = 10.0
    art_check_candidates: int = 3
    art_height_weight: float = 100.0
    art_height_unsure: float = 4.0
    art_min_score: float = 0.3
    art_check_max: int = 12
    art_height_max: int = 20
    art_parallax_weight: float = 0.5
    art_parallax_unsure: float = 3.0
    art_parallax_sigma_mm: float = 2.5
    art_parallax_clip: float = 4.0
    placement_faces: int = 10
    placement_min_faces: int = 4
    placement_face_min: float = 0.9
    placement_min_score: float = 0.5
    placement_gain: float = 1.5
    placement_floor_mm: float = 0.2
    placement_below_tilt_deg: float = 15.0
    placement_min_corr: float = 0.5
    art_scale: bool = True
    art_scale_faces: int = 8
    art_scale_probe: int = 4
    art_scale_tolerance: float = 0.015
    art_scale_min_score: float = 0.6
    blank_read_above: float = 0.05
    blank_read_below: float = 0.6
    blank_read_max: int = 24
    blank_shown_max_conf: float = 0.65
    art_size_weight: float = 0.5
    art_size_unsure: float = 3.0
    art_size_max: int = 12
    art_size_below_px: float = float("inf")
    art_size_min_score: float = 0.6


@dataclass(frozen=True)
class SlotState:
    """What was recognised at one slot.

    Attributes:
        slot: the slot.
        present: a tile stands there.
        face: the face id seen on top, or None (covered, occluded, empty).
        confidence: probability-like confidence in ``present`` and ``face``
            (0-1).
        free: free flag from the rules (None for an empty slot).
        seen: "face" (top face read), "covered" (under a present tile),
            "occluded" (hidden or out of view), "empty".
    """

    slot: Slot
    present: bool
    face: str | None
    confidence: float
    free: bool | None
    seen: str

    def to_json(self) -> dict:
        """The contract's ``recognize`` tile entry."""
        return {"slot": list(self.slot), "present": self.present, "face": self.face,
                "confidence": round(float(self.confidence), 4), "free": self.free}


@dataclass(frozen=True)
class Recognition:
    """The board read from one photo.

    Attributes:
        variant: the tile set.
        layout: the layout (its slot order is the order of :attr:`tiles`).
        tiles: one :class:`SlotState` per layout slot.
        quads: ``(N, 4, 2)`` float32 projected top faces in image px (for overlays),
            or None when built without an image.
        pose: the mat pose (``vision.pose.MatPose``) or None.
        advice: sentences for the player, from :func:`photo_advice`.
        looks_like: when most faces read unsurely and most look like another
            tile set's, that set (a variant id; the advice says so too), else None.
    """

    variant: str
    layout: Layout
    tiles: tuple[SlotState, ...]
    quads: np.ndarray | None = None
    pose: object | None = None
    advice: tuple[str, ...] = ()
    looks_like: str | None = None

    def to_json(self) -> dict:
        """The contract's ``recognize --json`` object, plus two extra fields:
        ``advice``, what would make a retake surer (:func:`photo_advice`; an
        empty list when nothing would), and ``unsure``, the slots ``[x, y,
        z]`` whose reading (a face, or no tile) has a confidence under
        :data:`UNSURE_BELOW` (:func:`unsure_slots`, layout order), the ones
        the overlay marks with a badge for a look by eye."""
        return {"mat_found": True, "tiles": [t.to_json() for t in self.tiles], "advice": list(self.advice),
                "unsure": [list(self.tiles[i].slot) for i in unsure_slots(self.tiles)]}

    @property
    def present(self) -> list[bool]:
        return [t.present for t in self.tiles]


def reconstruct(layout: Layout, variant: str, face_probs: np.ndarray, p_none: np.ndarray,
                p_occluded: np.ndarray | None = None, in_view: np.ndarray | None = None,
                settings: ReconstructSettings = ReconstructSettings(),
                geometry: Geometry | None = None, camera_mm: np.ndarray | None = None,
                spec=None, presence_logit: np.ndarray | None = None,
                removes_in_pairs: bool = False, face_check=None, blank_read=None,
                only_free_left: bool = False) -> list[SlotState]:
    """Decide presence and faces of every slot from per-slot probabilities.

    Args:
        layout: the layout; row ``i`` of every array is ``layout.slots[i]``.
        variant: tile set whose faces index the columns of ``face_probs``
            (tile-set order, :func:`companion.tiles.tileset`).
        face_probs: ``(N, K)`` float probability of each face at the slot's top
            face (sampled at the slot's height).
        p_none: ``(N,)`` probability of "no face at this slot and height".
        p_occluded: ``(N,)`` probability that something hides the face (zeros
            when None).  Rows of the three need not sum exactly to one.
        in_view: ``(N,)`` bool, False where the face is out of the picture
            (treated as occluded).  All True when None.
        settings: thresholds.
        geometry: precomputed ``Geometry.of(layout)``.
        camera_mm: ``(3,)`` camera centre in mat mm (``MatPose.camera_centre_mm``)
            and ``spec`` the mat: when given, a slot whose face the tiles
            already found on higher layers hide (as seen from the camera, see
            :func:`hidden_fraction`) by more than ``settings.hidden_above`` is
            not judged empty on its window's evidence: it is unseen.
        presence_logit: log-odds "a tile stands here" from the presence model
            (:mod:`vision.presence`): an ``(N,)`` float array (NaN where the
            model was not asked), or a function of a list of slot indices
            returning their log-odds, called once per layer, top down, for the
            candidate slots (:func:`vision.presence.candidates`) not already
            known to be covered (the model then runs only where its answer
            is used).  Where given, it decides the presence of that slot
            (rules 2-3 and the hidden-slot rule give way to it); the face still
            comes from ``face_probs``.
        removes_in_pairs: the game's tiles leave the board two at a time
            (:attr:`companion.variants.Variant.removes_in_pairs`), so the board
            holds as many tiles as the layout has slots, less an even number:
            when the decisions give the other parity, the least sure decision
            that can change without breaking the rules changes
            (:func:`_mend_parity`, ``settings.parity_max_cost``).  Leave it
            False for a frame that may show a turn half done (the referee).
        only_free_left: the photo shows a game played by the rules (only
            free tiles ever left): a board the free rule cannot reach is
            mended (:func:`_mend_reachability`, ``settings.reach_max_cost``),
            and the parity mend keeps it reachable.  :func:`recognize` sets
            it; leave it False where a blocked tile lifted off is a penalty
            to see (the referee).
        face_check: a function of a list of slot indices and the ``N``
            decisions (True where a tile stands) returning the slots'
            ``(M, K)`` face probabilities looked at again (same row sums;
            :func:`vision.artcheck.check_faces`), called once, after the
            presence decisions, for the slots found showing a face whose best
            face holds less than ``settings.art_check_below`` of their faces'
            probability (:func:`vision.artcheck.unsure_faces`); None skips it.
        blank_read: a function of a list of slot indices and the ``N``
            decisions (True where a tile stands) returning the slots' window
            read again with the part that the standing tiles of higher layers
            hide blanked (:func:`window_hidden_masks`,
            :func:`vision.crops.blank_hidden`): ``(face_probs (M, K),
            p_none (M,), p_occluded (M,))``.  Called once, after the presence
            decisions (needs ``camera_mm`` and ``spec``), for the standing
            top tiles in view whose face those tiles hide by more than
            ``settings.blank_read_above`` and at most
            ``settings.hidden_face_max`` (the most hidden first, at most
            ``settings.blank_read_max``).  Where that read shows a face (its
            face probabilities reach ``settings.presence_face_min`` and beat
            "occluded") and is surer of its best face than the plain read
            (the best face's share of the face probability), it replaces the
            plain read; a face unseen on the plain read is shown on the
            blanked one only where that reaches ``settings.partly_hidden_conf``
            (the presence's confidence times the best face's share), however
            little of it is hidden, and is left unseen as it was otherwise.
            A face the blanked read gives is reported at most
            ``settings.blank_shown_max_conf`` sure (marked for a look).
            ``settings.blank_read_below``: a face the plain read shows with
            at least this share is not read again.  None skips it.

    Returns:
        One :class:`SlotState` per slot, in layout order.
    """
    ts = tileset(variant)
    face_ids = [f.id for f in ts.faces]
    copies = np.array([f.copies for f in ts.faces])
    n = len(layout.slots)
    fp = np.asarray(face_probs, np.float64).reshape(n, len(face_ids))
    pn = np.asarray(p_none, np.float64).reshape(n)
    po = np.zeros(n) if p_occluded is None else np.asarray(p_occluded, np.float64).reshape(n)
    view = np.ones(n, bool) if in_view is None else np.asarray(in_view, bool).reshape(n)
    g = geometry or geometry_of(layout)
    slots = layout.slots
    eps = 1e-6
    pf = fp.sum(axis=1)
    logodds = np.log(pf + eps) - np.log(pn + eps)      # aligned face vs nothing here

    # slot right below (same x, y, one layer down), for rule 3
    at = {(s.x, s.y, s.z): i for i, s in enumerate(slots)}
    below = [at.get((s.x, s.y, s.z - 1), -1) for s in slots]

    # python scalars in the per-slot loop (numpy scalar access is slow)
    pf_l, pn_l, po_l, lo_l, view_l = pf.tolist(), pn.tolist(), po.tolist(), logodds.tolist(), view.tolist()
    if callable(presence_logit):
        presence_logit = _memoized(presence_logit)

    hidden_known: dict = {}
    def decide(prior: float):
        """One top-down pass; ``prior`` is added to the presence log-odds of
        every slot the presence model judges."""
        ql = [float("nan")] * n
        ask = None                      # candidate slots whose log-odds are asked for layer by layer
        if callable(presence_logit):
            from vision.presence import candidates
            # candidate slots, and any slot whose window reads "occluded" (in a
            # steep view a neighbour's side can hide an empty slot's window)
            ask = candidates(slots) | (view & (po > settings.occluded_above))
        elif presence_logit is not None:
            ql = _presence_used(np.asarray(presence_logit, np.float64).reshape(n), range(n), logodds, g,
                                settings, ql, prior)
        seen = [""] * n
        conf = [0.0] * n
        pending: set[int] = set()          # occluded slots whose presence lower evidence may still refute
        occ = settings.occluded_above
        layers: dict[int, list[int]] = {}
        for i, s in enumerate(slots):
            layers.setdefault(s.z, []).append(i)
        hidden_of = [0.0] * n
        for z in sorted(layers, reverse=True):
            hidden = [0.0] * len(layers[z])
            if camera_mm is not None and spec is not None:
                above = tuple(j for j in range(n) if slots[j].z > z and seen[j] in ("face", "covered", "occluded"))
                if above:
                    hidden = hidden_known.get((z, above))
                    if hidden is None:        # (the second pass mostly meets the same tiles above)
                        hidden = hidden_known[z, above] = hidden_fraction(
                            [slots[i] for i in layers[z]], [slots[j] for j in above], camera_mm, spec,
                            settings.hidden_samples).tolist()
                    for i, hid in zip(layers[z], hidden):
                        hidden_of[i] = hid
            if ask is not None:
                todo = [i for i in layers[z] if ask[i] and not seen[i]]
                if todo:
                    q = np.asarray(presence_logit(todo), np.float64).reshape(len(todo))
                    ql = _presence_used(q, todo, logodds, g, settings, ql, prior)
            for i, hid in zip(layers[z], hidden):
                if seen[i]:
                    continue                      # already implied present (covered) by a tile above
                if ql[i] == ql[i]:                # the presence model judged this slot
                    if not view_l[i] or hid > settings.hidden_present_above:
                        seen[i] = "occluded"          # out of the picture, or behind the tiles in front
                        conf[i] = UNSEEN_CONFIDENCE
                        _cover(i, g, seen, conf)
                    elif ql[i] < settings.presence_margin or (
                            ql[i] < settings.presence_unsure and pn_l[i] > settings.presence_none_above
                            and all(pn_l[j] > settings.presence_none_above for j in g.covers[i])):
                        seen[i] = "empty"
                        conf[i] = 1.0 / (1.0 + math.exp(min(50.0, max(-50.0, ql[i]))))
                    else:
                        sure = 1.0 / (1.0 + math.exp(-min(50.0, ql[i])))
                        readable = hid <= settings.hidden_above or pf_l[i] >= settings.hidden_face_min
                        if readable and pf_l[i] >= settings.presence_face_min and pf_l[i] >= po_l[i]:
                            seen[i] = "face"
                            conf[i] = sure
                        else:
                            seen[i] = "occluded"
                            conf[i] = min(UNSEEN_CONFIDENCE, sure)
                        _cover(i, g, seen, conf)
                    if seen[i] == "face":
                        _refute_pending_above(i, g, seen, conf, pending)
                    continue
                if hid > settings.hidden_above and pf_l[i] < settings.hidden_face_min:
                    seen[i] = "occluded"          # behind a taller stack: the window cannot tell
                    conf[i] = UNSEEN_CONFIDENCE
                    pending.add(i)
                    continue
                if not view_l[i] or po_l[i] > occ:
                    seen[i] = "occluded"
                    conf[i] = min(UNSEEN_CONFIDENCE, max(po_l[i], 1 - pn_l[i])) if view_l[i] else UNSEEN_CONFIDENCE
                    pending.add(i)
                    continue
                if pf_l[i] > pn_l[i]:
                    j = below[i]
                    if (j >= 0 and view_l[j] and po_l[j] <= occ
                            and lo_l[j] > lo_l[i] + settings.height_margin):
                        seen[i] = "empty"          # the face belongs to the tile below, seen too high
                        conf[i] = 1.0 / (1.0 + math.exp(min(50.0, lo_l[i] - lo_l[j])))
                    else:
                        seen[i] = "face"
                        conf[i] = pf_l[i] / max(pf_l[i] + pn_l[i], eps)
                        _cover(i, g, seen, conf)
                else:
                    seen[i] = "empty"
                    conf[i] = pn_l[i] / max(pf_l[i] + pn_l[i], eps)
                if seen[i] == "face":
                    _refute_pending_above(i, g, seen, conf, pending)
            _pinch_legality(layers[z], g, seen, conf, pf_l, pn_l, eps)
        for p in sorted(pending, key=lambda i: -slots[i].z):
            if seen[p] == "occluded":
                _cover(p, g, seen, conf)
        return seen, conf, hidden_of, ql

    seen, conf, hidden_of, ql = decide(0.0)
    if callable(presence_logit) and (settings.presence_prior_weight or settings.layout_prior_weight):
        share = _confident_share(ql, settings.presence_prior_sure)
        prior = 0.0
        if share is not None and settings.presence_prior_weight:
            cap = settings.presence_prior_cap
            prior = settings.presence_prior_weight * max(-cap, min(cap, math.log(share / (1.0 - share))))
        if settings.layout_prior_weight:
            odds = removal_odds(tuple(tuple(t) for t in slots), settings.layout_prior_games)
            row = odds[min(len(odds) - 1, int(round(sum(st == "empty" for st in seen) / 2)))]
            row = np.clip(row, 0.02, 0.98)
            prior = (prior + settings.layout_prior_weight * np.log(row / (1 - row))).tolist()
        seen, conf, hidden_of, ql = decide(prior)
    if only_free_left and settings.reach_max_cost > 0:
        _mend_reachability(g, seen, conf, ql, pf_l, po_l, settings, removes_in_pairs)
    if removes_in_pairs and sum(st == "empty" for st in seen) % 2 == 1:
        _mend_parity(g, seen, conf, ql, pf_l, po_l, settings,
                     reachable_only=only_free_left and settings.reach_max_cost > 0)
    final_hidden: dict[int, float] = {}
    blank_shown: set[int] = set()          # faces shown only thanks to the blanked read
    blank_read_from: set[int] = set()      # faces read from the blanked read

    def hidden_now(idx) -> list[float]:
        """Slots ``idx``'s faces hidden by the tiles finally found standing
        above them (one :func:`hidden_fraction` a layer)."""
        todo = sorted({i for i in idx if i not in final_hidden})
        for z in sorted({slots[i].z for i in todo}):
            here = [i for i in todo if slots[i].z == z]
            above = [slots[j] for j in range(n) if slots[j].z > z and seen[j] != "empty"]
            hid = hidden_fraction([slots[i] for i in here], above, camera_mm, spec, settings.hidden_samples) \
                if above else np.zeros(len(here))
            final_hidden.update(zip(here, hid.tolist()))
        return [final_hidden[i] for i in idx]

    if blank_read is not None and camera_mm is not None and spec is not None and settings.blank_read_max > 0:
        again = [i for i in range(n) if seen[i] in ("face", "occluded") and view_l[i]
                 and hidden_of[i] > settings.blank_read_above
                 and not (seen[i] == "face" and fp[i].max() >= settings.blank_read_below * pf_l[i])]
        again = [i for i, hid in zip(again, hidden_now(again))
                 if settings.blank_read_above < hid <= settings.hidden_face_max]
        again = sorted(again, key=lambda i: -final_hidden[i])[:settings.blank_read_max]
        if again:
            bfp, bpn, bpo = blank_read(again, [st != "empty" for st in seen])
            fp = fp.copy()
            for r, i in enumerate(again):
                row = np.asarray(bfp[r], np.float64)
                pf_b = float(row.sum())
                if pf_b < settings.presence_face_min or pf_b < float(bpo[r]):
                    continue                      # the part in sight shows no face: as the plain read had it
                if seen[i] == "face" and row.max() / pf_b < fp[i].max() / max(pf_l[i], eps):
                    continue                      # the plain read was surer of its face
                if seen[i] == "occluded":
                    lo = ql[i] if ql[i] == ql[i] else math.log(pf_b + eps) - math.log(float(bpn[r]) + eps)
                    sure = 1.0 / (1.0 + math.exp(-min(50.0, max(-50.0, lo))))
                    if sure * row.max() / pf_b < settings.partly_hidden_conf:
                        continue                  # too unsure to show: unseen, as it was
                    seen[i] = "face"
                    conf[i] = sure
                    blank_shown.add(i)
                blank_read_from.add(i)
                fp[i] = row
                pf_l[i] = pf_b
    shown = [i for i in range(n) if seen[i] == "face"]
    if face_check is not None and settings.art_check_weight > 0:
        from vision.artcheck import unsure_faces
        looked = unsure_faces(fp, shown, settings.art_check_below)
        looked = sorted(looked, key=lambda i: fp[i].max() / fp[i].sum())[:settings.art_check_max]
        if looked:
            fp = fp.copy()
            standing = [st != "empty" for st in seen]
            fp[looked] = np.asarray(face_check(looked, standing), np.float64).reshape(len(looked), fp.shape[1])
    faces = _assign_faces(fp, shown, copies)
    board = Board(g)
    for i in range(n):
        if seen[i] == "empty":
            board.remove(i)
    free = board.free_flags()
    out = []
    for i, s in enumerate(slots):
        present = seen[i] != "empty"
        face = None
        c = conf[i]
        if seen[i] == "face":
            k = faces[i]
            face = face_ids[k]
            c = conf[i] * float(fp[i, k]) / max(pf_l[i], eps)
            hid = hidden_of[i]
            if hid > settings.partly_hidden_above:
                # again with the final tiles above: the pass judged this slot
                # while a slot above was still "occluded", since found empty
                hid = hidden_now([i])[0]
            unsure = c < settings.partly_hidden_conf and (hid > settings.partly_hidden_above or i in blank_shown)
            if hid > settings.hidden_face_max or unsure:
                out.append(SlotState(s, True, None, min(c, UNSEEN_CONFIDENCE), free[i], "occluded"))
                continue
            if i in blank_read_from:
                c = min(c, settings.blank_shown_max_conf)     # read on what is left of it: for a look
        out.append(SlotState(s, present, face, min(1.0, max(0.0, c)), free[i], seen[i]))
    return out


def _presence_used(q: np.ndarray, idx, logodds: np.ndarray, g: Geometry, settings: ReconstructSettings,
                   ql: list[float], prior: float = 0.0) -> list[float]:
    """``ql`` with the log-odds used for slots ``idx`` filled in: the presence
    model's ``q`` (one per slot of ``idx``; NaN: not asked) weighed with the
    face classifier's window and the best window one layer down, ``a q + b lo
    - c lo_below + d`` (logistic regression, ``settings.presence_weights``),
    plus ``prior`` (the photo's prior term, see :func:`_confident_share`)."""
    a, b, c, d = settings.presence_weights
    lo_c = np.clip(logodds, -8.0, 8.0)
    out = list(ql)
    for k, i in enumerate(idx):
        below = max((lo_c[j] for j in g.covers[i]), default=-8.0)
        out[i] = float(a * q[k] + b * lo_c[i] - c * below + d + (prior[i] if isinstance(prior, list) else prior))
    return out


@functools.lru_cache(maxsize=16)
def removal_odds(slots: tuple, games: int = 100, seed: int = 0) -> np.ndarray:
    """How likely each slot still holds its tile after ``2k`` tiles have left
    in a game of random free pairs.

    Args:
        slots: the layout's slots ``((x, y, z), ...)``.
        games: simulated games (tiles leave two at a time, each a free tile
            chosen at random: the free rule of the rule books, 2.1 Law 1,
            without faces).
        seed: the simulation's seed (same answer for the same arguments).

    Returns:
        ``(n // 2 + 1, n) float``: row ``k`` is, per slot, the share of the
        games that reached ``2k`` removals in which the slot was still full
        (0.5 where no game got that far).  The games are played on the slots
        sorted by layer, row and column, so the answer does not depend on
        the order a layout file lists its slots in (before session 39 it
        moved by up to 0.04, and recognize's confidences with it).
    """
    order = sorted(range(len(slots)), key=lambda i: (slots[i][2], slots[i][1], slots[i][0]))
    if order != list(range(len(slots))):
        odds = np.empty((len(slots) // 2 + 1, len(slots)))
        odds[:, order] = removal_odds(tuple(tuple(slots[i]) for i in order), games, seed)
        return odds
    layout = Layout("simulated", tuple(Slot(*s) for s in slots), "")
    g = Geometry.of(layout)
    n = len(slots)
    rng = np.random.default_rng(seed)
    full = np.zeros((n // 2 + 1, n))
    reached = np.zeros(n // 2 + 1)
    for _ in range(games):
        board = Board(g)
        free = set(board.free_indices())
        present = np.ones(n)
        for k in range(n // 2 + 1):
            full[k] += present
            reached[k] += 1
            if len(free) < 2:
                break
            for i in rng.choice(sorted(free), 2, replace=False).tolist():
                board.remove(i)
                present[i] = 0.0
                free.discard(i)
                for j in (*g.covers[i], *g.left[i], *g.right[i]):
                    if board.is_free(j):
                        free.add(j)
                    else:
                        free.discard(j)
    return np.where(reached[:, None] > 0, full / np.maximum(reached[:, None], 1), 0.5)


def _memoized(presence_logit):
    """``presence_logit`` (a function of a list of slot indices) remembering
    its answers, so a second pass asks the model only about slots it has not
    judged yet."""
    known: dict[int, float] = {}

    def ask(idx: list[int]) -> np.ndarray:
        new = [i for i in idx if i not in known]
        if new:
            for i, v in zip(new, np.asarray(presence_logit(new), np.float64).reshape(len(new)).tolist()):
                known[i] = v
        return np.array([known[i] for i in idx], np.float64)

    return ask


def _confident_share(ql: list[float], sure: float) -> float | None:
    """Share of the slots the presence model judged with ``|log-odds| > sure``
    that are present, with one present and one empty pseudo-count (Laplace's
    rule of succession), or None when it judged no slot.  How far the game
    has gone shows in the stacks the photo shows clearly; it is the prior for
    the ones it shows poorly (an empirical-Bayes prior: the share is estimated
    from the same photo)."""
    judged = [v for v in ql if v == v]
    if not judged:
        return None
    sure_ones = [v for v in judged if abs(v) > sure]
    return (sum(v > 0 for v in sure_ones) + 1.0) / (len(sure_ones) + 2.0)


def _refute_pending_above(i: int, g: Geometry, seen: list[str], conf: list[float], pending: set[int]) -> None:
    """Slot ``i`` shows its own face, so no tile lies above it (an unseen one
    would hide it): the occluded slots over it still pending are empty.  (An
    empty-looking window proves less: under a present tile it shows that tile
    misplaced by parallax.)"""
    for p in g.covered_by[i]:
        if p in pending:
            pending.discard(p)
            seen[p] = "empty"
            conf[p] = UNSEEN_CONFIDENCE


def _pinch_legality(layer: list[int], g: Geometry, seen: list[str], conf: list[float],
                    pf: list[float], pn: list[float], eps: float) -> None:
    """An empty slot whose left and right neighbours on its layer are both
    present was pinched when it left (tiles are only removed, so they stood
    there then too): it cannot have been removed.  When the neighbours'
    presence is surer than this slot's emptiness, the slot is present (with
    its face when its window showed one, else unseen)."""
    changed = True
    while changed:
        changed = False
        for i in layer:
            if seen[i] != "empty":
                continue
            lp = [conf[j] for j in g.left[i] if seen[j] != "empty"]
            rp = [conf[j] for j in g.right[i] if seen[j] != "empty"]
            if not lp or not rp:
                continue
            sure = min(max(lp), max(rp))
            if sure <= conf[i]:
                continue
            if pf[i] > eps and pf[i] >= 0.05:
                seen[i] = "face"
                conf[i] = min(sure, max(pf[i] / max(pf[i] + pn[i], eps), 1 - conf[i]))
            else:
                seen[i] = "occluded"
                conf[i] = min(UNSEEN_CONFIDENCE, 1 - conf[i])
            _cover(i, g, seen, conf)
            changed = True


def _decision_cost(i: int, seen: list[str], conf: list[float], ql: list[float],
                   settings: ReconstructSettings, overruled: bool = False) -> float | None:
    """Log-odds it costs to overturn slot ``i``'s decision, or None where
    there is no reading to overturn (:func:`_mend_parity`'s measure): ``|ql -
    margin|`` where the presence model judged the slot, else the
    classifier's ``|log(conf / (1 - conf))|``; covered and unseen slots
    have none, and so has an "empty" the presence model found present
    (the classifier saw no face anywhere in the stack) unless ``overruled``:
    then it costs what the model fell short of ``settings.presence_unsure``."""
    st = seen[i]
    if st == "covered":
        return None
    if ql[i] == ql[i]:
        if st == "empty" and ql[i] >= settings.presence_margin:
            return max(0.0, settings.presence_unsure - ql[i]) if overruled else None
        return abs(ql[i] - settings.presence_margin)
    if st == "occluded":
        return None
    c = min(max(conf[i], 1e-6), 1 - 1e-6)
    return abs(math.log(c / (1.0 - c)))


def _turn(i: int, g: Geometry, seen: list[str], conf: list[float], pf: list[float], po: list[float],
          settings: ReconstructSettings) -> None:
    """Overturn slot ``i``'s decision: an empty slot becomes present (showing
    its face where its window has one, else unseen) and covers what lies
    under it; a present one becomes empty and the slots under it that
    nothing else covers now show their top."""
    if seen[i] == "empty":
        seen[i] = "face" if pf[i] >= settings.presence_face_min and pf[i] >= po[i] else "occluded"
        conf[i] = UNSEEN_CONFIDENCE
        _cover(i, g, seen, conf)
    else:
        seen[i] = "empty"
        conf[i] = UNSEEN_CONFIDENCE
        for j in g.covers[i]:
            if seen[j] == "covered" and not any(seen[k] != "empty" for k in g.covered_by[j]):
                seen[j] = "face" if pf[j] >= settings.presence_face_min and pf[j] >= po[j] else "occluded"
                conf[j] = UNSEEN_CONFIDENCE


def _mend_reachability(g: Geometry, seen: list[str], conf: list[float], ql: list[float], pf: list[float],
                       po: list[float], settings: ReconstructSettings, removes_in_pairs: bool) -> None:
    """Make the cheapest change that turns a board the free rule cannot reach
    into one it can (``settings.reach_max_cost``, ``reach_candidates``,
    ``reach_max_changes``; :func:`companion.rules.unreachable`).

    Candidates: the empty slots that cannot have left (to present: they were
    pinched or stood under tiles that could not leave), the empty slots they
    would stand on, and the standing tiles beside them (to empty: the tile
    that pinches a gap may be a misreading).  A change set is kept only when
    every standing tile's support stands and the board is reachable; in a
    game of pairs a set that leaves an odd number of tiles missing pays
    ``settings.parity_max_cost`` more.  Nothing changes when no set costs
    under ``settings.reach_max_cost``.
    """
    from itertools import combinations
    from companion.rules import unreachable
    n = len(seen)
    present = [st != "empty" for st in seen]
    stuck = unreachable(g, present)
    if not stuck:
        return
    pool: set[int] = set()
    for i in stuck:
        pool.add(i)
        todo = list(g.covers[i])
        while todo:                                   # the empty slots it would stand on
            j = todo.pop()
            if not present[j] and j not in pool:
                pool.add(j)
                todo.extend(g.covers[j])
        pool.update(j for j in g.left[i] + g.right[i] if present[j])
    costs = {i: c for i in pool if (c := _decision_cost(i, seen, conf, ql, settings, overruled=True)) is not None}
    cands = sorted(costs, key=costs.get)[:settings.reach_candidates]
    missing = n - sum(present)
    best, best_cost = None, settings.reach_max_cost
    for k in range(1, settings.reach_max_changes + 1):
        for combo in combinations(cands, k):
            cost = sum(costs[i] for i in combo)
            if cost >= best_cost:
                continue
            trial = present[:]
            for i in combo:
                trial[i] = not trial[i]
            if removes_in_pairs and (missing + sum(1 if present[i] else -1 for i in combo)) % 2:
                cost += settings.parity_max_cost
                if cost >= best_cost:
                    continue
            if any(trial[i] and not all(trial[j] for j in g.covers[i]) for i in range(n)):
                continue
            if unreachable(g, trial):
                continue
            best, best_cost = combo, cost
    if best is None:
        return
    z = [g.layout.slots[i].z for i in range(n)]
    for i in sorted((i for i in best if present[i]), key=lambda i: -z[i]):      # the tops leave first
        _turn(i, g, seen, conf, pf, po, settings)
    for i in sorted((i for i in best if not present[i]), key=lambda i: z[i]):   # supports first
        _turn(i, g, seen, conf, pf, po, settings)


def _mend_parity(g: Geometry, seen: list[str], conf: list[float], ql: list[float], pf: list[float],
                 po: list[float], settings: ReconstructSettings, reachable_only: bool = False) -> None:
    """Change the least sure decision that can legally change, when an odd
    number of tiles is missing from a game whose tiles leave in pairs.

    A decision's cost is its log-odds (:func:`_decision_cost`): ``|ql|``
    where the presence model judged the slot, else the classifier's
    ``log(conf / (1 - conf))``; slots known only by implication (covered) or
    not seen at all (occluded without the presence model) have no reading
    to overturn and are left alone, and so is an "empty" the presence model
    found present (rule: no face anywhere in the stack).  A present slot may
    become empty only when it is free (no tile stands on it, and not
    pinched); an empty slot may become present only when the tiles it would
    stand on are there and no empty neighbour would then be pinched; with
    ``reachable_only`` the board must stay one the free rule can reach
    (:func:`companion.rules.unreachable`).  Nothing changes when the
    cheapest change costs ``settings.parity_max_cost`` or more.
    """
    def present(j: int) -> bool:
        return seen[j] != "empty"

    options = []
    for i, st in enumerate(seen):
        cost = _decision_cost(i, seen, conf, ql, settings)
        if cost is None or cost >= settings.parity_max_cost:
            continue
        if st == "empty":
            if not all(present(j) for j in g.covers[i]):
                continue
            if any(not present(j) and any(present(k) for k in g.left[j]) for j in g.left[i]) or \
                    any(not present(j) and any(present(k) for k in g.right[j]) for j in g.right[i]):
                continue
        elif any(present(j) for j in g.left[i]) and any(present(j) for j in g.right[i]):
            continue
        options.append((cost, i))
    for _, i in sorted(options):
        if reachable_only:
            from companion.rules import unreachable
            trial = [present(j) != (j == i) for j in range(len(seen))]
            if unreachable(g, trial):
                continue
        _turn(i, g, seen, conf, pf, po, settings)
        return


def _near_pairs(T: np.ndarray, O: np.ndarray, c: np.ndarray, spec) -> tuple[np.ndarray, np.ndarray]:
    """Indices ``(ti, oi)`` of the (target, occluder) pairs that can meet at
    all: the occluder rises above the target's face, and its footprint lies
    within the ray's horizontal reach up to the occluder's top (from anywhere
    on the face).  ``c``: camera centre, height up."""
    gx, gy = spec.grid_origin_mm
    tw, th, tt = spec.tile_mm
    half_diag = 0.5 * float(np.hypot(tw, th))
    tcx = gx + (T[:, 0] + 1) * tw / 2
    tcy = gy + (T[:, 1] + 1) * th / 2
    th0 = tt * (T[:, 2] + 1)
    ocx = gx + (O[:, 0] + 1) * tw / 2
    ocy = gy + (O[:, 1] + 1) * th / 2
    reach = ((tt * (O[None, :, 2] + 1) - th0[:, None]) / np.maximum(c[2] - th0[:, None], 1e-6)
             * (np.hypot(c[0] - tcx, c[1] - tcy)[:, None] + half_diag))
    near = np.hypot(ocx[None] - tcx[:, None], ocy[None] - tcy[:, None]) <= reach + 2 * half_diag + 1.0
    return np.nonzero(near & (O[None, :, 2] > T[:, None, 2]))


def _rays_blocked(px: np.ndarray, py: np.ndarray, ph: np.ndarray, c: np.ndarray, Op: np.ndarray, spec) -> np.ndarray:
    """Whether the rays from points ``(px, py)`` at heights ``ph`` (mm; arrays
    of one shape ``(P, S)``) to the camera ``c`` (height up) pass through the
    box of the tile at slot ``Op[p]`` (``(P, 3)``, one box per row): the ray's
    stretch within the box's height slab is a segment in the plane, clipped
    against the box's footprint (Liang & Barsky, "A new concept and method for
    line clipping", ACM TOG 1984).  Returns ``(P, S) bool``."""
    gx, gy = spec.grid_origin_mm
    tw, th, tt = spec.tile_mm
    bx0 = (gx + Op[:, 0] * tw / 2)[:, None]
    by0 = (gy + Op[:, 1] * th / 2)[:, None]

    def at(H):
        s = (H[:, None] - ph) / np.maximum(c[2] - ph, 1e-6)
        return px + s * (c[0] - px), py + s * (c[1] - py)
    ax, ay = at(tt * Op[:, 2])
    bx, by = at(tt * (Op[:, 2] + 1))
    lo = np.zeros(ax.shape)
    hi = np.ones(ax.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        for a, b, e0, e1 in ((ax, bx, bx0, bx0 + tw), (ay, by, by0, by0 + th)):
            d = b - a
            t1 = (e0 - a) / d
            t2 = (e1 - a) / d
            flat = np.abs(d) < 1e-9
            inside = (a > e0) & (a < e1)
            lo = np.maximum(lo, np.where(flat, np.where(inside, 0.0, 2.0), np.minimum(t1, t2)))
            hi = np.minimum(hi, np.where(flat, np.where(inside, 1.0, -1.0), np.maximum(t1, t2)))
    return lo < hi


def hidden_fraction(targets, occluders, camera_mm: np.ndarray, spec, samples: int = 3) -> np.ndarray:
    """How much of each target slot's top face the occluder tiles hide from the camera.

    ``samples`` x ``samples`` points on each target face (cell centres of a
    regular grid) are joined to the camera
    centre; a point is hidden when that ray passes through an occluder's box
    (:func:`_rays_blocked`).
    Only boxes rising above the face can hide it.  Tile size and grid origin
    come from ``spec`` (../shared/CONTRACT.md, "Physical standard").

    Args:
        targets: ``N`` slots ``(x, y, z)``.
        occluders: ``M`` slots (present tiles on higher layers).
        camera_mm: ``(3,)`` camera centre in the mat frame (Z < 0 above the mat).
        spec: ``vision.mat.MatSpec``.
        samples: grid points per side (3: 9 points, in steps of 1/9).

    Returns:
        ``(N,)`` float64 fraction in [0, 1].
    """
    T = np.asarray(targets, np.float64).reshape(-1, 3)
    O = np.asarray(occluders, np.float64).reshape(-1, 3)
    if len(T) == 0 or len(O) == 0:
        return np.zeros(len(T))
    gx, gy = spec.grid_origin_mm
    tw, th, tt = spec.tile_mm
    c = np.array([camera_mm[0], camera_mm[1], -camera_mm[2]], np.float64)   # height up
    ti, oi = _near_pairs(T, O, c, spec)
    if len(ti) == 0:
        return np.zeros(len(T))
    g = (np.arange(samples) + 0.5) / samples
    Tp = T[ti]                                                              # one row per pair
    xs = gx + Tp[:, 0, None] * tw / 2 + g[None] * tw                        # (P, samples) columns' X
    ys = gy + Tp[:, 1, None] * th / 2 + g[None] * th                        # (P, samples) rows' Y
    blocked = _rays_blocked_grid(xs, ys, tt * (Tp[:, 2] + 1), c, O[oi], spec)
    hidden = np.zeros((len(T), samples * samples), bool)
    np.logical_or.at(hidden, ti, blocked.reshape(len(ti), -1))
    return hidden.mean(axis=1)


def occluders_in_view(targets, occluders, camera_mm: np.ndarray, spec, samples: int = 5,
                      margin: float = 0.1) -> list[np.ndarray]:
    """Which occluder tiles show in each target slot's window: those hiding
    some point of its top face, or of the context ``margin`` around it (the
    window the classifier and the looks are cut from,
    ``vision.crops.PatchSettings.margin``), from the camera.

    The test of :func:`hidden_fraction`, each tile alone (one behind
    another counts too), on ``samples`` x ``samples`` points spread evenly
    over the face grown by ``margin`` on every side, its edges included.  A
    tile that shows in no target's window cannot change its look (bar
    shadows).

    Args:
        targets: ``N`` slots ``(x, y, z)``.
        occluders: ``M`` slots (present tiles; only those rising above a
            target's face can show over it).
        camera_mm: ``(3,)`` camera centre in the mat frame (Z < 0 above the mat).
        spec: ``vision.mat.MatSpec``.
        samples: grid points per side.
        margin: the margin, a fraction of the face's width (resp. height).

    Returns:
        ``N`` int64 arrays of indices into ``occluders``, ascending.
    """
    T = np.asarray(targets, np.float64).reshape(-1, 3)
    O = np.asarray(occluders, np.float64).reshape(-1, 3)
    out = [np.zeros(0, np.int64) for _ in range(len(T))]
    if len(T) == 0 or len(O) == 0:
        return out
    gx, gy = spec.grid_origin_mm
    tw, th, tt = spec.tile_mm
    c = np.array([camera_mm[0], camera_mm[1], -camera_mm[2]], np.float64)   # height up
    ti, oi = _near_pairs(T, O, c, spec)
    if len(ti) == 0:
        return out
    g = np.linspace(-margin, 1.0 + margin, max(2, int(samples)))          # the window's edges too
    Tp = T[ti]
    xs = gx + Tp[:, 0, None] * tw / 2 + g[None] * tw
    ys = gy + Tp[:, 1, None] * th / 2 + g[None] * th
    shows = _rays_blocked_grid(xs, ys, tt * (Tp[:, 2] + 1), c, O[oi], spec).reshape(len(ti), -1).any(axis=1)
    for t, o in zip(ti[shows], oi[shows]):
        out[int(t)] = np.append(out[int(t)], np.int64(o))
    return [np.sort(a) for a in out]


def hidden_points(target, points_mm: np.ndarray, occluders, camera_mm: np.ndarray, spec) -> np.ndarray:
    """Which points of a target slot's top face the occluder tiles hide from
    the camera (the per-point test of :func:`hidden_fraction`).

    Args:
        target: the slot ``(x, y, z)``; its face lies at height ``20 (z + 1)`` mm.
        points_mm: ``(..., 2)`` mat mm ``(X, Y)`` on that face's plane.
        occluders: slots (present tiles on higher layers).
        camera_mm: ``(3,)`` camera centre in the mat frame (Z < 0 above the mat).
        spec: ``vision.mat.MatSpec``.

    Returns:
        ``points_mm.shape[:-1]`` bool, True where hidden.
    """
    pts = np.asarray(points_mm, np.float64)
    shape = pts.shape[:-1]
    T = np.asarray([tuple(target)], np.float64).reshape(1, 3)
    O = np.asarray(occluders, np.float64).reshape(-1, 3)
    if len(O) == 0:
        return np.zeros(shape, bool)
    c = np.array([camera_mm[0], camera_mm[1], -camera_mm[2]], np.float64)
    _, oi = _near_pairs(T, O, c, spec)
    if len(oi) == 0:
        return np.zeros(shape, bool)
    flat = pts.reshape(1, -1, 2)
    px = np.repeat(flat[..., 0], len(oi), axis=0)
    py = np.repeat(flat[..., 1], len(oi), axis=0)
    ph = np.full(px.shape, spec.tile_mm[2] * (T[0, 2] + 1))
    return _rays_blocked(px, py, ph, c, O[oi], spec).any(axis=0).reshape(shape)


def window_hidden_masks(targets, occluders, camera_mm: np.ndarray, spec, crop) -> np.ndarray:
    """Which pixels of each target slot's classifier patch the occluder tiles hide.

    The patch's pixel centres (:func:`vision.crops.patch_grid_uv`: the face
    plus the crop's margin, rows down the 40 mm side) are placed on the plane
    of the slot's top face and joined to the camera centre, as
    :func:`hidden_fraction` joins its grid points (only boxes on higher
    layers than a target can hide it, so one list of standing tiles serves
    every target).  The same masks blank the hidden part of a patch in
    training (``vision.training.dataset``, from the tiles truly standing) and
    at inference (from the tiles found standing), :func:`vision.crops.blank_hidden`.

    Args:
        targets: ``N`` slots ``(x, y, z)``.
        occluders: slots (present tiles).
        camera_mm: ``(3,)`` camera centre in the mat frame (Z < 0 above the mat).
        spec: ``vision.mat.MatSpec``.
        crop: ``vision.crops.CropSettings`` of the patches.

    Returns:
        ``(N, crop.height, crop.width)`` bool, True where hidden.
    """
    from vision.crops import patch_grid_uv

    T = np.asarray(targets, np.float64).reshape(-1, 3)
    O = np.asarray(occluders, np.float64).reshape(-1, 3)
    out = np.zeros((len(T), crop.height * crop.width), bool)
    if len(T) == 0 or len(O) == 0:
        return out.reshape(len(T), crop.height, crop.width)
    gx, gy = spec.grid_origin_mm
    tw, th, tt = spec.tile_mm
    c = np.array([camera_mm[0], camera_mm[1], -camera_mm[2]], np.float64)   # height up
    ti, oi = _near_pairs(T, O, c, spec)
    if len(ti):
        u, v = patch_grid_uv(crop)
        Tp = T[ti]                                                          # one row per pair
        xs = gx + Tp[:, 0, None] * tw / 2 + u[None] * tw                    # (P, w) columns' X
        ys = gy + Tp[:, 1, None] * th / 2 + v[None] * th                    # (P, h) rows' Y
        blocked = _rays_blocked_grid(xs, ys, tt * (Tp[:, 2] + 1), c, O[oi], spec)
        np.logical_or.at(out, ti, blocked.reshape(len(ti), -1))
    return out.reshape(len(T), crop.height, crop.width)


def _rays_blocked_grid(xs: np.ndarray, ys: np.ndarray, ph: np.ndarray, c: np.ndarray, Op: np.ndarray,
                       spec) -> np.ndarray:
    """:func:`_rays_blocked` for the points of an axis-aligned grid, one grid
    per box: columns at ``xs[p]`` (``(P, w)`` mm) and rows at ``ys[p]``
    (``(P, h)`` mm), at height ``ph[p]`` (``(P,)`` mm).  The ray's stretch
    inside the box's x-slab depends on a point's column only and inside its
    y-slab on its row only, so each is clipped once a column and once a row
    and the grid is their meeting (the same test, point for point).
    Returns ``(P, h, w) bool``."""
    gx, gy = spec.grid_origin_mm
    tw, th, tt = spec.tile_mm
    ph = ph[:, None]
    den = np.maximum(c[2] - ph, 1e-6)
    s0 = (tt * Op[:, 2, None] - ph) / den                   # the box's bottom and top along the ray
    s1 = (tt * (Op[:, 2, None] + 1) - ph) / den

    def clip(p, cc, e0, e1):
        a = p + s0 * (cc - p)
        d = (s1 - s0) * (cc - p)
        with np.errstate(divide="ignore", invalid="ignore"):
            t1 = (e0 - a) / d
            t2 = (e1 - a) / d
        flat = np.abs(d) < 1e-9
        inside = (a > e0) & (a < e1)
        lo = np.where(flat, np.where(inside, 0.0, 2.0), np.minimum(t1, t2))
        hi = np.where(flat, np.where(inside, 1.0, -1.0), np.maximum(t1, t2))
        return lo, hi
    bx0 = (gx + Op[:, 0] * tw / 2)[:, None]
    by0 = (gy + Op[:, 1] * th / 2)[:, None]
    lx, hx = clip(xs, c[0], bx0, bx0 + tw)                  # (P, w)
    ly, hy = clip(ys, c[1], by0, by0 + th)                  # (P, h)
    lo = np.maximum(np.maximum(lx[:, None, :], ly[:, :, None]), 0.0)
    hi = np.minimum(np.minimum(hx[:, None, :], hy[:, :, None]), 1.0)
    return lo < hi


_GEOMETRY_CACHE: dict = {}


def geometry_of(layout: Layout) -> Geometry:
    """``Geometry.of(layout)``, cached per slot tuple (a few layouts per process)."""
    key = layout.slots
    g = _GEOMETRY_CACHE.get(key)
    if g is None:
        if len(_GEOMETRY_CACHE) > 16:
            _GEOMETRY_CACHE.clear()
        g = _GEOMETRY_CACHE[key] = Geometry.of(layout)
    return g


def _cover(i: int, g: Geometry, seen: list[str], conf: list[float]) -> None:
    """Mark every slot under slot ``i`` present-and-covered, as sure as ``i``.

    Transitively: ``covers`` lists the lower slots a tile overlaps, but a tile
    half a tile off the one below it (a pyramid's offset layers) stands on
    slots that its own support overlaps and it does not, and those must
    stand too (a covered tile cannot have left)."""
    todo = [i]
    while todo:
        k = todo.pop()
        for j in g.covers[k]:
            if seen[j] != "covered":
                seen[j] = "covered"
                conf[j] = conf[i]
                todo.append(j)
            elif conf[j] < conf[i]:
                conf[j] = conf[i]
                todo.append(j)


def _assign_faces(fp: np.ndarray, visible: list[int], copies: np.ndarray) -> dict[int, int]:
    """Best face per visible slot, at most ``copies[k]`` slots per face.

    Every slot first takes its most likely face; where a face is read more
    often than it has copies, its most confident readers keep it and the
    others take their most likely face among those with copies to spare (so a
    surplus reading never takes a face away from a slot whose best reading it
    is).  Faces without copies left stay with the best reading when nothing
    else is possible.
    """
    if not visible:
        return {}
    sub = fp[visible]
    best = sub.argmax(axis=1)
    counts = np.bincount(best, minlength=len(copies))
    if np.all(counts <= copies):
        return dict(zip(visible, best.tolist()))
    out = dict(zip(visible, best.tolist()))
    used = np.zeros(len(copies), int)
    losers = []
    for k in np.flatnonzero(counts > 0):
        rows = np.flatnonzero(best == k)
        rows = rows[np.argsort(-sub[rows, k], kind="stable")]
        used[k] = min(len(rows), copies[k])
        losers += [int(r) for r in rows[copies[k]:]]
    for r in sorted(losers, key=lambda r: -float(np.max(np.where(used < copies, sub[r], -1.0)))):
        p = np.where(used < copies, sub[r], -1.0)
        k = int(p.argmax())
        if p[k] < 0:               # more visible faces than tiles in the set: keep the best
            k = int(best[r])
        used[k] += 1
        out[visible[r]] = k
    return out


def pose_with_focal(pose, f: float, source: str = "estimated"):
    """The mat pose re-solved for a camera of focal length ``f`` px.

    With the marker correspondences kept in ``pose`` (``object_points``,
    ``image_points``): ``cv2.solvePnP`` (IPPE, refined by Levenberg-Marquardt)
    with the new intrinsics.  Without them: the same mat homography
    ``H = K [r1 r2 t]`` decomposed for the new ``K`` (Zhang 2000, sec. 3.1),
    the rotation made orthonormal by SVD.

    Returns:
        A ``vision.pose.MatPose`` whose camera has this ``source``
        (``vision.pose.Camera``).
    """
    import cv2
    from vision.pose import Camera, MatPose

    K0 = pose.camera.K
    K = K0.copy()
    K[0, 0] = K[1, 1] = f
    cam = Camera(K, pose.camera.dist, pose.camera.image_size, source)
    obj = np.asarray(getattr(pose, "object_points", np.zeros((0, 3))), np.float64).reshape(-1, 3)
    img = np.asarray(getattr(pose, "image_points", np.zeros((0, 2))), np.float64).reshape(-1, 2)
    extra = {"object_points": obj, "image_points": img} if len(obj) else {}
    extra["other_mat"] = bool(getattr(pose, "other_mat", False))
    if len(obj) >= 4:
        ok, rvec, tvec = cv2.solvePnP(obj, img, K, cam.dist, flags=cv2.SOLVEPNP_IPPE)
        if ok:
            rvec, tvec = cv2.solvePnPRefineLM(obj, img, K, cam.dist, rvec, tvec)
            proj = cv2.projectPoints(obj, rvec, tvec, K, cam.dist)[0].reshape(-1, 2)
            rms = float(np.sqrt(np.mean(np.sum((proj - img) ** 2, axis=1))))
            return MatPose(rvec.reshape(3), tvec.reshape(3), cam, rms, pose.n_markers, pose.marker_ids, **extra)
    R0 = pose.rotation
    H = K0 @ np.column_stack([R0[:, 0], R0[:, 1], pose.tvec])
    M = np.linalg.inv(K) @ H
    lam = 2.0 / (np.linalg.norm(M[:, 0]) + np.linalg.norm(M[:, 1]))
    if M[2, 2] * lam < 0:
        lam = -lam
    r1, r2, t = M[:, 0] * lam, M[:, 1] * lam, M[:, 2] * lam
    U, _, Vt = np.linalg.svd(np.column_stack([r1, r2, np.cross(r1, r2)]))
    R = U @ Vt
    if np.linalg.det(R) < 0:
        R = U @ np.diag([1, 1, -1]) @ Vt
    return MatPose(cv2.Rodrigues(R)[0].reshape(3), t, cam, pose.reprojection_px, pose.n_markers,
                   pose.marker_ids, **extra)


def focal_from_art(image_bgr: np.ndarray, variant: str, layout: Layout, spec, pose, classifier,
                   settings: ReconstructSettings = ReconstructSettings()) -> float | None:
    """The focal length of a nearly overhead view from where the faces lie.

    The mat's homography fixes the camera up to its focal length: a longer
    one puts the camera higher, and a face at height ``h`` then lands nearer
    the point under the camera (parallax ``h * r / D``, ``r`` its distance
    from that point in the photo).  Every face on top of its column (no slot
    of the layout above it) that the classifier reads surely is located in the
    photo by its print art (:func:`vision.artcheck.face_offset`, at the
    assumed pose), and the focal length is the one under which those faces
    are likeliest where they are seen.  Each face's distance ``d`` (px) from
    where that camera puts it scores ``exp(-huber(d) / s)``; a raised face
    is a mixture: at its own height with the share ``q`` of tops still
    standing, or at a lower height of its column (its top taken, the tile
    below seen) with ``1 - q`` each; ``q`` is the likeliest of 10 shares in
    ``settings.focal_art_top_prior`` (a late game has most tops gone).  The
    result is lengthened by ``settings.focal_art_lengthen`` (3 %: a focal
    length too short costs the presence decisions more than one too long).  Taking
    every face at whichever height fits best, the first form, let a
    shorter focal length explain the tall stacks' faces as lower ones.
    Tiles lie up to 3 mm off their slots, so each face is a noisy witness;
    the far ones, high up, say most.  The best of
    ``settings.focal_art_steps`` focal lengths is refined by a parabola (log
    focal length).

    Args:
        image_bgr: ``(H, W, 3)`` uint8 BGR photo.
        variant, layout, spec, classifier: as :func:`recognize`.
        pose: the pose at the assumed focal length (``vision.pose.MatPose``).
        settings: ``focal_art_*`` fields.

    Returns:
        The focal length, px, or None when fewer than
        ``settings.focal_art_min_faces`` faces were located.
    """
    from vision.artcheck import face_offset, grey_of
    from vision.crops import extract_patches
    from vision.mat import slot_face_corners_mm
    from vision.pose import project_points, project_slot_faces

    g = Geometry.of(layout)
    tops = [i for i in range(len(layout.slots)) if not g.covered_by[i]]
    if len(tops) < settings.focal_art_min_faces:
        return None
    quads = np.asarray(project_slot_faces([layout.slots[i] for i in tops], spec, pose), np.float64)
    sc = classifier.scores(extract_patches(image_bgr, quads.astype(np.float32), classifier.crop), variant)
    fp = sc.face_probs
    mass = fp.sum(axis=1)
    sure = (mass >= settings.focal_art_face_min) & (fp.max(axis=1) >= 0.9 * settings.focal_art_face_min)
    centre = pose.camera.K[:2, 2]
    reach = np.linalg.norm(quads.mean(axis=1) - centre, axis=1) * np.array([layout.slots[i].z + 1 for i in tops])
    order = [j for j in np.argsort(-reach) if sure[j]][:settings.focal_art_faces]
    grey = grey_of(image_bgr)
    seen, ground = [], []
    for j in order:
        slot = layout.slots[tops[j]]
        face = sc.labels[int(fp[j].argmax())]
        dx, dy, score = face_offset(grey, variant, slot, face, spec, pose)
        if score < settings.focal_art_min_score:
            continue
        c = slot_face_corners_mm([tuple(slot)], spec)[0]
        x, y, z = float(c[:, 0].mean()), float(c[:, 1].mean()), float(c[0, 2])
        seen.append(project_points(np.array([[x + dx, y + dy, z]]), pose)[0])
        t = float(spec.tile_mm[2])
        ground.append([(x, y, z + t * k) for k in range(slot.z + 1)])   # Z = -height: lower is larger
    if len(seen) < settings.focal_art_min_faces:
        return None
    seen = np.asarray(seen)
    depth = max(len(c) for c in ground)
    pts = np.array([[c[min(k, len(c) - 1)] for c in ground] for k in range(depth)])   # (depth, n, 3)
    lo, hi = settings.focal_art_range
    ratios = np.exp(np.linspace(math.log(lo), math.log(hi), max(settings.focal_art_steps, 3)))
    f0 = float(pose.camera.K[0, 0])
    hub = settings.focal_art_huber_px
    real = np.array([[k < len(c) for c in ground] for k in range(depth)])        # (depth, n): heights that exist
    lo_pi, hi_pi = settings.focal_art_top_prior
    pis = np.linspace(float(np.clip(lo_pi, 0.01, 0.99)), float(np.clip(hi_pi, 0.01, 0.99)), 10)
    raised = real[1:].any(axis=0)
    loglik = np.empty(len(ratios))
    for k, r in enumerate(ratios):
        pf = pose_with_focal(pose, f0 * r)
        d = np.linalg.norm(project_points(pts.reshape(-1, 3), pf).reshape(depth, -1, 2) - seen, axis=2)
        loss = np.where(d < hub, 0.5 * d * d, hub * (d - 0.5 * hub)) / settings.focal_art_scatter_px2
        top = np.where(real, -loss, -np.inf).max(axis=0)                          # for a stable sum of exponentials
        like = np.where(real, np.exp(np.where(real, -loss, 0.0) - top), 0.0)      # (depth, n)
        own, below = like[0], like[1:].sum(axis=0)
        mix = np.where(raised, pis[:, None] * own + (1.0 - pis[:, None]) * below, own)
        loglik[k] = float((top + np.log(np.maximum(mix, 1e-300))).sum(axis=1).max())
    return f0 * _parabola_peak(ratios, loglik) * settings.focal_art_lengthen


def _parabola_peak(ratios: np.ndarray, score: np.ndarray) -> float:
    """The ratio of the best score, refined by a parabola through it and its
    neighbours on a log scale (the grid's end points as they are)."""
    k = int(score.argmax())
    r = float(ratios[k])
    if 0 < k < len(ratios) - 1:
        x = np.log(ratios[k - 1:k + 2])
        y = score[k - 1:k + 2]
        den = y[0] - 2 * y[1] + y[2]
        if den < 0:
            off = 0.5 * (y[0] - y[2]) / den
            r = float(np.exp(x[1] + np.clip(off, -1, 1) * 0.5 * (x[2] - x[0])))
    return r


def focal_from_faces(image_bgr: np.ndarray, variant: str, layout: Layout, spec, pose, classifier,
                     settings: ReconstructSettings = ReconstructSettings()):
    """Choose the focal length of a nearly overhead view by the faces themselves.

    Seen from straight above, the mat alone does not tell the focal length
    (the pose stage then assumes one, ``vision.pose``), but the tops of
    stacked tiles do: a wrong focal length puts the camera at the wrong
    distance, so the windows of raised slots drift off their faces (parallax
    ``h * r / D``).  First the faces are located by their print art and the
    focal length fitted to where they lie (:func:`focal_from_art`).  Where
    too few faces can be located (``settings.focal_art`` off, another tile
    set read through a profile, a blurred photo): for each candidate focal
    length of ``settings.focal_ratios`` the same mat homography gives a pose
    (:func:`pose_with_focal`); the raised slots' windows are classified and
    the candidate whose windows look most like faces (sum of the log-odds
    face : none, clipped to +-5) wins, refined by a parabola through its
    neighbours.  Layouts without raised slots keep the assumed focal length.

    Returns:
        The chosen ``MatPose``; its camera's ``source`` is ``"searched"``
        (the assumed one's, unchanged, for a layout with no raised slot).
    """
    from vision.crops import extract_patches
    from vision.pose import project_slot_faces

    raised = [i for i, s in enumerate(layout.slots) if s.z >= 1]
    if not raised:
        return pose
    if settings.focal_art:
        f = focal_from_art(image_bgr, variant, layout, spec, pose, classifier, settings)
        if f is not None:
            return pose_with_focal(pose, f, "searched")
    # the slots whose windows move most with the camera distance: high and far
    # from the image centre (parallax ~ height * radius / distance)
    centre = pose.camera.K[:2, 2]
    q0 = project_slot_faces([layout.slots[i] for i in raised], spec, pose).mean(axis=1)
    weight = np.array([layout.slots[i].z + 1 for i in raised]) * np.linalg.norm(q0 - centre, axis=1)
    sel = [layout.slots[raised[j]] for j in np.argsort(-weight)[:settings.focal_slots]]
    f0 = float(pose.camera.K[0, 0])
    ratios = np.asarray(settings.focal_ratios, np.float64)
    poses = [pose_with_focal(pose, f0 * r) for r in ratios]
    quads = np.concatenate([project_slot_faces(sel, spec, p) for p in poses])
    sc = classifier.scores(extract_patches(image_bgr, quads, classifier.crop), variant)
    lo = np.log(sc.face_probs.sum(axis=1) + 1e-3) - np.log(sc.p_none + 1e-3)
    score = np.clip(lo, -5.0, 5.0).reshape(len(ratios), len(sel)).sum(axis=1)
    return pose_with_focal(pose, f0 * _parabola_peak(ratios, score), "searched")


@dataclass(frozen=True)
class SlotReadings:
    """What the camera stages read at every slot of one photo, before any
    decision (:func:`read_slots`).

    Attributes:
        pose: the mat pose (``vision.pose.MatPose``), focal length searched
            when it had to be assumed.
        quads: ``(N, 4, 2) float32`` projected top faces, image px.
        patches: ``(N, 3, h, w) float32`` classifier input (``vision.crops``).
        scores: ``vision.faces.FaceScores`` of the patches.
        face_probs: ``(N, K)`` face probabilities used (the classifier's, or an
            enrolled profile's scaled by the classifier's face mass).
        in_view: ``(N,) bool`` the face lies inside the picture (margin
            ``settings.in_view_margin_px``).
        raw: ``(N, h, w, 3) uint8`` the patches before normalisation
            (:func:`vision.crops.extract_raw`).
    """

    pose: object
    quads: np.ndarray
    patches: np.ndarray
    scores: object
    face_probs: np.ndarray
    in_view: np.ndarray
    raw: np.ndarray | None = None


def read_slots(image_bgr: np.ndarray, variant: str, layout: Layout, camera=None, classifier=None, spec=None,
               settings: ReconstructSettings = ReconstructSettings(), face_reader=None,
               markers=None) -> SlotReadings:
    """The camera stages shared by :func:`recognize` and the referee
    (``vision.referee.read_board``): pose (with the focal search of
    :func:`focal_from_faces` when the pose had to assume a focal length),
    projected slot faces at their layer heights, patches, classifier, and
    optionally an enrolled profile's faces.  Arguments and errors as
    :func:`recognize`; ``markers``, a :class:`vision.pose.MarkerMemory`,
    lends the markers of a video's last frames that this one misses while
    the camera stands still (:func:`vision.pose.estimate_pose`)."""
    from vision.crops import extract_raw, normalise
    from vision.faces import TileClassifier
    from vision.mat import MatSpec
    from vision.pose import estimate_pose, project_slot_faces

    if isinstance(image_bgr, np.ndarray) and image_bgr.size and (image_bgr.ndim != 3 or image_bgr.shape[2] != 3):
        from companion.errors import BadInput
        # (the markers are found in grey or BGRA too; the tiles' crops are cut as BGR)
        raise BadInput(f"expected a (H, W, 3) uint8 BGR photo, not an array of shape {image_bgr.shape}")
    spec = spec or MatSpec.default()
    classifier = classifier or TileClassifier()
    pose = estimate_pose(image_bgr, spec, camera, memory=markers)
    if settings.focal_search and getattr(pose.camera, "source", "") == "assumed":
        searching = settings
        if markers is not None and markers.whole_deal and not markers.searched:
            # a video's first frame, the whole deal: every top stands
            searching = replace(settings, focal_art_top_prior=settings.focal_art_deal_prior)
        pose = focal_from_faces(image_bgr, variant, layout, spec, pose, classifier, searching)
        if markers is not None and pose.camera.source == "searched":
            pose = pose_with_focal(pose, markers.hold_searched(float(pose.camera.K[0, 0])), "searched")
    quads = np.asarray(project_slot_faces(layout.slots, spec, pose), np.float32)
    raw = extract_raw(image_bgr, quads, classifier.crop)
    patches = normalise(raw, classifier.crop)
    sc = classifier.scores(patches, variant)
    h, w = image_bgr.shape[:2]
    m = settings.in_view_margin_px
    in_view = ((quads[..., 0] >= m) & (quads[..., 0] <= w - 1 - m)
               & (quads[..., 1] >= m) & (quads[..., 1] <= h - 1 - m)).all(axis=1)
    fp = sc.face_probs
    if face_reader is not None:
        # the profile names the faces; how much face there is (presence) stays the classifier's
        pf = fp.sum(axis=1)
        cand = np.flatnonzero(pf > sc.p_none)
        fp = np.repeat(pf[:, None] / fp.shape[1], fp.shape[1], axis=1)   # (no face named unless asked)
        if len(cand):
            fp[cand] = face_reader.face_probs(image_bgr, quads[cand]) * pf[cand, None]
    return SlotReadings(pose, quads, patches, sc, fp, in_view, raw)


def recognize(image_bgr: np.ndarray, variant: str, layout: Layout, camera=None,
              classifier=None, spec=None, settings: ReconstructSettings = ReconstructSettings(),
              face_reader=None, presence=None, blank_classifier=None) -> Recognition:
    """Read the board of ``layout`` from one BGR photo of the mat.

    Args:
        image_bgr: ``(H, W, 3)`` uint8 BGR photo.
        variant: the tile set on the table (``companion.tiles.VARIANTS``).
        layout: the layout being played.
        camera: ``vision.pose.Camera`` or None (guessed from the image and mat).
        classifier: a :class:`vision.faces.TileClassifier` (the bundled model is
            opened when None; pass one to avoid reopening it per photo).
        spec: the mat (``vision.mat.MatSpec.default()`` when None).
        settings: decision thresholds.
        face_reader: optional :class:`vision.faces.ProfileFaceReader`: faces are
            then read with an enrolled profile (presence still from the model).
        presence: a :class:`vision.presence.PresenceModel` for the presence of
            stacked and partly hidden slots (:func:`vision.presence.candidates`);
            None opens the bundled one when ``models/presence.onnx`` exists,
            False does without (the face classifier alone decides).
        blank_classifier: a :class:`vision.faces.TileClassifier` trained on
            windows whose hidden part is blanked (``reads_blanked``), for a
            second read of the faces that taller tiles in front partly hide
            (:func:`reconstruct`'s ``blank_read``); None takes the bundled one
            (:func:`vision.faces.default_blank_classifier`) or ``classifier``
            itself when it reads blanked windows; False does without.  Not
            used (nor opened) with a ``face_reader``, nor where it has no
            classes for ``variant``: partly hidden faces are then read once.

    Returns:
        :class:`Recognition`.

    Raises:
        MatNotFound: no mat in the picture.
        BadInput: not an image, an unknown variant, or a model that does not
            cover the variant.
    """
    from companion.variants import find_variant
    from vision.mat import MatSpec

    spec = spec or MatSpec.default()
    if classifier is None:
        from vision.faces import TileClassifier
        classifier = TileClassifier()
    r = read_slots(image_bgr, variant, layout, camera, classifier, spec, settings, face_reader)
    pose, quads, sc, fp, in_view = r.pose, r.quads, r.scores, r.face_probs, r.in_view
    if presence is None:
        from vision.presence import default_presence_model
        presence = default_presence_model()

    height_budget = [settings.art_height_max]
    grey: list = []                       # the photo in grey, made once when an art comparison needs it

    def grey_photo() -> np.ndarray:
        if not grey:
            from vision.artcheck import grey_of
            grey.append(grey_of(image_bgr))
        return grey[0]

    def presence_of(idx: list[int]) -> np.ndarray:
        q = presence.slot_logits(image_bgr, [layout.slots[i] for i in idx], spec, pose)
        if settings.art_height_weight and face_reader is None:
            from vision.artcheck import height_evidence
            labels = sc.labels[:-2]
            unsure = [k for k, i in enumerate(idx) if layout.slots[i].z >= 1 and abs(q[k]) < settings.art_height_unsure
                      and fp[i].sum() > 0.2]
            for k in sorted(unsure, key=lambda k: abs(q[k]))[:max(0, height_budget[0])]:
                i = idx[k]
                q[k] += settings.art_height_weight * height_evidence(
                    grey_photo(), variant, layout.slots[i], labels[int(np.argmax(fp[i]))], spec, pose,
                    settings.art_min_score, art_scale_of())
                height_budget[0] -= 1
        if settings.art_size_weight and face_reader is None:
            from vision.artcheck import size_evidence
            labels = sc.labels[:-2]
            unsure = [k for k, i in enumerate(idx) if layout.slots[i].z >= 1 and abs(q[k]) < settings.art_size_unsure
                      and fp[i].sum() > 0.2]
            if unsure and settings.art_size_below_px < float("inf"):
                from vision.pose import project_slot_faces
                asked = [layout.slots[idx[k]] for k in unsure]
                lower = project_slot_faces([(x, y, z - 1) for x, y, z in asked], spec, pose)
                shift = np.abs(quads[[idx[k] for k in unsure]] - lower).max(axis=(1, 2))
                unsure = [k for k, d in zip(unsure, shift) if d < settings.art_size_below_px]
            for k in sorted(unsure, key=lambda k: abs(q[k]))[:max(0, settings.art_size_max)]:
                i = idx[k]
                q[k] += settings.art_size_weight * size_evidence(
                    grey_photo(), variant, layout.slots[i], labels[int(np.argmax(fp[i]))], spec, pose,
                    art_scale_of(), settings.art_size_min_score)
        if settings.art_parallax_weight and face_reader is None:
            from vision.artcheck import parallax_evidence
            labels = sc.labels[:-2]
            raised = [k for k, i in enumerate(idx) if layout.slots[i].z >= 1 and fp[i].sum() > 0.5]
            sigma = settings.art_parallax_sigma_mm
            if raised and settings.placement_faces:
                sigma = placement_sigma()
            ratio = art_scale_of() if raised else 1.0
            scale = (settings.art_parallax_sigma_mm / sigma) ** 2
            unsure, clip = settings.art_parallax_unsure * scale, settings.art_parallax_clip * scale
            min_corr = (settings.art_min_score if scale == 1.0
                        else max(settings.art_min_score, settings.placement_min_corr))
            for k in raised:
                i = idx[k]
                if abs(q[k]) < unsure:
                    e = parallax_evidence(grey_photo(), variant, layout.slots[i], labels[int(np.argmax(fp[i]))],
                                          spec, pose, sigma, min_corr, ratio)
                    q[k] += settings.art_parallax_weight * float(np.clip(e, -clip, clip))
        return q

    fitted: list = []

    def art_fit() -> ArtFit:
        """This photo's faces' size against their art and the tiles' spread
        about their slots, read once, when an art comparison first needs them."""
        if not fitted:
            fitted.append(photo_art_fit(grey_photo(), variant, layout, fp, sc.labels[:-2], in_view, spec, pose,
                                        settings, placement=bool(settings.placement_faces)
                                        and pose.tilt_deg < settings.placement_below_tilt_deg))
        return fitted[0]

    def art_scale_of() -> float:
        """How large this photo's faces look against their print art (1.0
        where too few sure faces on layer 0 were located)."""
        found = art_fit().scale if settings.art_scale else None
        return 1.0 if found is None else found

    def placement_sigma() -> float:
        """The parallax evidence's spread of a face about its slot, mm, from
        how far this photo's surest faces on layer 0 lie off their slots."""
        if (not settings.placement_faces or pose.tilt_deg >= settings.placement_below_tilt_deg
                or art_fit().spread_mm is None):
            return settings.art_parallax_sigma_mm
        return min(settings.art_parallax_sigma_mm,
                   max(settings.placement_floor_mm, settings.placement_gain * art_fit().spread_mm))

    def face_check(idx: list[int], standing: list[bool]) -> np.ndarray:
        """Unsure faces against their art, at the photo's scale where the
        stacks' evidence has read it (a flat board is not sized for this)."""
        from vision.artcheck import check_faces
        slots = layout.slots
        occluders = [[slots[j] for j in range(len(slots)) if standing[j] and slots[j].z > slots[i].z] for i in idx]
        return check_faces(grey_photo(), variant, [slots[i] for i in idx], fp[idx], sc.labels[:-2], spec, pose,
                           settings.art_check_weight, settings.art_check_candidates, occluders,
                           min_score=settings.art_min_score, scale=art_scale_of() if fitted else 1.0)

    def blank_read(idx: list[int], standing: list[bool]):
        """The windows of slots ``idx`` read again with the part that the
        standing tiles of higher layers hide blanked; with a profile that
        has templates, its faces compared on the part in sight only (the
        blanked read, or the first one without it, still says how much face
        there is)."""
        from vision.crops import blank_hidden, extract_raw, normalise
        slots = layout.slots
        above = [s for s, up in zip(slots, standing) if up]
        if blanker is not None:
            masks = window_hidden_masks([slots[i] for i in idx], above, pose.camera_centre_mm, spec, blanker.crop)
            raw = r.raw[idx] if blanker.crop == classifier.crop else extract_raw(image_bgr, quads[idx], blanker.crop)
            raw = blank_hidden(raw, masks)
            again = blanker.scores(normalise(raw, blanker.crop), variant)
            bfp, bpn, bpo = again.face_probs, again.p_none, again.p_occluded
        else:
            bfp, bpn, bpo = sc.face_probs[idx], sc.p_none[idx], sc.p_occluded[idx]
        if masked_reader is not None:
            masks = window_hidden_masks([slots[i] for i in idx], above, pose.camera_centre_mm, spec,
                                        masked_reader.window)
            bfp = masked_reader.masked_face_probs(image_bgr, quads[idx], masks) \
                * np.asarray(bfp, np.float64).sum(axis=1, keepdims=True)
        return bfp, bpn, bpo

    blanker = None
    # a profile with templates reads partly hidden faces again on their part in sight
    masked_reader = face_reader if getattr(face_reader, "reads_hidden", False) else None
    if (face_reader is None or masked_reader is not None) and blank_classifier is not False:
        if blank_classifier is None:
            from vision.faces import default_blank_classifier
            blank_classifier = classifier if classifier.reads_blanked else default_blank_classifier()
        if blank_classifier and blank_classifier.reads_blanked and variant in blank_classifier.variants:
            blanker = blank_classifier        # (one without this variant's faces: partly hidden faces read once)

    states = reconstruct(layout, variant, fp, sc.p_none, sc.p_occluded, in_view, settings,
                         camera_mm=pose.camera_centre_mm, spec=spec,
                         presence_logit=presence_of if presence else None,
                         removes_in_pairs=find_variant(variant).removes_in_pairs,
                         face_check=face_check if face_reader is None else None,
                         blank_read=blank_read if blanker is not None or masked_reader is not None else None,
                         only_free_left=True)
    if len(layout.slots) and median_face_px(r.quads) < UNREADABLE_FACE_PX:
        # (faces a few pixels wide: no reading is sure, whatever the models
        # say; a break-test's 320 x 180 thumbnail read 26 slots wrong, 17 of
        # them at 0.7 or more)
        states = [replace(t, confidence=min(t.confidence, UNREADABLE_CONFIDENCE)) for t in states]
    shown = [t for t in states if t.seen == "face"]
    # (most faces unsure: another tile set's, the advice below says; its
    # faces read as hidden are no sign of a hand)
    covered = foreign_cover(layout, states, pose, spec, in_view) \
        if sum(t.confidence < UNSURE_BELOW for t in shown) <= len(shown) / 2 else []
    if len(covered) >= FOREIGN_COVER_MIN:
        states = doubt_near_cover(layout, states, covered)
    stray, offset, beside = 0, None, (0, None)
    if sum(t.present for t in states) < STRAY_CHECK_BELOW * len(states) or len(covered) >= FOREIGN_COVER_MIN:
        # (slots read hidden with nothing in front: a hand, or a layout one
        # tile off the board, whose edge slots then fall beside the tiles)
        stray = stray_tiles(image_bgr, variant, layout, spec, pose, classifier)
        if face_reader is None:
            offset = half_tile_offset(image_bgr, variant, layout, spec, pose, classifier)
    elif face_reader is None:
        # (a board a tile or more off the layout leaves one side's edge slots
        # bare and stands past the opposite side: only those cells are read)
        beside = far_side_tiles(image_bgr, variant, layout, states, spec, pose, classifier)
    asked: list[str | None] = []

    def looks_like() -> str | None:
        """The other tile set most of the shown faces look like, if any
        (:meth:`vision.faces.TileClassifier.variant_votes`)."""
        shown = [i for i, t in enumerate(states) if t.seen == "face"]
        if face_reader is not None or r.patches is None or not shown:
            return None
        votes = classifier.variant_votes(np.asarray(r.patches)[shown])
        other = max(votes, key=votes.get) if votes else None
        asked.append(other if other is not None and other != variant and votes[other] > len(shown) / 2 else None)
        return asked[-1]

    advice = photo_advice(layout, states, spec, pose, stray, looks_like, is_colourless(image_bgr),
                          exposure(image_bgr, quads), len(covered) if len(covered) >= FOREIGN_COVER_MIN else 0,
                          offset=offset, beside=beside)
    return Recognition(variant, layout, tuple(states), quads, pose, advice, asked[-1] if asked else None)


@dataclass(frozen=True)
class ArtFit:
    """What this photo's surest faces on layer 0 say about all its faces
    (:func:`photo_art_fit`).

    Attributes:
        scale: the faces' size against their print art (median ratio), or
            None where too few faces were located.
        spread_mm: how far the tiles lie off their slots, mm per axis, or None.
        faces: how many faces were located.
    """

    scale: float | None
    spread_mm: float | None
    faces: int


def photo_art_fit(grey: np.ndarray, variant: str, layout: Layout, face_probs: np.ndarray, labels, in_view,
                  spec, pose, settings: ReconstructSettings = ReconstructSettings(),
                  placement: bool = True) -> ArtFit:
    """How large this photo's faces look against their print art, and how
    far the tiles lie off their slots.

    Up to ``settings.placement_faces`` faces on layer 0 with no slot of the
    layout above them (so surely at that height), read with at least
    ``settings.placement_face_min`` probability and spread over the mat
    (:func:`_spread_order`), are sized and located by their print art
    (:func:`vision.artcheck.face_scale`, best correlation at least
    ``settings.art_scale_min_score`` to be sized; then, where the spread
    needs more, :func:`vision.artcheck.face_offset` at the scale found;
    at least ``settings.placement_min_score`` to be located).

    * The scale is the median of their size ratios.  It holds what differs
      between the art and the table (faces printed a little small, as a
      printer's "fit to page" does, another renderer's faces) and the pose's
      own error of scale, which a raised face shares; the height evidence
      and the parallax evidence cut their windows by it.  The first
      ``settings.art_scale_probe`` faces sized decide whether to size more
      (up to ``settings.art_scale_faces``, tried on at most twice as many):
      a median within ``settings.art_scale_tolerance`` of 1 gives 1.
    * The spread: their offsets from the slots' centres, taken as a 2-D
      Gaussian, give ``sigma = sqrt(median(|o|^2) / ln 4)`` (the median of a
      chi-square of 2 degrees is ``2 ln 2``).  The offsets hold the pose's
      own error at the mat's plane as well as the placement.

    Args:
        grey: ``(H, W)`` uint8 grey photo.
        variant, layout: the tile set and layout.
        face_probs: ``(N, K)`` the classifier's face probabilities, ``labels``
            their face ids; in_view: ``(N,)`` bool.
        spec, pose: the mat and its pose.
        settings: the numbers above.
        placement: read the spread too (up to ``settings.placement_faces``
            faces located, those sized first).

    Returns:
        :class:`ArtFit`, with None for either where fewer than
        ``settings.placement_min_faces`` faces were sized or located
        (``settings.art_scale`` False: no scale).
    """
    from vision.artcheck import face_offset, face_scale
    fp = np.asarray(face_probs)
    covered = geometry_of(layout).covered_by
    n_sized = settings.art_scale_faces if settings.art_scale else 0
    n_probe = min(settings.art_scale_probe, n_sized)
    n_placed = settings.placement_faces if placement else 0
    ratios, offsets = [], []
    tries = 0                   # faces sized, found or not: a blurred photo finds few
    enough = max(1, settings.placement_min_faces)     # (a median needs one value at least)
    for i in _spread_order(len(layout.slots)):
        if len(ratios) >= n_sized and len(offsets) >= n_placed:
            break
        s = layout.slots[i]
        if s.z != 0 or covered[i] or not in_view[i] or fp[i].max() < settings.placement_face_min:
            continue
        face = labels[int(np.argmax(fp[i]))]
        if n_probe and len(ratios) == n_probe and abs(float(np.median(ratios)) - 1.0) < settings.art_scale_tolerance:
            n_sized = n_probe     # as large as the art, near enough: no more faces to size
        if len(ratios) < n_sized and tries < 2 * n_sized:
            tries += 1
            ratio, score, dx, dy = face_scale(grey, variant, s, face, spec, pose)
            if score >= settings.art_scale_min_score:
                ratios.append(ratio)
        elif len(offsets) >= n_placed:
            break
        else:
            found = float(np.median(ratios)) if ratios and len(ratios) >= min(enough, n_sized) else 1.0
            dx, dy, score = face_offset(grey, variant, s, face, spec, pose, scale=found)
        if score >= settings.placement_min_score and len(offsets) < n_placed:
            offsets.append(dx * dx + dy * dy)
    scale = float(np.median(ratios)) if ratios and len(ratios) >= min(enough, n_sized) else None
    if scale is not None and abs(scale - 1.0) < settings.art_scale_tolerance:
        scale = 1.0
    return ArtFit(scale,
                  math.sqrt(float(np.median(offsets)) / math.log(4.0)) if len(offsets) >= enough else None,
                  max(len(ratios), len(offsets)))


def placement_spread(grey: np.ndarray, variant: str, layout: Layout, face_probs: np.ndarray, labels, in_view,
                     spec, pose, settings: ReconstructSettings = ReconstructSettings()) -> float | None:
    """How far tiles lie off their slots in this photo, mm per axis
    (:func:`photo_art_fit`'s spread), or None where too few faces were
    located."""
    return photo_art_fit(grey, variant, layout, face_probs, labels, in_view, spec, pose,
                         dataclasses.replace(settings, art_scale=False)).spread_mm


#: a stack whose two heights land closer than this share of its face's width
#: apart in the photo is hard to judge: on the bench's 1280 x 720 photos
#: (faces 14-52 px wide, median 32; ``bench/bench_recognize.py``, session 5) 6.8 % of
#: the raised slots with under 3 px of parallax are misjudged, against 0.8 %
#: from 6 px up
LOW_PARALLAX = 0.075
#: faces narrower than this in the picture (median over the layout's slots,
#: px along the 30 mm edge) earn advice to bring the camera closer.  On
#: development photos 1000-1359, visible faces under 18 px wide were misread
#: 6.0 % of the time against 1.3-2.1 % from 18 to 40 px and 0.4 % from 50 px;
#: photos whose median face is under 25 px were entirely right 35 % of the
#: time, against 52 % at 25-40 px and 63 % above.
LOW_FACE_PX = 24.0
#: faces narrower than this (median, px) cannot be read: every reading's
#: confidence is capped at :data:`UNREADABLE_CONFIDENCE`, so each face is
#: marked unsure, and the advice says so first.  The narrowest faces of the
#: bench's 200 photos are 14.2 px wide (median of the photo's slots, photo
#: 88; the next 16.9; session 59).  A break-test's renders read 58 of 60
#: faces right at 8.5 px, 26 of 62 at 9.8 px, and a 320 x 180 thumbnail's
#: 5 px faces 26 slots wrong, 17 of them at 0.7 or more: resolution alone
#: does not tell, so only faces this small are held unreadable.
UNREADABLE_FACE_PX = 7.0
UNREADABLE_CONFIDENCE = 0.5


def median_face_px(quads) -> float:
    """The median width (px) of the projected top faces ``quads``
    ``(N, 4, 2)``, corners in OpenCV's order (top-left, top-right, ...); inf
    for none."""
    q = np.asarray(quads, np.float64).reshape(-1, 4, 2)
    if not len(q):
        return math.inf
    return float(np.median(np.linalg.norm(q[:, 1] - q[:, 0], axis=1)))
#: the margin round a face (a share of its size on every side) that the
#: face classifier's window holds (``vision.crops``' context margin, 10 %):
#: a face whose window runs off the picture is read as hidden
#: (:func:`photo_advice` counts it with the slots outside the picture)
EDGE_WINDOW_MARGIN = 0.1
#: the contract's tile, mm (width, height, thickness): ../shared/CONTRACT.md,
#: "Physical standard"; a mat file may give another (``tile_mm``)
STANDARD_TILE_MM = (30.0, 40.0, 20.0)
#: a read with fewer tiles present than this share of the layout's slots is
#: checked for tiles standing where the layout has no slot
#: (:func:`stray_tiles`: a wrong ``--layout``), and so is one with slots read
#: hidden with no taller tile in front (:func:`foreign_cover`): bench-style
#: photos of the built-in Turtle read with KMahjongg's ``default.layout``
#: (the same Turtle one tile to the left) read 67-116 of 144 tiles present,
#: 6 of 8 with such slots and 2-7 faces off the layout's slots, and were
#: advised only on a hand over the board (session 38)
STRAY_CHECK_BELOW = 0.4
#: this many faces read on cells without a slot earn the advice
STRAY_MIN = 3
#: a focal length estimated from a view tilted less than this (degrees) is
#: advised against as guessed (see :func:`photo_advice`)
FOCAL_ADVICE_TILT_DEG = 6.0


def unsure_slots(states, below: float = UNSURE_BELOW) -> list[int]:
    """Slots whose reading a referee should check by eye.

    A slot is unsure when its top face was read (``seen == "face"``) with a
    confidence under ``below`` (a face between look-alikes, a stack whose top
    tile may be gone), or when it was judged empty with a confidence under
    ``below`` and the photo can hide a tile there (a presence candidate,
    :func:`vision.presence.candidates`: a raised slot, or one beside a taller
    slot).  Slots under a present tile ("covered") are left out (the tile on
    top stands for its stack), and so are slots already reported as unseen
    ("occluded": face null).  On development photos 1000-1199, of the empty
    readings under 0.7, 44 of 103 on candidate slots were wrong, against 4
    of 46 elsewhere (a cleared flat mat drew a badge on most cells).

    Args:
        states: the :class:`SlotState` of every slot, in layout order.
        below: confidence threshold, 0-1 (:data:`UNSURE_BELOW`).

    Returns:
        Indices into ``states``, ascending.
    """
    from vision.presence import candidates

    hideable = candidates([t.slot for t in states])
    return [i for i, t in enumerate(states) if t.confidence < below
            and (t.seen == "face" or (t.seen == "empty" and hideable[i]))]


def slots_to_check(states, geometry: Geometry, below: float = UNSURE_BELOW) -> list[int]:
    """Every slot the overlay (:func:`vision.overlay.draw_overlay`) asks a
    referee to check by eye: the unsure readings (:func:`unsure_slots`, a
    badge), the tiles whose face went unseen (``seen == "occluded"``, a dashed
    outline and ``?``), and the slots under any of them (a mark on the top
    tile stands for its stack).

    Args:
        states: the :class:`SlotState` of every slot, in layout order.
        geometry: ``companion.rules.Geometry`` of the layout.
        below: confidence threshold (:data:`UNSURE_BELOW`).

    Returns:
        Indices into ``states``, ascending.
    """
    marked = set(unsure_slots(states, below)) | {i for i, t in enumerate(states) if t.seen == "occluded"}
    stack = list(marked)
    while stack:
        for j in geometry.covers[stack.pop()]:
            if j not in marked:
                marked.add(j)
                stack.append(j)
    return sorted(marked)


def _edge_slots(layout: Layout, dx: int, dy: int) -> list[int]:
    """Indices of the layout's layer-0 slots on its edge towards ``(dx,
    dy)`` (two half-units one way): no slot of the layout stands there
    within a tile's width (the pinch neighbour of ../shared/CONTRACT.md,
    "Free", for a left or right edge)."""
    at = {(s.x, s.y) for s in layout.slots}

    def has(x: int, y: int) -> bool:
        if dx:
            return any((x + dx, y + d) in at for d in (-1, 0, 1))
        return any((x + d, y + dy) in at for d in (-1, 0, 1))

    return [i for i, s in enumerate(layout.slots) if s.z == 0 and not has(s.x, s.y)]


#: the four sides of a layout, as steps of one tile (half-units)
SIDES = ((-2, 0), (2, 0), (0, -2), (0, 2))


def bare_sides(layout: Layout, states) -> list[tuple[int, int]]:
    """The sides of the board that read bare: every layer-0 slot on the
    layout's left (or right, top, bottom) edge (:func:`_edge_slots`), at
    least two of them, read without a tile.

    A board read with a layout a tile or more off it (a wrong ``--layout``
    or ``--mat``) shows this on the side it moved away from; so does a game
    whose edge tiles have all gone (16 of 64 development photos, session
    59), which then pays for the look of :func:`far_side_tiles`.

    Args:
        layout: the layout read.
        states: one :class:`SlotState` per slot, in layout order.

    Returns:
        The bare sides as one-tile steps ``(dx, dy)`` of :data:`SIDES`.
    """
    out = []
    for dx, dy in SIDES:
        edge = _edge_slots(layout, dx, dy)
        if len(edge) >= 2 and not any(states[i].present for i in edge):
            out.append((dx, dy))
    return out


def empty_side(layout: Layout, states) -> bool:
    """Whether some side of the board reads bare (:func:`bare_sides`)."""
    return bool(bare_sides(layout, states))


def far_side_tiles(image_bgr: np.ndarray, variant: str, layout: Layout, states, spec, pose,
                   classifier) -> tuple[int, tuple[int, int] | None]:
    """Faces standing one tile beyond the side opposite a bare side
    (:func:`bare_sides`), where a board laid a tile off its layout has its
    far edge: for each bare side, the cells one tile past each slot of the
    opposite edge (those no slot of the layout overlaps) are read by the
    face classifier at the height of a tile on the mat, a window counting
    as in :func:`stray_tiles`; the most faces over the bare sides.

    Only those cells: claimed tiles set aside on the mat beside a board
    whose side was cleared (the room a Turtle leaves) stood on cells beside
    the board and made the advice say "check --layout" on 5 of 14 boards
    read right (a break-test, session 59, of a first form that read every
    cell next to the layout).

    Args:
        image_bgr: ``(H, W, 3)`` uint8 BGR photo.
        variant: the tile set; layout: the layout read; states: its
            :class:`SlotState` per slot.
        spec: ``vision.mat.MatSpec``; pose: ``vision.pose.MatPose``.
        classifier: ``vision.faces.TileClassifier``.

    Returns:
        ``(faces, side)``: the most such cells read as holding a face over
        the bare sides, and that bare side (``(0, None)`` without one).
    """
    from companion.layouts import MAT_HALF_UNITS

    sides = bare_sides(layout, states)
    if not sides:
        return 0, None
    foot = np.zeros((MAT_HALF_UNITS[1] + 4, MAT_HALF_UNITS[0] + 4), bool)
    for sl in layout.slots:
        foot[max(0, sl.y):sl.y + 2, max(0, sl.x):sl.x + 2] = True
    best, bare = 0, None
    for dx, dy in sides:
        spots = []
        for i in _edge_slots(layout, -dx, -dy):
            x, y = layout.slots[i].x - dx, layout.slots[i].y - dy
            if 0 <= x <= MAT_HALF_UNITS[0] - 2 and 0 <= y <= MAT_HALF_UNITS[1] - 2 and not foot[y:y + 2, x:x + 2].any():
                spots.append((x, y, 0))
        if len(spots) < STRAY_MIN:
            continue
        n = sure_faces(image_bgr, variant, spots, spec, pose, classifier)
        if n > best:
            best, bare = n, (dx, dy)
    return best, bare


def stray_tiles(image_bgr: np.ndarray, variant: str, layout: Layout, spec, pose, classifier,
                max_windows: int = 256) -> int:
    """How many tiles seem to stand where ``layout`` has no slot.

    Windows at the positions of the mat's half-tile grid
    (:data:`companion.layouts.MAT_HALF_UNITS`) whose tile footprint no slot
    of the layout overlaps, at the height of a tile standing on the mat, at
    most ``max_windows`` of them (a fixed, seeded spread), are read by the
    face classifier; a window counts when its face probabilities sum to 0.9
    or more and one face holds 80 % of that.  A board read with the wrong
    ``--layout`` has tiles there.  (Windows overlapping the layout's slots,
    half a tile off or a layer up, were tried: 22 of 199 development
    photos read with their own layout then had 3 or more.)

    Args:
        image_bgr: ``(H, W, 3)`` uint8 BGR photo.
        variant: the tile set.
        layout: the layout the photo was read with.
        spec: ``vision.mat.MatSpec``; pose: ``vision.pose.MatPose``.
        classifier: ``vision.faces.TileClassifier``.
        max_windows: at most this many windows are read (a layout leaves up
            to about 240; about 12 ms for those).

    Returns:
        The number of windows read as holding a face.
    """
    from companion.layouts import MAT_HALF_UNITS

    foot = np.zeros((MAT_HALF_UNITS[1] + 4, MAT_HALF_UNITS[0] + 4), bool)   # half-units any slot covers
    for s in layout.slots:
        foot[max(0, s.y):s.y + 2, max(0, s.x):s.x + 2] = True
    spots = [(x, y, 0) for y in range(MAT_HALF_UNITS[1] - 1) for x in range(MAT_HALF_UNITS[0] - 1)
             if not foot[y:y + 2, x:x + 2].any()]
    if not spots:
        return 0
    order = _spread_order(len(spots))[:max_windows]
    return sure_faces(image_bgr, variant, [spots[k] for k in order], spec, pose, classifier)


def sure_faces(image_bgr: np.ndarray, variant: str, spots, spec, pose, classifier) -> int:
    """How many of the windows at ``spots`` (``(x, y, z)`` slots, each at its
    own layer's height) that lie wholly inside the picture the face
    classifier reads as a face surely: face probabilities summing to 0.9 or
    more, one face holding 80 % of that (:func:`stray_tiles`,
    :func:`far_side_tiles`, :func:`half_tile_offset`).

    Args:
        image_bgr: ``(H, W, 3)`` uint8 BGR photo; variant: the tile set.
        spots: slots, in half-units and layers.
        spec: ``vision.mat.MatSpec``; pose: ``vision.pose.MatPose``.
        classifier: ``vision.faces.TileClassifier``.
    """
    from vision.crops import extract_patches
    from vision.pose import project_slot_faces

    if not len(spots):
        return 0
    quads = np.asarray(project_slot_faces(spots, spec, pose), np.float32)
    h, w = image_bgr.shape[:2]
    inside = ((quads[..., 0] >= 0) & (quads[..., 0] <= w - 1) & (quads[..., 1] >= 0)
              & (quads[..., 1] <= h - 1)).all(axis=1)
    if not inside.any():
        return 0
    sc = classifier.scores(extract_patches(image_bgr, quads[inside], classifier.crop), variant)
    pf = sc.face_probs.sum(axis=1)
    return int(((pf >= 0.9) & (sc.face_probs.max(axis=1) >= 0.8 * pf)).sum())


#: half-tile moves of the whole layout tried by :func:`half_tile_offset`
#: (half-units: x right, y towards the players) and how the advice names them
HALF_TILE_MOVES = {(-1, 0): "left or right", (1, 0): "left or right",
                   (0, -1): "up or down the mat", (0, 1): "up or down the mat"}
#: (a layout's rows repeat every tile, so a board half a tile to the left
#: also reads at the slots moved half a tile right: 5 of 25 development
#: reads found the other way; the advice names the axis only)
#: :func:`half_tile_offset`: a move is advised on when it reads at least
#: this many sure faces, and at least :data:`OFFSET_RATIO` times those read
#: on the layout's own slots
OFFSET_MIN_FACES = 8
OFFSET_RATIO = 2.0


def half_tile_offset(image_bgr: np.ndarray, variant: str, layout: Layout, spec, pose, classifier,
                     max_slots: int = 64) -> tuple[tuple[int, int], int, int] | None:
    """Whether the board stands half a tile off ``layout``'s slots.

    The layout's top slots (those no slot of it covers), at most
    ``max_slots`` of them (a fixed, seeded spread), are read by the face
    classifier where they are and with the whole layout moved half a tile
    each way (:data:`HALF_TILE_MOVES`), each at its own layer's height; a
    window counts as a sure face as in :func:`stray_tiles`.  A board laid a
    half-unit off the layout (the mat prints every half-unit cell, so a row
    begun one cell too high is an easy slip) shows its faces at one of the
    moves and between faces at the slots themselves: a break-test's full
    Pagoda of Peace a row higher read 28 of 144 slots standing, and only
    the small faces were advised on.

    Args:
        image_bgr: ``(H, W, 3)`` uint8 BGR photo.
        variant: the tile set.
        layout: the layout read.
        spec: ``vision.mat.MatSpec``; pose: ``vision.pose.MatPose``.
        classifier: ``vision.faces.TileClassifier``.
        max_slots: at most this many slots are read at each place.

    Returns:
        ``((dx, dy), faces_moved, faces_in_place)`` for the move that reads
        the most sure faces, when it reads :data:`OFFSET_MIN_FACES` or more
        and :data:`OFFSET_RATIO` times those in place; else None.
    """

    g = geometry_of(layout)
    tops = [s for s, above in zip(layout.slots, g.covered_by) if not above]
    if not tops:
        return None
    tops = [tops[k] for k in _spread_order(len(tops))[:max_slots]]
    h, w = image_bgr.shape[:2]

    def sure(dx: int, dy: int) -> int:
        return sure_faces(image_bgr, variant, [(s.x + dx, s.y + dy, s.z) for s in tops], spec, pose, classifier)

    here = sure(0, 0)
    best, n = max(((move, sure(*move)) for move in HALF_TILE_MOVES), key=lambda m: m[1])
    if n >= OFFSET_MIN_FACES and n >= OFFSET_RATIO * here:
        return best, n, here
    return None


@functools.lru_cache(maxsize=8)
def _spread_order(n: int) -> np.ndarray:
    """A fixed order of ``n`` items (seeded permutation), so a sample of the
    first few covers the mat without a stride's aliasing against the tile
    pitch."""
    return np.random.default_rng(0).permutation(n)


#: how the advice on a picture without colour (:func:`is_colourless`) starts.
#: On grey copies of bench photos 0-7, 88.4 % of the faces read right
#: against 99.6 % in colour (session 37): the camera referee refuses such a
#: recording rather than score a game on it.
NO_COLOUR_ADVICE = "the photo has no colour (black and white)"


def is_colourless(image_bgr: np.ndarray, spread: float = 4.0) -> bool:
    """Whether a picture holds no colour: grey, or three channels that differ
    by under ``spread`` grey levels at 99 % of its pixels, every 8th row and
    column sampled (a black-and-white photo saved as colour, JPEG's own
    colour noise included).

    Args:
        image_bgr: (H, W) or (H, W, 3) uint8 picture.
        spread: grey levels (0-255).
    """
    import cv2

    img = np.asarray(image_bgr)
    if img.ndim == 2 or (img.ndim == 3 and img.shape[2] == 1):
        return True
    sub = np.ascontiguousarray(img[::8, ::8, :3])    # every 64th pixel: a colour photo has colour all over
    if sub.size == 0 or sub.dtype != np.uint8:
        return False
    b, g, r = cv2.split(sub)
    wide = cv2.subtract(cv2.max(cv2.max(b, g), r), cv2.min(cv2.min(b, g), r))     # (h, w) uint8 spread
    return cv2.countNonZero((wide >= spread).astype(np.uint8)) < 0.01 * wide.size


#: a board whose brightest 1 % (the largest of the three channels, every
#: other pixel of the box round the slots' faces) stays under this is too
#: dark to read (the bench's 200 photos: 210 or more; a break-test's photos
#: at 5-15 % of their light: 12-30; at 30 %, still read without a mistake,
#: about 75)
DARK_BELOW = 50
#: a board box more than this share of whose pixels are pure white (every
#: channel 250 or more) is over-exposed (a break-test's photo at 2.5 times
#: its light: 0.87; the bench's photos: 0.68 at most, its washed-out photo
#: 109, whose white tile bodies melt into the mat, and under 0.51 for the rest)
BRIGHT_ABOVE = 0.6
#: ... and the picture's mean level (0-255, all channels) at least this for
#: the over-exposure hint of :func:`exposure_hint`
BRIGHT_MEAN = 160


def exposure(image_bgr: np.ndarray, quads: np.ndarray | None = None) -> str | None:
    """``"dark"``, ``"bright"`` (over-exposed) or None, measured on the box
    round the slots' faces (``quads``; the whole picture without them):
    the brightest 1 % (largest channel) under :data:`DARK_BELOW`, or more
    than :data:`BRIGHT_ABOVE` of the pixels pure white.  The board, not
    the table: a white table filled half of two bench photos at full light
    while their boards read well.

    Args:
        image_bgr: (H, W) or (H, W, 3) uint8 picture.
        quads: ``(N, 4, 2)`` px, the slots' faces (``Recognition.quads``).
    """
    img = np.asarray(image_bgr)
    if img.dtype != np.uint8 or img.size == 0 or img.ndim not in (2, 3):
        return None
    h, w = img.shape[:2]
    y0, y1, x0, x1 = 0, h, 0, w
    if quads is not None and np.size(quads):
        q = np.asarray(quads, np.float64).reshape(-1, 2)
        q = q[np.isfinite(q).all(axis=1)]
        if len(q):
            x0, y0 = (int(max(0, np.floor(v))) for v in q.min(axis=0))
            x1, y1 = int(min(w, np.ceil(q[:, 0].max()) + 1)), int(min(h, np.ceil(q[:, 1].max()) + 1))
    sub = img[y0:y1:2, x0:x1:2]
    if sub.size == 0:
        return None
    top = sub if sub.ndim == 2 else sub[..., :3].max(axis=2)
    low = sub if sub.ndim == 2 else sub[..., :3].min(axis=2)
    if float(np.percentile(top, 99)) < DARK_BELOW:
        return "dark"
    if float(np.mean(low >= 250)) > BRIGHT_ABOVE:
        return "bright"
    return None


#: slots read hidden with no taller tile in front of them that show
#: something lying over the board (a hand), or faces too washed out or
#: blurred to read: on the bench's generator 2 to 48 in each of 40 photos
#: with a hand over the board; of its 200 photos without hands, 0 but in
#: the three whose faces are washed out or blurred (109, 113, 136: 9-24)
#: (session 35)
FOREIGN_COVER_MIN = 2
#: empty readings within this many half-units (x and y) of such a slot are
#: doubted (a hand's palm hides more than the slots it is seen over)
FOREIGN_COVER_REACH = 4
#: the confidence at most of a doubted empty reading (under ``UNSURE_BELOW``:
#: marked for a look)
FOREIGN_COVER_CONF = 0.5


def foreign_cover(layout: Layout, states, pose, spec, in_view=None) -> list[int]:
    """Slots read hidden ("occluded") in the picture whose face no taller
    standing tile hides from the camera (:func:`hidden_fraction` under 0.3)
    and which lie in the picture: something not a tile lies over them, most
    often a hand.

    Args:
        states: one :class:`SlotState` per slot (the board's decisions).
        pose: ``vision.pose.MatPose``.
        in_view: ``(N,)`` bool, slots inside the picture (None: all).
    Returns:
        their indices, ascending.
    """
    slots = layout.slots
    occ = [i for i, t in enumerate(states) if t.seen == "occluded" and (in_view is None or in_view[i])]
    if not occ:
        return []
    standing = [s for s, t in zip(slots, states) if t.present]
    out = []
    for z in sorted({slots[i].z for i in occ}):          # one call a layer: the same tiles above
        here = [i for i in occ if slots[i].z == z]
        above = [o for o in standing if o.z > z]
        hid = hidden_fraction([slots[i] for i in here], above, pose.camera_centre_mm, spec) if above \
            else np.zeros(len(here))
        out += [i for i, h in zip(here, hid) if h < 0.3]
    return sorted(out)


def doubt_near_cover(layout: Layout, states, covered: list[int], reach: int = FOREIGN_COVER_REACH,
                     conf: float = FOREIGN_COVER_CONF) -> list:
    """``states`` with the empty readings near something lying over the
    board (``covered``, :func:`foreign_cover`) made unsure: confidence at
    most ``conf``, so that they are marked for a look rather than reported
    gone for sure (a hand over the board read 209 of 802 standing tiles
    under it empty, some at 0.99, on 40 photos of the bench's generator).
    Nothing else changes."""
    import dataclasses
    slots = layout.slots
    near = set()
    for c in covered:
        sc = slots[c]
        for i, s in enumerate(slots):
            if abs(s.x - sc.x) <= reach and abs(s.y - sc.y) <= reach:
                near.add(i)
    return [dataclasses.replace(t, confidence=min(t.confidence, conf))
            if i in near and not t.present and t.seen == "empty" else t for i, t in enumerate(states)]


def missing_mat_hint(image_bgr: np.ndarray, spec, camera=None) -> str:
    """What a picture whose mat was not found looks like, for the one-line
    error of a command (``"; ..."``, or ``""``): mirrored
    (:func:`vision.pose.mirror_hint`), small
    (:func:`vision.pose.small_picture_hint`), very dark or mostly white
    (:func:`exposure_hint`), or the ChArUco calibration board
    (:func:`vision.calibration.board_hint`), the first that holds.  The
    size comes before the light: a break-test's 1 x 1 px black picture was
    called very dark, a 1 x 20000 px strip too.  One more marker search or
    two (a few ms at 720p): not for every frame of a stream."""
    from vision.calibration import board_hint
    from vision.pose import mirror_hint, small_picture_hint
    return (mirror_hint(image_bgr, spec, camera) or small_picture_hint(image_bgr) or exposure_hint(image_bgr)
            or board_hint(image_bgr))


def exposure_hint(image_bgr: np.ndarray) -> str:
    """For a picture whose mat was not found: ``"; the picture is very dark
    ..."`` or ``"; the picture is mostly white ..."`` (:func:`exposure` on
    the whole picture), else ``""`` (a break-test's photo at 2.5 times its
    light was told only "1 of 12 mat markers found").  Here "mostly white"
    is most pixels clipped in one channel at least: a table of any colour
    clips so when the light is far too strong, and the mat was lost anyway."""
    img = np.asarray(image_bgr)
    if img.dtype != np.uint8 or img.size == 0 or img.ndim not in (2, 3):
        return ""
    sub = img[::2, ::2]
    top = sub if sub.ndim == 2 else sub[..., :3].max(axis=2)
    if float(np.percentile(top, 99)) < DARK_BELOW:
        return "; the picture is very dark: light the table, or let the camera expose longer"
    # (and light on the whole: saturated colours, such as a test pattern's
    # bars, clip a channel without the light being too strong; a
    # break-test, session 50, was told "mostly white" of one)
    if float(np.mean(top >= 250)) > BRIGHT_ABOVE and float(sub.mean()) >= BRIGHT_MEAN:
        return "; the picture is mostly white (over-exposed?): less light, or a shorter exposure"
    return ""


def photo_advice(layout: Layout, states, spec, pose, stray: int = 0, looks_like=None,
                 colourless: bool = False, exposed: str | None = None, covered: int = 0,
                 offset: tuple[tuple[int, int], int, int] | None = None,
                 beside: tuple[int, tuple[int, int] | None] = (0, None)) -> tuple[str, ...]:
    """What would make a retake of this photo surer, as sentences for the player.

    * Stacks seen with almost no parallax: raised slots whose top is not
      under another tile (``seen`` is not "covered") and whose face at its
      own height and one layer (20 mm) lower land less than
      :data:`LOW_PARALLAX` of the face's width apart (largest corner shift):
      from straight above, a stack whose top tile was taken looks like one
      still whole.  The bench's photos tilted 10-20 degrees are entirely
      right 2.3 times as often as those under 10 degrees
      (models/MODEL_CARD.md, "Limitations").
    * Small faces: the median slot's face is under :data:`LOW_FACE_PX` px
      wide (mat far away or small in the frame).
    * A focal length guessed for a stacked layout: the view was too nearly
      overhead for the mat to give it and no camera file was given
      (``camera.source`` "assumed" or "searched"; or "estimated" from a
      view within :data:`FOCAL_ADVICE_TILT_DEG` of overhead, where the
      mat's homography holds little of it: a break-test found one read
      12 % short at 4.0 degrees), so every stack's height rests on a
      guess.  On the 30 development photos of 1000-1399 whose
      focal length had to be guessed, the focal search left 100 slots wrong,
      the true intrinsics 44 (models/HISTORY.md, "Session 8").
    * A camera file (``--camera``) the markers fit poorly: an RMS
      reprojection error over :data:`vision.pose.CAMERA_FILE_MISFIT_PX` px (or
      :data:`vision.pose.CAMERA_FILE_MISFIT_SHARE` of the picture's diagonal where that
      is more).  The demo's first frame fits its own camera's file with
      0.4 px; a newcomer's file from another camera (focal length 933 px
      against 1224) fitted with 4.7 px, under the level at which the mat is
      refused, and the board came back with 4 standing tiles read gone at
      confidences up to 0.9997 and no word.
    * Fewer than 4 markers under the pose: its corners rest on little.
    * No tile found for sure (none read present with a confidence of
      :data:`UNSURE_BELOW` or more): right for a cleared mat, but more often
      a wrong ``--layout`` (its slots fall between the tiles).
    * Slots whose face lies partly or wholly outside the picture: they are
      reported standing with the face unseen, which the picture cannot
      confirm.
    * ``offset`` (:func:`half_tile_offset`): the board stands half a tile
      off the layout's slots (looked for on the reads that look for
      ``stray``).
    * ``stray`` (:func:`stray_tiles`) of :data:`STRAY_MIN` or more: tiles
      stand where the layout has no slot, a wrong ``--layout``.
    * A mat file whose ``tile_mm`` is not :data:`STANDARD_TILE_MM`, on a
      board that reads poorly (slots read hidden with nothing in front,
      tiles off the slots, or no tile for sure): first, since every other
      advice follows from it where the file's tiles are not those on the
      table.
    * Most faces read unsurely: at least 6 faces shown and more than
      half of them under :data:`UNSURE_BELOW`.  A photo read with its own
      tile set and layout has few (a bench photo of Love Mahjong read as
      Love: 2 of 82; as Word, Candy or Mindful: 70 of 70, 81 of 82, 79 of
      81; its Sprint layout read as the flat Sprint: 31 of 60): the tile
      set (``--variant``) or the layout is likely wrong, or the photo very
      blurred or dark (none of development photos 1000-1199 read with
      their own set and layout has this advice).  Not said when the faces
      are small in the picture (that advice comes first and explains it).
    * Markers that fit no camera centred on the picture
      (:func:`vision.pose.centred_camera_misfit` over
      :data:`vision.pose.CENTRED_MISFIT_MAX`, without a calibrated camera,
      tilted 15 degrees or more, on 6 markers or more): a
      cropped photo or a screenshot, whose
      heights are projected with a camera centred in the wrong place, or a
      lens that bends lines; before the hand, which such a read suggests.
    * A second mat in the picture (``pose.other_mat``: a marker id read
      twice; :func:`vision.markers.nearer_mat` read the one nearer the
      centre): the next table's mat may have been read instead.
    * A very dark or over-exposed picture (``exposed``, :func:`exposure`):
      said as such (a break-test's dark colour photo was called black and
      white, its over-exposed one got no advice).
    * A picture without colour (``colourless``, :func:`is_colourless`): the
      models learnt the faces in colour, and suits that share a shape differ
      in colour too, so such a photo reads worse (a bench photo read in grey:
      most faces unsure); said instead of "most faces read unsurely".

    Args:
        layout: the layout read.
        states: one :class:`SlotState` per slot.
        spec: ``vision.mat.MatSpec``.
        pose: ``vision.pose.MatPose`` (its camera's ``image_size`` bounds the
            picture).
        stray: faces found on mat cells the layout does not use
            (:func:`stray_tiles`; 0 when not looked for).
        looks_like: None, or a function giving the other variant most of
            the shown faces look like (or None), asked only when most faces
            read unsurely; the advice then names it (``--variant mindful``).
        colourless: the picture holds no colour (:func:`is_colourless`).
        covered: slots something lies over (:func:`foreign_cover`), 0 when
            too few to tell.
        beside: :func:`far_side_tiles`' answer: faces one tile past the
            edge opposite a bare side; :data:`STRAY_MIN` or more are said
            as a question (tiles set aside there, or a board a tile off the
            layout?), after the rest: a game's claimed tiles are often laid
            there.
        offset: :func:`half_tile_offset`'s answer, or None: the board
            stands half a tile off the layout's slots; said before the
            rest but a wrong layout (``stray``), and instead of "no tile
            found for sure", which it explains.
        exposed: ``"dark"`` or ``"bright"`` (:func:`exposure`): said first;
            a dark picture is not called colourless (its channels differ by
            little because it is dark), nor its faces' unsureness blamed on
            the tile set.

    Returns:
        Zero or more sentences.
    """
    from vision.pose import (CAMERA_FILE_MISFIT_PX, CAMERA_FILE_MISFIT_SHARE, CENTRED_MISFIT_MAX,
                             CENTRED_MISFIT_MIN_MARKERS, CENTRED_MISFIT_MIN_TILT_DEG, FOCAL_CHECK_MIN_MARKERS,
                             FOCAL_CHECK_MIN_TILT_DEG, centred_camera_misfit, markers_focal_px,
                             project_slot_faces)
    from vision.presence import window_quads

    out = []
    faces_px = project_slot_faces(layout.slots, spec, pose) if len(layout.slots) else None
    if faces_px is not None:
        face_px = median_face_px(faces_px)
        if face_px < UNREADABLE_FACE_PX:
            out.append(f"tiles only {int(face_px)} px wide in the picture, too small to read (every reading is "
                       f"marked unsure): bring the camera closer or raise its resolution so the mat fills the "
                       f"frame (faces read surest at {LOW_FACE_PX:.0f} px or more)")
        elif face_px < LOW_FACE_PX:
            out.append(f"tiles only {int(face_px)} px wide in the picture: bring the camera closer or raise its "
                       f"resolution so the mat fills the frame (faces read surest at {LOW_FACE_PX:.0f} px or more)")
    # raised slots where the question "is the top tile still there?" arises:
    # a tile stands there, uncovered, or every tile it would stand on does
    g = geometry_of(layout)
    raised = [i for i, (s, st) in enumerate(zip(layout.slots, states))
              if s.z >= 1 and st.seen != "covered"
              and (st.present or all(states[j].present for j in g.covers[i]))]
    if raised:
        q = window_quads([layout.slots[i] for i in raised], spec, pose)
        shift = np.abs(q[0] - q[1]).max(axis=(1, 2))
        width = np.linalg.norm(q[0][:, 1] - q[0][:, 0], axis=1)
        flat = int((shift < LOW_PARALLAX * width).sum())
        if flat:
            many = flat > 1
            slots_say = f"{flat} stacked slot{'s' if many else ''} show{'' if many else 's'}"
            tilt = int(round(pose.tilt_deg))
            if tilt < 10:
                out.append(f"camera nearly overhead (tilt {tilt} degrees): {slots_say} almost no "
                           "parallax, so whether a top tile is still there is unsure; tilt the camera 10-30 "
                           "degrees for a surer reading")
            else:                     # the camera looks straight down on part of the board
                out.append(f"{slots_say} almost no parallax (the camera, tilted {tilt} degrees, looks "
                           f"straight down on {'them' if many else 'it'}), so whether a top tile is still there "
                           "is unsure; move the camera further to one side of the board, or tilt it more, for a "
                           "surer reading")
    source = getattr(pose.camera, "source", "")
    if any(s.z >= 1 for s in layout.slots) and (source in ("assumed", "searched") or (
            source == "estimated" and pose.tilt_deg < FOCAL_ADVICE_TILT_DEG)):
        out.append("focal length guessed (a nearly overhead view and no --camera), so stack heights rest on a "
                   "guess: calibrate the camera once (companion calibrate) and pass --camera, or tilt it "
                   "10-30 degrees")
    err = float(getattr(pose, "reprojection_px", 0.0) or 0.0)
    if source == "calibrated" and err > max(CAMERA_FILE_MISFIT_PX, CAMERA_FILE_MISFIT_SHARE * math.hypot(
            *getattr(pose.camera, "image_size", (0, 0)))):
        out.append(f"the mat's markers fit the camera file poorly (reprojection error {err:.1f} px): check "
                   "that --camera was calibrated with this camera, at this resolution and zoom")
    elif (source == "calibrated" and pose.tilt_deg >= FOCAL_CHECK_MIN_TILT_DEG
          and pose.n_markers >= FOCAL_CHECK_MIN_MARKERS):
        est = markers_focal_px(pose)
        K = pose.camera.K
        f_file = (float(K[0, 0]) + float(K[1, 1])) / 2
        if est is not None and abs(est / f_file - 1) > CAMERA_FILE_FOCAL_MISFIT:
            # (a wrong principal point or distortion shows here too: the
            # sentence names the file, the focal length as the measure)
            out.append(f"the camera file does not match the mat's markers (its focal length {f_file:.0f} px, theirs "
                       f"{est:.0f} px): check that --camera was calibrated with this camera, at this resolution "
                       "and zoom (or leave --camera out)")
    if pose.n_markers < 4:
        out.append(f"only {pose.n_markers} mat markers seen: keep hands and tiles off the markers for a surer "
                   "pose")
    if stray >= STRAY_MIN:
        out.append(f"faces found on {stray} mat cells where layout {layout.name!r} has no slot: check --layout "
                   "(and --mat)")
    no_sure = bool(states) and not any(t.present and t.confidence >= UNSURE_BELOW for t in states)
    if no_sure and exposed is None and offset is None and not any("too small to read" in a for a in out):
        gw, gh = spec.grid_size_mm
        out.append(f"no tile found for sure on the slots of layout {layout.name!r}: if tiles stand on the mat, "
                   f"check --layout (and --mat), and that the mat was printed at 100 % (a printer's \"fit to "
                   f"page\" shrinks it: its grid must measure {gw:g} x {gh:g} mm)")
    w, h = getattr(pose.camera, "image_size", (0, 0))
    if faces_px is not None and w and h:
        q = np.asarray(faces_px, np.float64)

        def beyond(quads):
            return ~((quads[..., 0] >= 0) & (quads[..., 0] <= w - 1) & (quads[..., 1] >= 0)
                     & (quads[..., 1] <= h - 1)).all(axis=1)
        # a face whose window (the face and a margin round it) runs off the
        # picture is read as hidden too: counted with those outside, so the
        # number matches the overlay's unseen faces along the edge (a
        # break-test's zoomed photo: 2 said, 5 drawn)
        centre = q.mean(axis=1, keepdims=True)
        window = centre + (q - centre) * (1 + 2 * EDGE_WINDOW_MARGIN)
        hidden = np.array([t.seen == "occluded" for t in states], bool) if len(states) == len(q) else False
        outside = int((beyond(q) | (hidden & beyond(window))).sum())
        if outside:
            out.append(f"{outside} slot{'s' if outside > 1 else ''} of the layout lie{'' if outside > 1 else 's'} "
                       "partly or wholly outside the picture (reported as standing, face unseen): keep the "
                       "whole board in view")
    n_beside, bare = beside
    if n_beside >= STRAY_MIN and bare is not None and stray < STRAY_MIN:
        names = {(-2, 0): "left", (2, 0): "right", (0, -2): "top", (0, 2): "bottom"}
        out.append(f"faces on {n_beside} mat cells just past the {names[(-bare[0], -bare[1])]} edge of layout "
                   f"{layout.name!r}, where it has no slot, while its {names[bare]} edge reads bare: tiles set "
                   "aside there, or is the board a tile off the layout? (check --layout and --mat)")
    if covered:
        out.insert(0, f"{covered} slots read hidden with no taller tile in front of them (a hand over the board, "
                      "glare or blur?), and the slots near them may read empty: take the photo again with hands "
                      "away, sharp and evenly lit")
        guessed = next((k for k, a in enumerate(out) if a.startswith("focal length guessed")), None)
        if guessed is not None:
            # (what stands in front of a slot follows the camera: with its
            # focal length guessed, the guess explains such slots first; a
            # break-test's upright phone photo was told of a hand first)
            out.insert(0, out.pop(guessed))
    misfit = (centred_camera_misfit(pose) if source != "calibrated" and pose.tilt_deg >= CENTRED_MISFIT_MIN_TILT_DEG
              and pose.n_markers >= CENTRED_MISFIT_MIN_MARKERS and not any("too small to read" in a for a in out)
              else None)
    if misfit is not None and misfit > CENTRED_MISFIT_MAX:
        # (before the hand: a break-test's screenshot of a photo was told of
        # a hand over the board, and a crop of one of nothing)
        out.insert(0, "the mat's markers fit no camera centred on the picture (a cropped photo, a screenshot, "
                      "or a strong wide-angle lens?), so stack heights rest on a wrong guess of the camera: give "
                      "the camera's whole photo, or calibrate the camera once (companion calibrate) and pass "
                      "--camera")
    if offset is not None:
        import shlex
        (move, moved, here) = offset
        source = getattr(layout, "source", "builtin")
        if source == "builtin":
            show = f"companion layouts show {layout.name}"
        else:       # (a file: `layouts show default` named no layout; a map of several needs its name)
            several = str(source).lower().endswith(".map") or str(source).lower().endswith("boards.json")
            named = f" --map-name {shlex.quote(layout.name)}" if several else ""
            show = f"companion layouts show {shlex.quote(str(source))}{named}"
        # (the slots it reads hidden are its own doing: no word of a hand)
        out = [a for a in out if " slots read hidden with no taller tile in front" not in a]
        out.insert(0, f"the tiles stand half a tile off the slots of layout {layout.name!r} (faces on {moved} "
                      f"slots moved half a tile {HALF_TILE_MOVES[tuple(move)]}, on {here} where they are): lay "
                      f"the board on the mat's cells as `{show}` draws it, or check --layout")
    if stray >= STRAY_MIN:
        # a wrong layout explains the rest first (hidden slots, small or
        # unsure faces: it came after "tiles only 23 px wide", where the
        # README says it comes first; a newcomer's test, session 58)
        out.insert(0, out.pop(next(k for k, a in enumerate(out) if a.startswith("faces found on "))))
    if getattr(pose, "other_mat", False):
        out.insert(0, "a second mat is in the picture (a marker read twice): the one nearer the centre was read; "
                      "frame only your own table")
    if exposed == "dark":
        out.insert(0, "the photo is very dark: light the table, or let the camera expose longer")
        colourless = False
    elif exposed == "bright":
        out.insert(0, "the photo is over-exposed (most of the board white): less light on the table, or a "
                   "shorter exposure")
    tiny = next((k for k, a in enumerate(out) if a.startswith("tiles only") and "too small" in a), None)
    if tiny is not None:            # (nothing else read in the picture can be trusted)
        out.insert(0, out.pop(tiny))
    if colourless:
        out.append(NO_COLOUR_ADVICE + ": faces are read by their colours as well as their shapes, so take it "
                   "in colour")
    shown = [t for t in states if t.seen == "face"]
    unsure = sum(t.confidence < UNSURE_BELOW for t in shown)
    small = any(a.startswith("tiles only") for a in out)      # small faces explain unsure ones
    if len(shown) >= 6 and unsure > len(shown) / 2 and not small and not colourless and exposed is None:
        other = looks_like() if looks_like is not None else None
        if other is not None:
            from companion.variants import find_variant
            out.append(f"most faces read unsurely ({unsure} of {len(shown)}) and most look like "
                       f"{find_variant(other).title} tiles: check --variant (--variant {other}?)")
        else:
            out.append(f"most faces read unsurely ({unsure} of {len(shown)}): check that --variant names the "
                       "tile set on the table and --layout the layout, and that the photo is sharp and evenly lit")
    mostly_unsure = len(shown) >= 6 and unsure > len(shown) / 2
    tile = tuple(float(v) for v in getattr(spec, "tile_mm", STANDARD_TILE_MM))
    if tile != STANDARD_TILE_MM and exposed is None and (covered or stray >= STRAY_MIN or no_sure or mostly_unsure):
        # a hand-made mat file whose tiles are not those on the table: every
        # slot's window falls off its tile (a break-test, session 56: tile_mm
        # 28 x 38 for the standard tiles read 17 of 144 standing, with advice
        # that blamed a hand)
        out.insert(0, f"the mat file gives tiles of {tile[0]:g} x {tile[1]:g} x {tile[2]:g} mm, not the standard "
                      f"{STANDARD_TILE_MM[0]:g} x {STANDARD_TILE_MM[1]:g} x {STANDARD_TILE_MM[2]:g} mm, and the board "
                      "reads poorly: check its tile_mm against a tile on the table, and that the mat was printed "
                      "from that file")
    return tuple(out)
