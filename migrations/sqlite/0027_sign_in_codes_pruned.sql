-- Sign-in codes are deleted once used (a code works once) or expired (each new code prunes
-- the expired ones), and a player has at most a few live at once: the table stays small
-- however often codes are asked for.
DELETE FROM sign_in_codes WHERE used_at IS NOT NULL;
CREATE INDEX sign_in_codes_expiry ON sign_in_codes (expires_at);
CREATE INDEX sign_in_codes_by_player ON sign_in_codes (player_id);
