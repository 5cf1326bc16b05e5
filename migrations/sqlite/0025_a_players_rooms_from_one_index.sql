-- A player's rooms are read from one membership index, `(finished, player_id, game,
-- room_seq)`: their rooms of one game are a range at each end, and their rooms of every game
-- a range for each game they have played (found by a seek per game through the same index),
-- merged newest first. The index without the game cost as much as the one with it: a room's
-- end moves a membership's entry to the end of its player's finished range in each, a page per
-- player and index, so it was about an eighth of the pages the writer wrote at 64 games in
-- flight. What dropping it saves is in docs/benchmarks.md ("Where the time goes").
DROP INDEX room_players_by_player_finished;
