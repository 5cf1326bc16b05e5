-- A move rewrites its room in place. PostgreSQL writes a new version of a row without touching
-- its indexes (a "heap-only tuple") when no indexed column changed and the row's page has room
-- for it. Every move changed `updated_at`, which `rooms_waiting` indexed, so every move also
-- wrote an entry in each of the room's six indexes, which the writer's process then had to
-- find room for and later clean out.
--
-- Waiting rooms are now found by `waiting_since`: `updated_at` while the room waits for players
-- and is not finished, nothing otherwise, kept by PostgreSQL itself. A move in a game under way
-- leaves it empty, so it changes no indexed column. The table's pages keep a fifth of their
-- space free, for the versions of their rows that moves write.
ALTER TABLE rooms ADD COLUMN waiting_since TEXT
    GENERATED ALWAYS AS (CASE WHEN joinable AND NOT finished THEN updated_at END) STORED;
DROP INDEX rooms_waiting;
CREATE INDEX rooms_waiting ON rooms (waiting_since) WHERE waiting_since IS NOT NULL;
ALTER TABLE rooms SET (fillfactor = 80);
