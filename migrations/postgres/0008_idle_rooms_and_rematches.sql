-- Rooms nobody will play, and rematches.

-- When a server last saw each player: a request with their token, or a stream they hold open
-- (written at most once per a quarter of quick play's window). Quick play seats people only
-- with players still here.
ALTER TABLE players ADD COLUMN last_seen_at TEXT;

-- "Play again" holds the finished game's seats for its other players for a while: who asked,
-- for whom and until when, the time also in a column of its own for quick play's search.
ALTER TABLE rooms ADD COLUMN rematch JSONB;
ALTER TABLE rooms ADD COLUMN seats_held_until TEXT;
-- The running score of the room's games: {"games": n, "draws": n, "wins": {"<player id>": n}}.
ALTER TABLE rooms ADD COLUMN score JSONB;

-- Rooms waiting for players, least recently changed first: closing the idle ones reads one
-- range of this index.
CREATE INDEX rooms_waiting ON rooms (updated_at) WHERE joinable = true AND finished = false;

-- The history gains three kinds of version: `closed`, `abandoned` and `declined`.
ALTER TABLE room_events DROP CONSTRAINT room_events_kind_check;
ALTER TABLE room_events ADD CONSTRAINT room_events_kind_check
    CHECK (kind IN ('room_start', 'join', 'quit', 'move', 'reset', 'timeout', 'timeout_fault',
                    'closed', 'abandoned', 'declined'));
