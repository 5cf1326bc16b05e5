-- Every version records who was seated at it, so one history entry (or one stream event) is
-- enough to draw that version. Versions written before this column existed get theirs by
-- replaying each room's history: a join seats the player last, a quit unseats them, a start
-- (or play again) empties the table, a move changes nobody.
ALTER TABLE room_events ADD COLUMN players TEXT;

CREATE TEMP TABLE replayed_players (
    room_id  TEXT NOT NULL,
    version  INTEGER NOT NULL,
    players  TEXT NOT NULL,
    PRIMARY KEY (room_id, version)
);

INSERT INTO replayed_players (room_id, version, players)
WITH RECURSIVE walk (room_id, version, players) AS (
    SELECT e.room_id, e.version,
           CASE e.kind
               WHEN 'join' THEN json_array(json_object('id', e.player_id, 'username', p.username))
               ELSE json_array()
           END
    FROM room_events e LEFT JOIN players p ON p.id = e.player_id
    WHERE e.version = 1
    UNION ALL
    SELECT e.room_id, e.version,
           CASE e.kind
               WHEN 'join' THEN json_insert(w.players, '$[#]', json_object('id', e.player_id, 'username', p.username))
               WHEN 'quit' THEN (SELECT json_group_array(json(s.value)) FROM json_each(w.players) s
                                 WHERE json_extract(s.value, '$.id') IS NOT e.player_id)
               WHEN 'move' THEN w.players
               ELSE json_array()
           END
    FROM walk w
    JOIN room_events e ON e.room_id = w.room_id AND e.version = w.version + 1
    LEFT JOIN players p ON p.id = e.player_id
)
SELECT room_id, version, players FROM walk;

UPDATE room_events SET players = r.players
FROM replayed_players r
WHERE r.room_id = room_events.room_id AND r.version = room_events.version AND room_events.players IS NULL;

DROP TABLE replayed_players;
