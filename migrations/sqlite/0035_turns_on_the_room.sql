-- Since when it has been each player's move moves from the memberships onto the room's own
-- row: a JSON object by player id (NULL when the room waits on nobody). A move ends one turn
-- and begins another, so it rewrote two memberships (and their `turn_since` index) besides
-- the room, which it rewrites anyway; now it writes no membership at all. A player's turns
-- are still read from their unfinished memberships, each room's `turns ->> player_id`.
ALTER TABLE rooms ADD COLUMN turns TEXT;
UPDATE rooms SET turns = (SELECT json_group_object(m.player_id, m.turn_since) FROM room_players m
    WHERE m.room_id = rooms.id AND m.turn_since IS NOT NULL)
WHERE id IN (SELECT room_id FROM room_players WHERE turn_since IS NOT NULL);
DROP INDEX room_players_turns;
ALTER TABLE room_players DROP COLUMN turn_since;
