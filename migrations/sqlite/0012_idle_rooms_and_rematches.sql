-- Rooms nobody will play, and rematches.

-- When a server last saw each player: a request with their token, or a stream they hold open
-- (written at most once per a quarter of quick play's window, so a busy player costs a write a
-- few times a minute, not one per request). Quick play seats people only with players still
-- here.
ALTER TABLE players ADD COLUMN last_seen_at TEXT;

-- "Play again" holds the finished game's seats for its other players for a while: who asked,
-- for whom and until when (JSON), the time also in a column of its own for quick play's search.
ALTER TABLE rooms ADD COLUMN rematch TEXT;
ALTER TABLE rooms ADD COLUMN seats_held_until TEXT;
-- The running score of the room's games: {"games": n, "draws": n, "wins": {"<player id>": n}}.
ALTER TABLE rooms ADD COLUMN score TEXT;

-- Rooms waiting for players, least recently changed first: closing the idle ones reads one
-- range of this index, however many rooms there are.
CREATE INDEX rooms_waiting ON rooms (updated_at) WHERE joinable = 1 AND finished = 0;

-- The history gains three kinds of version: `closed` (a waiting room nobody joined), `abandoned`
-- (a player who stopped playing, removed when another claimed the game) and `declined` (a
-- rematch turned down). SQLite cannot change a CHECK in place, so the table is rebuilt, rows
-- as they were.
CREATE TABLE room_events_next (
    room_id             TEXT NOT NULL REFERENCES rooms (id),
    version             INTEGER NOT NULL CHECK (version > 0),
    kind                TEXT NOT NULL CHECK (kind IN ('room_start', 'join', 'quit', 'move', 'reset',
                                                      'timeout', 'timeout_fault', 'closed',
                                                      'abandoned', 'declined')),
    player_id           TEXT REFERENCES players (id),
    move                TEXT,
    state               TEXT NOT NULL,
    joinable            INTEGER NOT NULL CHECK (joinable IN (0, 1)),
    finished            INTEGER NOT NULL CHECK (finished IN (0, 1)),
    created_at          TEXT NOT NULL,
    players             TEXT,
    trigger_timeout_at  TEXT,
    PRIMARY KEY (room_id, version)
);
INSERT INTO room_events_next (room_id, version, kind, player_id, move, state, joinable,
                              finished, created_at, players, trigger_timeout_at)
SELECT room_id, version, kind, player_id, move, state, joinable, finished, created_at, players,
       trigger_timeout_at
FROM room_events;
DROP TABLE room_events;
ALTER TABLE room_events_next RENAME TO room_events;
