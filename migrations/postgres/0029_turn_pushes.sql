-- Turns begun for players with a browser to push to, waiting for the notices' dispatcher:
-- written in the commit that begins the turn, and taken whole by its next round (a few tens of
-- milliseconds later), which makes a push (rows of `notices`) of each whose turn still stands.
-- A turn over by then, as for a player who moves at once, costs this row only, in a table that
-- stays a few pages long.
CREATE TABLE turn_pushes (
    room_id    TEXT NOT NULL,
    player_id  TEXT NOT NULL,
    version    BIGINT NOT NULL,
    at         TEXT NOT NULL,
    PRIMARY KEY (room_id, player_id, version)
);
