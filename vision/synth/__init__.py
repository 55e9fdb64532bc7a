"""Synthetic scenes for training and evaluation (never imported by inference code).

* :func:`render_scene` (:mod:`vision.synth.scene`): one photo of a game in
  progress on the printed mat (tiles as stacked boxes with their face art,
  table, shadows, glare, hands, camera effects) and its exact truth
  (:class:`SceneTruth`: camera, per slot present / face / free / visible
  fraction / jitter / 180-degree flip / projected face corners).
* :func:`render_recording` / :func:`write_recording`
  (:mod:`vision.synth.recording`): scripted games (:class:`Claim`,
  :class:`PutBack`, :class:`Nudge`, :class:`Pause`) from one camera, frame by
  frame, with the moves, the referee's expected events and their settled frames;
  :class:`Reshuffle` re-lays the standing tiles in another order.
* :mod:`vision.synth.hands`, :mod:`vision.synth.textures`: the hand and table
  drawing used by both.
"""

from vision.synth.recording import (Claim, FrameTruth, Nudge, Pause, PutBack, Recording, Reshuffle, SpellWord,
                                    move_from_json, render_recording, script_moves, write_recording)
from vision.synth.scene import (LABEL_HAND, LABEL_SIDE, Augment, Look, Placement, Scene, SceneSpec,
                                SceneTruth, TrueCamera, deal_faces, remove_free_pairs, render_scene,
                                sample_camera, sample_look, sample_placement)

__all__ = ["LABEL_HAND", "LABEL_SIDE", "Augment", "Claim", "FrameTruth", "Look", "Nudge", "Pause", "Placement", "SpellWord",
           "PutBack", "Recording", "Reshuffle", "Scene", "SceneSpec", "SceneTruth", "TrueCamera", "deal_faces",
           "move_from_json", "remove_free_pairs", "render_recording", "render_scene", "sample_camera",
           "sample_look", "sample_placement", "script_moves", "write_recording"]
