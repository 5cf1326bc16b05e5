-- Players are accounts. A player's token is never stored: only the SHA-256 of its secret part.
CREATE TABLE players (
    id          TEXT PRIMARY KEY,
    username    TEXT NOT NULL UNIQUE,
    token_hash  TEXT NOT NULL,
    created_at  TEXT NOT NULL
);

-- One row per room: the BoardGame record the hooks see, with JSON kept as text so that
-- json_extract() works from the sqlite3 shell. `seq` orders rooms by creation for the lobby.
CREATE TABLE rooms (
    seq               INTEGER PRIMARY KEY AUTOINCREMENT,
    id                TEXT NOT NULL UNIQUE,
    game              TEXT NOT NULL,
    private           INTEGER NOT NULL CHECK (private IN (0, 1)),
    version           INTEGER NOT NULL CHECK (version >= 0),
    joinable          INTEGER NOT NULL CHECK (joinable IN (0, 1)),
    finished          INTEGER NOT NULL CHECK (finished IN (0, 1)),
    state             TEXT NOT NULL,
    players           TEXT NOT NULL,
    inactive_players  TEXT NOT NULL,
    created_at        TEXT NOT NULL,
    updated_at        TEXT NOT NULL
);
CREATE INDEX rooms_lobby ON rooms (game, private, joinable, finished, seq);

-- Who is or was in which room; derived from rooms.players / rooms.inactive_players on every
-- write, so "a player's rooms" is a plain indexed lookup.
CREATE TABLE room_players (
    room_id    TEXT NOT NULL REFERENCES rooms (id),
    player_id  TEXT NOT NULL REFERENCES players (id),
    active     INTEGER NOT NULL CHECK (active IN (0, 1)),
    PRIMARY KEY (room_id, player_id)
);
CREATE INDEX room_players_by_player ON room_players (player_id);

-- The history of every room: exactly one row per version. The primary key makes a duplicate
-- version impossible; the compare-and-set on rooms.version makes a gap impossible.
CREATE TABLE room_events (
    room_id     TEXT NOT NULL REFERENCES rooms (id),
    version     INTEGER NOT NULL CHECK (version > 0),
    kind        TEXT NOT NULL CHECK (kind IN ('room_start', 'join', 'quit', 'move', 'reset')),
    player_id   TEXT REFERENCES players (id),
    move        TEXT,
    state       TEXT NOT NULL,
    joinable    INTEGER NOT NULL CHECK (joinable IN (0, 1)),
    finished    INTEGER NOT NULL CHECK (finished IN (0, 1)),
    created_at  TEXT NOT NULL,
    PRIMARY KEY (room_id, version)
);
