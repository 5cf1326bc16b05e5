-- An uploaded game's log, for its owner: what its hooks logged in its rooms, and its hooks'
-- failures. Kept per game up to a bound (the oldest lines go first); `id` only grows, so a
-- reader resumes after the last id it read.
CREATE TABLE game_logs (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    game         TEXT NOT NULL,
    game_version INTEGER NOT NULL,
    at           TEXT NOT NULL,
    room         TEXT NOT NULL,
    version      INTEGER NOT NULL,
    hook         TEXT NOT NULL,
    level        TEXT NOT NULL,
    text         TEXT NOT NULL
);

CREATE INDEX game_logs_by_game ON game_logs (game, id);
