-- The PostgreSQL form of the schema that migrations/sqlite builds step by step, in one step.
-- The same tables, columns and meanings; flags are booleans, documents are JSON.
--
-- Timestamps are RFC 3339 text, exactly as the API shows them, so both databases hand back the
-- same bytes. Game state and moves are `json`, which keeps a document exactly as the game or
-- the client wrote it (including a "\u0000" escape, which `jsonb` refuses); seat lists, which
-- the server writes, are `jsonb`. `->` and `->>` work on both.

-- Players are accounts. A player's token is never stored: only the SHA-256 of its secret part.
-- Computer opponents are players too: `bot` is their level, NULL for people; there is one
-- account per level, and it has no token (an empty token_hash matches no secret).
CREATE TABLE players (
    id          TEXT PRIMARY KEY,
    username    TEXT NOT NULL UNIQUE,
    token_hash  TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    bot         TEXT CHECK (bot IN ('easy', 'medium', 'hard'))
);
CREATE UNIQUE INDEX players_one_account_per_bot_level ON players (bot) WHERE bot IS NOT NULL;

-- Games uploaded by players. Every published version is kept, source and all, so a room can
-- always be replayed with the code it ran: rooms.game_version pins the version a room plays.
CREATE TABLE games (
    id          TEXT PRIMARY KEY,
    owner_id    TEXT NOT NULL REFERENCES players (id),
    created_at  TEXT NOT NULL
);

CREATE TABLE game_versions (
    game_id      TEXT NOT NULL REFERENCES games (id),
    version      BIGINT NOT NULL CHECK (version > 0),
    name         TEXT NOT NULL,
    description  TEXT NOT NULL,
    min_players  BIGINT NOT NULL CHECK (min_players >= 1),
    max_players  BIGINT NOT NULL CHECK (max_players >= min_players),
    format       TEXT NOT NULL CHECK (format IN ('commonjs', 'module')),
    source       TEXT NOT NULL,
    sha256       TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    PRIMARY KEY (game_id, version)
);

-- One row per room: the BoardGame record the hooks see. `seq` orders rooms by creation for
-- the lobby. `game_version` is NULL for the built-in games, which have no versions.
CREATE TABLE rooms (
    seq               BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id                TEXT NOT NULL UNIQUE,
    game              TEXT NOT NULL,
    game_version      BIGINT,
    private           BOOLEAN NOT NULL,
    version           BIGINT NOT NULL CHECK (version >= 0),
    joinable          BOOLEAN NOT NULL,
    finished          BOOLEAN NOT NULL,
    state             JSON NOT NULL,
    players           JSONB NOT NULL,
    inactive_players  JSONB NOT NULL,
    created_at        TEXT NOT NULL,
    updated_at        TEXT NOT NULL
);

-- Listings stay fast however many rooms are stored: every filter set the API allows has an
-- index whose equality columns are exactly its filters, followed by `seq`, so a page is one
-- index range read newest first. The lobby only lists public rooms, so these are partial.
CREATE INDEX rooms_public                           ON rooms (seq)                            WHERE private = false;
CREATE INDEX rooms_public_by_game                   ON rooms (game, seq)                      WHERE private = false;
CREATE INDEX rooms_public_by_joinable               ON rooms (joinable, seq)                  WHERE private = false;
CREATE INDEX rooms_public_by_finished               ON rooms (finished, seq)                  WHERE private = false;
CREATE INDEX rooms_public_by_joinable_finished      ON rooms (joinable, finished, seq)        WHERE private = false;
CREATE INDEX rooms_public_by_game_joinable          ON rooms (game, joinable, seq)            WHERE private = false;
CREATE INDEX rooms_public_by_game_finished          ON rooms (game, finished, seq)            WHERE private = false;
CREATE INDEX rooms_public_by_game_joinable_finished ON rooms (game, joinable, finished, seq)  WHERE private = false;

-- Who is or was in which room, derived from rooms.players / rooms.inactive_players on every
-- write. Memberships carry the room's `seq`, its game (which never changes) and whether it is
-- finished (rewritten when that changes), so a player's rooms are index ranges too.
CREATE TABLE room_players (
    room_id    TEXT NOT NULL REFERENCES rooms (id),
    player_id  TEXT NOT NULL REFERENCES players (id),
    active     BOOLEAN NOT NULL,
    room_seq   BIGINT NOT NULL,
    game       TEXT NOT NULL,
    finished   BOOLEAN NOT NULL,
    PRIMARY KEY (room_id, player_id)
);
CREATE INDEX room_players_by_player               ON room_players (player_id, room_seq);
CREATE INDEX room_players_by_player_game          ON room_players (player_id, game, room_seq);
CREATE INDEX room_players_by_player_finished      ON room_players (player_id, finished, room_seq);
CREATE INDEX room_players_by_player_game_finished ON room_players (player_id, game, finished, room_seq);

-- The history of every room: exactly one row per version. The primary key makes a duplicate
-- version impossible; the compare-and-set on rooms.version makes a gap impossible. Every
-- version records who was seated at it.
CREATE TABLE room_events (
    room_id     TEXT NOT NULL REFERENCES rooms (id),
    version     BIGINT NOT NULL CHECK (version > 0),
    kind        TEXT NOT NULL CHECK (kind IN ('room_start', 'join', 'quit', 'move', 'reset')),
    player_id   TEXT REFERENCES players (id),
    move        JSON,
    state       JSON NOT NULL,
    joinable    BOOLEAN NOT NULL,
    finished    BOOLEAN NOT NULL,
    players     JSONB NOT NULL,
    created_at  TEXT NOT NULL,
    PRIMARY KEY (room_id, version)
);
