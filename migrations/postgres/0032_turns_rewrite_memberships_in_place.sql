-- Whose move it is changes on the memberships with nearly every move: one turn begins, another
-- ends. With `turn_since` indexed, each of those rewrote the membership's entries in all three
-- of its indexes, the largest single cost of a move's commit (a quarter of the writer's time in
-- PostgreSQL). Without that index, a new turn rewrites the row in its page and nothing else
-- (see 0031), and a player's turns are read from their unfinished memberships, one range of
-- `room_players_by_player_game_finished` (`finished = false`, the player), a handful of rooms
-- for a person.
DROP INDEX room_players_turns;
ALTER TABLE room_players SET (fillfactor = 80);
