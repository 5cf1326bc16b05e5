-- Clocks. A hook's patch may set `triggerTimeoutAt`, when the game's `onTimeout` runs: kept on
-- the room (RFC 3339 in UTC to the millisecond, one width, so text order is time order) and on
-- each version of its history. Each server asks only for the earliest few deadlines, one
-- range of the partial index, however many rooms have one.
ALTER TABLE rooms ADD COLUMN trigger_timeout_at TEXT;
ALTER TABLE room_events ADD COLUMN trigger_timeout_at TEXT;
CREATE INDEX rooms_deadlines ON rooms (trigger_timeout_at) WHERE trigger_timeout_at IS NOT NULL;

-- The history gains two kinds of version.
ALTER TABLE room_events DROP CONSTRAINT room_events_kind_check;
ALTER TABLE room_events ADD CONSTRAINT room_events_kind_check
    CHECK (kind IN ('room_start', 'join', 'quit', 'move', 'reset', 'timeout', 'timeout_fault'));

-- The clock a room was created with (`{"moveSeconds": N}`), which quick play matches on.
ALTER TABLE rooms ADD COLUMN clock_move_seconds BIGINT;

-- Whether a published game version exports `onTimeout` (checked when it was published).
ALTER TABLE game_versions ADD COLUMN on_timeout BOOLEAN NOT NULL DEFAULT false;
