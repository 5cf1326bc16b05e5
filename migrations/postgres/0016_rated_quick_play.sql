-- A room quick play opened keeps its creator's rating and when it opened (milliseconds since
-- the Unix epoch): quick play joins it only from within a window of that rating, 100 points
-- either way and 50 more for each 5 s it has waited, anyone after a minute. NULL for rooms
-- opened otherwise, which anyone may join.
ALTER TABLE rooms ADD COLUMN quick_play_rating DOUBLE PRECISION;
ALTER TABLE rooms ADD COLUMN quick_play_since BIGINT;
