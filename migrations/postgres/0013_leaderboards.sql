-- A game's leaderboard: players with at least five rated games, by conservative rating (rating
-- less twice the deviation), best first; ties by player id. Each page is one range of this.
CREATE INDEX ratings_leaderboard ON ratings (game, conservative DESC, player_id DESC) WHERE games >= 5;
