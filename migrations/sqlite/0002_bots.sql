-- Computer opponents are players too. `bot` is their level, NULL for people; there is one
-- account per level, and it has no token (an empty token_hash matches no secret).
ALTER TABLE players ADD COLUMN bot TEXT CHECK (bot IN ('easy', 'medium', 'hard'));
CREATE UNIQUE INDEX players_one_account_per_bot_level ON players (bot) WHERE bot IS NOT NULL;
