-- Usernames are unique ignoring case from now on: `username_key` is the name in lower case
-- (names are ASCII), unique. Names that already differed only by case keep working: the
-- oldest of each such group holds the key, and the others keep a NULL key (their exact name
-- still signs them in and finds them). No new name can take any of their keys.
ALTER TABLE players ADD COLUMN username_key TEXT;
UPDATE players SET username_key = lower(username)
WHERE id IN (
    SELECT id FROM (
        SELECT id, row_number() OVER (PARTITION BY lower(username) ORDER BY created_at, id) AS n
        FROM players
    ) AS ranked
    WHERE n = 1
);
CREATE UNIQUE INDEX players_by_name_ignoring_case ON players (username_key);
