-- Whether a published game version exports `onPlayerView` (checked when it was published):
-- what its rooms show then depends on who looks.
ALTER TABLE game_versions ADD COLUMN on_player_view INTEGER NOT NULL DEFAULT 0;
