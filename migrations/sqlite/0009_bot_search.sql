-- Whether a published game version exports `enumerateMoves` (checked when it was published):
-- the platform can then seat computer opponents that search the game's own hooks.
ALTER TABLE game_versions ADD COLUMN enumerate_moves INTEGER NOT NULL DEFAULT 0;
