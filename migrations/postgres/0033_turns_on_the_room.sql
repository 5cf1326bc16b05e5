-- Since when it has been each player's move moves from the memberships onto the room's own
-- row: a JSON object by player id (NULL when the room waits on nobody). A move ends one turn
-- and begins another, so it rewrote two memberships besides the room, which it rewrites
-- anyway: the memberships' update was the largest statement of a move's commit (three tenths
-- of what the writer's connection executed). Now a move writes no membership at all. A
-- player's turns are still read from their unfinished memberships, each room's
-- `turns ->> player_id`.
ALTER TABLE rooms ADD COLUMN turns json;
UPDATE rooms SET turns = t.turns
FROM (SELECT room_id, json_object_agg(player_id, turn_since) AS turns FROM room_players
    WHERE turn_since IS NOT NULL GROUP BY room_id) t
WHERE rooms.id = t.room_id;
ALTER TABLE room_players DROP COLUMN turn_since;
