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

-- A player's rooms, newest first: memberships carry the room's `seq`, its game (which never
-- changes) and whether it is finished (rewritten when that changes), so a player's rooms, of a
-- game, finished or not, are index ranges too, not a walk of every room they were ever in.
-- `joinable` is not copied: a joinable room is never finished, so "joinable" reads the
-- player's unfinished rooms, which keeps each membership to four index entries.
CREATE TABLE room_players_next (
    room_id    TEXT NOT NULL REFERENCES rooms (id),
    player_id  TEXT NOT NULL REFERENCES players (id),
    active     INTEGER NOT NULL CHECK (active IN (0, 1)),
    room_seq   INTEGER NOT NULL,
    game       TEXT NOT NULL,
    finished   INTEGER NOT NULL CHECK (finished IN (0, 1)),
    PRIMARY KEY (room_id, player_id)
);
INSERT INTO room_players_next (room_id, player_id, active, room_seq, game, finished)
SELECT m.room_id, m.player_id, m.active, r.seq, r.game, r.finished
FROM room_players m JOIN rooms r ON r.id = m.room_id;
DROP TABLE room_players;
ALTER TABLE room_players_next RENAME TO room_players;
CREATE INDEX room_players_by_player               ON room_players (player_id, room_seq);
CREATE INDEX room_players_by_player_game          ON room_players (player_id, game, room_seq);
CREATE INDEX room_players_by_player_finished      ON room_players (player_id, finished, room_seq);
CREATE INDEX room_players_by_player_game_finished ON room_players (player_id, game, finished, room_seq);
