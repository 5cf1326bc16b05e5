-- A player's e-mail address and what they want sent to it. `address` counts only once
-- verified (`verified_at`); `address_key` (lowercase) finds an account by its address for a
-- password reset, one account per address. A mail of their turns goes at most once per period:
-- `turns_mailed_at` says when the last one went.
CREATE TABLE player_emails (
    player_id        TEXT PRIMARY KEY REFERENCES players (id) ON DELETE CASCADE,
    address          TEXT NOT NULL,
    address_key      TEXT NOT NULL UNIQUE,
    verified_at      TEXT NOT NULL,
    turn_mail        INTEGER NOT NULL DEFAULT 1,
    clock_mail       INTEGER NOT NULL DEFAULT 1,
    turns_mailed_at  TEXT
);

-- The links mailed to players: verifying an address (`verify`, for `address`) or resetting a
-- password (`reset`). Only a hash of the token in the link is kept; a link works once, until
-- `expires_at`.
CREATE TABLE email_tokens (
    token_hash  TEXT PRIMARY KEY,
    player_id   TEXT NOT NULL REFERENCES players (id) ON DELETE CASCADE,
    purpose     TEXT NOT NULL,
    address     TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    expires_at  TEXT NOT NULL
);
CREATE INDEX email_tokens_by_player ON email_tokens (player_id, purpose);
CREATE INDEX email_tokens_expiry ON email_tokens (expires_at);

-- Rooms a player asked to hear nothing about.
CREATE TABLE muted_rooms (
    player_id  TEXT NOT NULL REFERENCES players (id) ON DELETE CASCADE,
    room_id    TEXT NOT NULL,
    PRIMARY KEY (player_id, room_id)
);

-- What the outbox sends players: mail (`channel` 'mail', to `destination`, an address) and web
-- pushes ('push', to the subscription `destination`). Like the webhooks' rows, each is written
-- in the transaction that causes it (a verification asked for, a turn begun) and delivered at
-- least once: due while `due_at` is set, taken by a server until `claimed_until`. `kind` says
-- what it is: `verify`, `reset`, `address_changed`, `password_changed`, `turns` (the digest,
-- one pending per player), `clock` (a deadline near) or `turn` (a push). A room's notice names
-- its room and version and is made when sent, from the room as it is then; other mail keeps
-- its `body`, emptied once sent. `state`: pending, sent, held (nothing to say by then), failed.
CREATE TABLE notices (
    seq            INTEGER PRIMARY KEY AUTOINCREMENT,
    channel        TEXT NOT NULL,
    kind           TEXT NOT NULL,
    player_id      TEXT NOT NULL,
    destination    TEXT NOT NULL,
    room_id        TEXT,
    version        INTEGER,
    body           TEXT,
    created_at     TEXT NOT NULL,
    state          TEXT NOT NULL,
    due_at         TEXT,
    claimed_until  TEXT,
    attempts       INTEGER NOT NULL DEFAULT 0,
    last_error     TEXT,
    done_at        TEXT
);
CREATE INDEX notices_due ON notices (due_at) WHERE due_at IS NOT NULL;
CREATE INDEX notices_done ON notices (done_at) WHERE done_at IS NOT NULL;
CREATE UNIQUE INDEX notices_one_digest ON notices (player_id) WHERE kind = 'turns' AND state = 'pending';

-- Keys the server makes once and every server shares: the VAPID key pair of its web pushes and
-- the key that signs unsubscribe links.
CREATE TABLE server_keys (
    name   TEXT PRIMARY KEY,
    value  TEXT NOT NULL
);

-- The browsers a player turned notifications on in (a Push API subscription): where pushes go,
-- and the keys that encrypt them for that browser alone.
CREATE TABLE push_subscriptions (
    id          TEXT PRIMARY KEY,
    player_id   TEXT NOT NULL REFERENCES players (id) ON DELETE CASCADE,
    endpoint    TEXT NOT NULL UNIQUE,
    p256dh      TEXT NOT NULL,
    auth        TEXT NOT NULL,
    created_at  TEXT NOT NULL
);
CREATE INDEX push_subscriptions_by_player ON push_subscriptions (player_id);
