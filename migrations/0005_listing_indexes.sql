-- Listings stay fast however many rooms are stored: every filter set the API allows has an
-- index whose equality columns are exactly its filters, followed by `seq`, so a page is one
-- index range read newest first and stops after `limit` rows. The lobby only ever lists public
-- rooms, so these indexes are partial and private rooms cost nothing in them.
DROP INDEX rooms_lobby;
CREATE INDEX rooms_public                          ON rooms (seq)                              WHERE private = 0;
CREATE INDEX rooms_public_by_game                  ON rooms (game, seq)                        WHERE private = 0;
CREATE INDEX rooms_public_by_joinable              ON rooms (joinable, seq)                    WHERE private = 0;
CREATE INDEX rooms_public_by_finished              ON rooms (finished, seq)                    WHERE private = 0;
CREATE INDEX rooms_public_by_joinable_finished     ON rooms (joinable, finished, seq)          WHERE private = 0;
CREATE INDEX rooms_public_by_game_joinable         ON rooms (game, joinable, seq)              WHERE private = 0;
CREATE INDEX rooms_public_by_game_finished         ON rooms (game, finished, seq)              WHERE private = 0;
CREATE INDEX rooms_public_by_game_joinable_finished ON rooms (game, joinable, finished, seq)   WHERE private = 0;

-- A player's rooms, newest first: memberships carry the room's `seq` (and its game, which never
-- changes), so "rooms of player P" and "rooms of P in game G" are index ranges too, not a
-- lookup of every room P was ever in followed by a sort.
CREATE TABLE room_players_next (
    room_id    TEXT NOT NULL REFERENCES rooms (id),
    player_id  TEXT NOT NULL REFERENCES players (id),
    active     INTEGER NOT NULL CHECK (active IN (0, 1)),
    room_seq   INTEGER NOT NULL,
    game       TEXT NOT NULL,
    PRIMARY KEY (room_id, player_id)
);
INSERT INTO room_players_next (room_id, player_id, active, room_seq, game)
SELECT m.room_id, m.player_id, m.active, r.seq, r.game
FROM room_players m JOIN rooms r ON r.id = m.room_id;
DROP TABLE room_players;
ALTER TABLE room_players_next RENAME TO room_players;
CREATE INDEX room_players_by_player ON room_players (player_id, room_seq);
CREATE INDEX room_players_by_player_game ON room_players (player_id, game, room_seq);
