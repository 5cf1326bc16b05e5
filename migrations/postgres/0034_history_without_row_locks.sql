-- The tables every commit of a game appends to (its history, its memberships, its ratings)
-- keep no foreign keys on PostgreSQL. There each key is checked by locking the row it names
-- (`SELECT … FOR KEY SHARE`), which writes that row's page and the log: for every version of
-- every room, the room's row and the mover's player row again. The checks were about three
-- fifths of the history insert's time (`EXPLAIN ANALYZE` on 300 rows), and a tenth of what the
-- cluster spent per game. What they guarded holds by construction: these rows are written only
-- by the writer, in the transaction that writes their room, for players who exist, and neither
-- rooms nor players are ever deleted. (SQLite keeps them: there a check is an index probe.)
ALTER TABLE room_events DROP CONSTRAINT room_events_room_id_fkey;
ALTER TABLE room_events DROP CONSTRAINT room_events_player_id_fkey;
ALTER TABLE room_players DROP CONSTRAINT room_players_room_id_fkey;
ALTER TABLE room_players DROP CONSTRAINT room_players_player_id_fkey;
ALTER TABLE rating_changes DROP CONSTRAINT rating_changes_room_id_fkey;
ALTER TABLE rating_changes DROP CONSTRAINT rating_changes_player_id_fkey;
ALTER TABLE ratings DROP CONSTRAINT ratings_player_id_fkey;
