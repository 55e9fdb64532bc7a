-- The Crystal Harmony ledger: one append-only table of game events.
-- Scores are never stored: they are derived by replaying a game's events
-- (companion.game.replay).  Undo and referee corrections are new rows whose
-- ref points at the row they change; no row is ever updated or deleted.

CREATE TABLE IF NOT EXISTS events (
    id      INTEGER PRIMARY KEY AUTOINCREMENT,
    game_id TEXT    NOT NULL CHECK (length(game_id) > 0),
    type    TEXT    NOT NULL CHECK (length(type) > 0),
    data    TEXT    NOT NULL CHECK (json_valid(data)),   -- a JSON object
    ref     INTEGER REFERENCES events (id),              -- the event this one changes
    t       REAL                                         -- caller's clock, seconds
);

CREATE INDEX IF NOT EXISTS events_by_game ON events (game_id, id);

CREATE TRIGGER IF NOT EXISTS events_no_update BEFORE UPDATE ON events
BEGIN
    SELECT RAISE(ABORT, 'the ledger is append-only: events cannot be changed');
END;

CREATE TRIGGER IF NOT EXISTS events_no_delete BEFORE DELETE ON events
BEGIN
    SELECT RAISE(ABORT, 'the ledger is append-only: events cannot be deleted');
END;
