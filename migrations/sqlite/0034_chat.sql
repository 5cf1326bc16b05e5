-- Chat: messages at a room's table (its players), in its gallery (its watchers) and in the
-- lobby (room_id null), each kept with the room's version when it was written, so a replay
-- shows it there. A message deleted by an admin keeps its row (for the audit and for streams
-- that resume past it) without its text.
CREATE TABLE chat_messages (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    room_id       TEXT REFERENCES rooms (id),
    channel       TEXT NOT NULL CHECK (channel IN ('table', 'gallery', 'lobby')),
    player_id     TEXT NOT NULL REFERENCES players (id),
    body          TEXT,
    room_version  INTEGER,
    created_at    TEXT NOT NULL,
    deleted_at    TEXT
);
CREATE INDEX chat_messages_by_room ON chat_messages (room_id, channel, id);

-- A player's report of a message, once per reporter; admins read the open ones.
CREATE TABLE chat_reports (
    message_id   INTEGER NOT NULL REFERENCES chat_messages (id),
    reporter_id  TEXT NOT NULL REFERENCES players (id),
    reason       TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    PRIMARY KEY (message_id, reporter_id)
) WITHOUT ROWID;

-- Who a player has blocked: their messages disappear from that player's view.
CREATE TABLE player_blocks (
    player_id   TEXT NOT NULL REFERENCES players (id),
    blocked_id  TEXT NOT NULL REFERENCES players (id),
    created_at  TEXT NOT NULL,
    PRIMARY KEY (player_id, blocked_id)
) WITHOUT ROWID;

-- An admin's mute: the player may not write in any chat until then.
ALTER TABLE players ADD COLUMN chat_muted_until TEXT;
-- A game whose author turned chat off (where talking is cheating), per version.
ALTER TABLE game_versions ADD COLUMN chat INTEGER NOT NULL DEFAULT 1 CHECK (chat IN (0, 1));
-- Rooms whose opener closed the gallery.
CREATE TABLE closed_galleries (
    room_id  TEXT PRIMARY KEY REFERENCES rooms (id)
) WITHOUT ROWID;
