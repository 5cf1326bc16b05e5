-- Webhooks: where the server's events go, and the outbox that takes them there.

-- An endpoint: an operator's (`game_id` null: every event of the server) or a game owner's
-- (that game's rooms only). `events` lists the types it takes, comma-separated. The secret
-- signs every delivery; after a rotation the previous one signs too, until
-- `previous_secret_until`. A paused or disabled endpoint keeps its events waiting.
CREATE TABLE webhook_endpoints (
    id                     TEXT PRIMARY KEY,
    game_id                TEXT,
    created_by             TEXT,
    url                    TEXT NOT NULL,
    events                 TEXT NOT NULL,
    secret                 TEXT NOT NULL,
    previous_secret        TEXT,
    previous_secret_until  TEXT,
    paused_at              TEXT,
    -- Set when every delivery failed for the disabling period, with why.
    disabled_at            TEXT,
    disabled_reason        TEXT,
    -- When the run of failures now going on began; null after any success.
    failing_since          TEXT,
    created_at             TEXT NOT NULL
);
CREATE INDEX webhook_endpoints_by_game ON webhook_endpoints (game_id);

-- The outbox: one row per event per endpoint, written in the same commit as the change that
-- caused it. `id` is the delivery's `webhook-id`, the same on every attempt. A room's event
-- names its room, game and version, and holds only what the room's history does not (`data`:
-- a finished game's winners and rating changes): its body is made from that version of the
-- history, which never changes, when it is delivered. Any other event holds its `body`. A row is due
-- while `due_at` is set; a server that takes it sets `claimed_until`, and another may take it
-- again only once that has passed (a server that died holding it). `state` is `pending`,
-- `delivered` or `failed`; `done_at` says when it stopped being pending, for pruning.
CREATE TABLE outbox (
    seq            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id             TEXT NOT NULL UNIQUE,
    endpoint_id    TEXT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    type           TEXT NOT NULL,
    room_id        TEXT,
    game           TEXT,
    version        BIGINT,
    data           TEXT,
    body           TEXT,
    created_at     TEXT NOT NULL,
    state          TEXT NOT NULL,
    due_at         TEXT,
    -- Tried until then; null: the server's retry period after `created_at`.
    retry_until    TEXT,
    claimed_until  TEXT,
    attempts       BIGINT NOT NULL DEFAULT 0,
    last_status    BIGINT,
    done_at        TEXT
);
CREATE INDEX outbox_due ON outbox (endpoint_id, due_at) WHERE due_at IS NOT NULL;
CREATE INDEX outbox_log ON outbox (endpoint_id, seq);
CREATE INDEX outbox_done ON outbox (done_at) WHERE done_at IS NOT NULL;

-- Every attempt at a delivery: when, the status (null: no answer, see `error`), how long it
-- took and the answer's first bytes.
CREATE TABLE outbox_attempts (
    outbox_seq  BIGINT NOT NULL REFERENCES outbox (seq) ON DELETE CASCADE,
    attempt     BIGINT NOT NULL,
    at          TEXT NOT NULL,
    status      BIGINT,
    latency_ms  BIGINT NOT NULL,
    response    TEXT NOT NULL,
    error       TEXT,
    PRIMARY KEY (outbox_seq, attempt)
);
