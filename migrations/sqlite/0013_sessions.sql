-- Sessions: a player may be signed in on several devices, each with a token of its own. A
-- token is `<player id>.<session id>.<secret>`, and only the SHA-256 of the secret is kept. A
-- token issued before sessions existed (`<player id>.<secret>`) is its player's first session,
-- whose id is the player's own.
CREATE TABLE sessions (
    id            TEXT PRIMARY KEY,
    player_id     TEXT NOT NULL REFERENCES players (id),
    token_hash    TEXT NOT NULL,
    label         TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    -- To the minute: written at most once a minute per session, off the request's path.
    last_used_at  TEXT NOT NULL,
    -- When the session ended (signed out, ended from another device, its player suspended);
    -- NULL while it works. Ended sessions are kept, for the record.
    ended_at      TEXT
);
CREATE INDEX sessions_by_player ON sessions (player_id, created_at) WHERE ended_at IS NULL;
-- Every server asks once a second which sessions ended since it last asked, so that their
-- open streams close: one range of this index.
CREATE INDEX sessions_ended ON sessions (ended_at) WHERE ended_at IS NOT NULL;

INSERT INTO sessions (id, player_id, token_hash, label, created_at, last_used_at)
SELECT id, id, token_hash, 'First device', created_at, coalesce(last_seen_at, created_at)
FROM players WHERE bot IS NULL AND token_hash <> '';

-- Sign-in codes: 8 characters a player shows on one device and types on another, stored
-- hashed. A code works once, for ten minutes; `used_at` records that it was used.
CREATE TABLE sign_in_codes (
    code_hash   TEXT PRIMARY KEY,
    player_id   TEXT NOT NULL REFERENCES players (id),
    created_at  TEXT NOT NULL,
    expires_at  TEXT NOT NULL,
    used_at     TEXT
);
