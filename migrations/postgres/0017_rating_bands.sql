-- How many players of a game's leaderboard (five rated games or more) stand in each band of
-- 5 points of conservative rating, kept in the same commit as the ratings: a player's rank is
-- the sum of the bands above theirs plus the places above them in their own band, whatever
-- the number of players.
CREATE TABLE rating_bands (
    game     TEXT NOT NULL,
    band     BIGINT NOT NULL,
    players  BIGINT NOT NULL,
    PRIMARY KEY (game, band)
);
INSERT INTO rating_bands (game, band, players)
SELECT game, floor(conservative / 5)::bigint, count(*)
FROM ratings WHERE games >= 5 GROUP BY 1, 2;
