-- The lobby's listings read the two indexes led by `joinable` and `finished` (one with the
-- game before them): a listing that leaves out a flag is a range for each of its values,
-- merged newest first. The six indexes for the other filter sets each cost a page in nearly
-- every batch (a room opened, seated or finished moves it in each index holding the flag that
-- changed); together about a seventh of the pages the writer wrote at 64 games in flight.
DROP INDEX rooms_public;
DROP INDEX rooms_public_by_game;
DROP INDEX rooms_public_by_joinable;
DROP INDEX rooms_public_by_finished;
DROP INDEX rooms_public_by_game_joinable;
DROP INDEX rooms_public_by_game_finished;
