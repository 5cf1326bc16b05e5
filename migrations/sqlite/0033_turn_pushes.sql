-- Turns begun for players with a browser to push to, waiting for the notices' dispatcher:
-- written in the commit that begins the turn, and taken by the dispatcher's first round once
-- the turn has lasted `--push-after` (a second by default), which makes a push (rows of
-- `notices`) of each whose turn still stands. A turn over by then, as for a player at the
-- board, costs this row only. Kept in the order turns began: written at one end, taken from
-- the other.
CREATE TABLE turn_pushes (
    room_id    TEXT NOT NULL,
    player_id  TEXT NOT NULL,
    version    INTEGER NOT NULL,
    at         TEXT NOT NULL,
    PRIMARY KEY (at, room_id, player_id, version)
) WITHOUT ROWID;
