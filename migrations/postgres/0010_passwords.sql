-- Passwords, optional: a player who sets one can sign in with their name and it on any device.
-- Kept as an Argon2id hash in the PHC string format (algorithm, parameters and salt with it),
-- never the password; NULL for a player who has none.
ALTER TABLE players ADD COLUMN password_hash TEXT;
