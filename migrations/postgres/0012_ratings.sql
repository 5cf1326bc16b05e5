-- Ratings: every player has one per game, changed only by a finished rated room, in the same
-- commit as the version that finishes it.

-- Whether the room's games are rated: public rooms of people only, unless opened with
-- "rated": false. Rooms from before ratings are not.
ALTER TABLE rooms ADD COLUMN rated BOOLEAN NOT NULL DEFAULT false;

-- A player's rating in a game (Glicko-2's scale: 1500 to start, deviation 350), how many rated
-- games it counts, and its conservative value (rating less twice the deviation), which the
-- leaderboard ranks by.
CREATE TABLE ratings (
    game          TEXT NOT NULL,
    player_id     TEXT NOT NULL REFERENCES players (id),
    rating        DOUBLE PRECISION NOT NULL,
    deviation     DOUBLE PRECISION NOT NULL,
    volatility    DOUBLE PRECISION NOT NULL,
    games         BIGINT NOT NULL,
    conservative  DOUBLE PRECISION NOT NULL,
    updated_at    TEXT NOT NULL,
    PRIMARY KEY (game, player_id)
);

-- Every change, kept: the room and version that made it, before and after, and whether the
-- player won, so the ratings can be computed again from these (`turnhouse ratings rebuild`).
CREATE TABLE rating_changes (
    -- The order the changes were made in, which `turnhouse ratings rebuild` replays.
    seq                BIGSERIAL PRIMARY KEY,
    room_id            TEXT NOT NULL REFERENCES rooms (id),
    version            BIGINT NOT NULL,
    game               TEXT NOT NULL,
    player_id          TEXT NOT NULL REFERENCES players (id),
    rating_before      DOUBLE PRECISION NOT NULL,
    deviation_before   DOUBLE PRECISION NOT NULL,
    volatility_before  DOUBLE PRECISION NOT NULL,
    rating_after       DOUBLE PRECISION NOT NULL,
    deviation_after    DOUBLE PRECISION NOT NULL,
    volatility_after   DOUBLE PRECISION NOT NULL,
    -- Whether the player was among the winners (none in a game: a draw).
    won                BOOLEAN NOT NULL,
    UNIQUE (room_id, version, player_id)
);
