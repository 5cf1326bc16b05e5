-- A player's rooms, whether finished or not, are read from the two `finished` indexes' ranges
-- merged newest first, so the memberships need no index led by the player: each cost a page
-- per player and game in every batch that seated someone.
DROP INDEX room_players_by_player;
DROP INDEX room_players_by_player_game;
