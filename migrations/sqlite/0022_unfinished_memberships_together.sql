-- The memberships' `finished` indexes lead with `finished` rather than the player: every
-- unfinished membership then sits in one small, hot part of each index, shared by every room
-- in play, instead of one page per player. A join writes there, and a room's end moves its
-- entries from there to the end of each player's finished range: one page per player and
-- index, where `(player_id, finished, ...)` cost two (the player's unfinished range and the
-- end of their finished one). A player's finished, or unfinished, rooms are still one index
-- range each. What it saves is in docs/benchmarks.md ("Where the time goes").
DROP INDEX room_players_by_player_finished;
DROP INDEX room_players_by_player_game_finished;
CREATE INDEX room_players_by_player_finished      ON room_players (finished, player_id, room_seq);
CREATE INDEX room_players_by_player_game_finished ON room_players (finished, player_id, game, room_seq);
