-- Whether a game version exports `winners(roomState)`, which then says who won its finished
-- rooms (for their score and ratings) instead of the state's `winner`. Versions published
-- before this was read keep the state's word.
ALTER TABLE game_versions ADD COLUMN winners BOOLEAN NOT NULL DEFAULT false;
