-- A game version may ship its own page (one HTML document, served sandboxed at
-- GET /games/{id}/frontend) and an example move for generic clients to suggest (JSON text,
-- kept exactly as sent). Both are NULL when the author gave none.
ALTER TABLE game_versions ADD COLUMN frontend TEXT;
ALTER TABLE game_versions ADD COLUMN move_example TEXT;
