-- How many players of a game's leaderboard (five rated games or more) stand in each band of
-- 5 points of conservative rating, kept in the same commit as the ratings: a player's rank is
-- the sum of the bands above theirs plus the places above them in their own band, whatever
-- the number of players.
CREATE TABLE rating_bands (
    game     TEXT NOT NULL,
    band     INTEGER NOT NULL,
    players  INTEGER NOT NULL,
    PRIMARY KEY (game, band)
);
-- band = floor(conservative / 5), which SQLite (without its maths functions) spells so.
INSERT INTO rating_bands (game, band, players)
SELECT game, CAST(conservative / 5 AS INTEGER)
             - (conservative < 0 AND conservative / 5 <> CAST(conservative / 5 AS INTEGER)),
       count(*)
FROM ratings WHERE games >= 5 GROUP BY 1, 2;
