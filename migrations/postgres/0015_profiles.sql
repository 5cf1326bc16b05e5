-- A player's profile reads their rating in each game they played.
CREATE INDEX ratings_by_player ON ratings (player_id);
