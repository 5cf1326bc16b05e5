-- Whose move it is. Each version keeps the players it waits on (a JSON list of ids; NULL when
-- the game could not say, and for versions written before this was kept); the room keeps its
-- latest version's. A membership keeps since when it has been that player's move, so a
-- player's turns are one index range on every server.
ALTER TABLE rooms ADD COLUMN to_move TEXT;
ALTER TABLE room_events ADD COLUMN to_move TEXT;
ALTER TABLE room_players ADD COLUMN turn_since TEXT;
CREATE INDEX room_players_turns ON room_players (player_id, turn_since) WHERE turn_since IS NOT NULL;
-- Whether a game version exports `toMove(roomState)`; otherwise its state's `plrToMoveIndex`
-- says whose move it is.
ALTER TABLE game_versions ADD COLUMN to_move BOOLEAN NOT NULL DEFAULT false;
