-- Moderation: roles, suspensions, unpublished games, and the record of every admin action.

-- Who may moderate (`admin`) and, when uploads are restricted to them, publish (`author`).
-- Granted and revoked with `turnhouse admin grant|revoke USERNAME [--role author]`.
CREATE TABLE player_roles (
    player_id   TEXT NOT NULL REFERENCES players (id),
    role        TEXT NOT NULL CHECK (role IN ('admin', 'author')),
    granted_at  TEXT NOT NULL,
    PRIMARY KEY (player_id, role)
);

-- A suspended player's sessions are ended and none can be opened until they are unsuspended.
ALTER TABLE players ADD COLUMN suspended_at TEXT;
ALTER TABLE players ADD COLUMN suspension_reason TEXT;

-- An unpublished game opens no new rooms and is left out of the games listed.
ALTER TABLE games ADD COLUMN unpublished_at TEXT;
ALTER TABLE games ADD COLUMN unpublish_reason TEXT;

-- Every admin action, in the order taken: who (NULL for the command line), what, to what, why.
-- `details` is JSON text (the role granted, a rename's old and new names, what became of a
-- game's rooms). Written in the same commit as the change it records.
CREATE TABLE audit_log (
    id           BIGSERIAL PRIMARY KEY,
    at           TEXT NOT NULL,
    actor_id     TEXT REFERENCES players (id),
    actor_name   TEXT NOT NULL,
    action       TEXT NOT NULL,
    target_kind  TEXT NOT NULL CHECK (target_kind IN ('player', 'game', 'room')),
    target_id    TEXT NOT NULL,
    reason       TEXT NOT NULL,
    details      TEXT NOT NULL
);
CREATE INDEX audit_log_by_target ON audit_log (target_kind, target_id, id);

-- The history gains `renamed`: a seated player renamed by an admin (state as it was).
ALTER TABLE room_events DROP CONSTRAINT room_events_kind_check;
ALTER TABLE room_events ADD CONSTRAINT room_events_kind_check
    CHECK (kind IN ('room_start', 'join', 'quit', 'move', 'reset', 'timeout', 'timeout_fault',
                    'closed', 'abandoned', 'declined', 'renamed'));
