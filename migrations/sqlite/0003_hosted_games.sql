-- Games uploaded by players. Every published version is kept, source and all, so a room can
-- always be replayed with the code it ran: rooms.game_version pins the version a room plays.
CREATE TABLE games (
    id          TEXT PRIMARY KEY,
    owner_id    TEXT NOT NULL REFERENCES players (id),
    created_at  TEXT NOT NULL
);

CREATE TABLE game_versions (
    game_id      TEXT NOT NULL REFERENCES games (id),
    version      INTEGER NOT NULL CHECK (version > 0),
    name         TEXT NOT NULL,
    description  TEXT NOT NULL,
    min_players  INTEGER NOT NULL CHECK (min_players >= 1),
    max_players  INTEGER NOT NULL CHECK (max_players >= min_players),
    format       TEXT NOT NULL CHECK (format IN ('commonjs', 'module')),
    source       TEXT NOT NULL,
    sha256       TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    PRIMARY KEY (game_id, version)
);

-- NULL for the built-in games, which have no versions.
ALTER TABLE rooms ADD COLUMN game_version INTEGER;
