-- Clocks. A hook's patch may set `triggerTimeoutAt`, when the game's `onTimeout` runs: kept on
-- the room (RFC 3339 in UTC to the millisecond, one width, so text order is time order) and on
-- each version of its history. Each server asks only for the earliest few deadlines, one
-- range of the partial index, however many rooms have one.
ALTER TABLE rooms ADD COLUMN trigger_timeout_at TEXT;
CREATE INDEX rooms_deadlines ON rooms (trigger_timeout_at) WHERE trigger_timeout_at IS NOT NULL;

-- The clock a room was created with (`{"moveSeconds": N}`), which quick play matches on.
ALTER TABLE rooms ADD COLUMN clock_move_seconds INTEGER;

-- Whether a published game version exports `onTimeout` (checked when it was published).
ALTER TABLE game_versions ADD COLUMN on_timeout INTEGER NOT NULL DEFAULT 0;

-- The history gains two kinds of version, `timeout` and `timeout_fault`, and the deadline of
-- each version. SQLite cannot change a CHECK in place, so the table is rebuilt, rows as
-- they were.
CREATE TABLE room_events_next (
    room_id             TEXT NOT NULL REFERENCES rooms (id),
    version             INTEGER NOT NULL CHECK (version > 0),
    kind                TEXT NOT NULL CHECK (kind IN ('room_start', 'join', 'quit', 'move', 'reset',
                                                      'timeout', 'timeout_fault')),
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
                              finished, created_at, players)
SELECT room_id, version, kind, player_id, move, state, joinable, finished, created_at, players
FROM room_events;
DROP TABLE room_events;
ALTER TABLE room_events_next RENAME TO room_events;
