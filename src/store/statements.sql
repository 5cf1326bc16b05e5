-- Every statement the store runs, as each database receives it (a set statement is
-- shown with two rows). Written by `cargo test --lib store::statements`: commit the
-- change with the code that made it.

-- SQLite: BEGIN
BEGIN IMMEDIATE;

-- PostgreSQL: BEGIN
BEGIN;

-- SQLite and PostgreSQL: COMMIT
COMMIT;

-- SQLite and PostgreSQL: ROLLBACK
ROLLBACK;

-- SQLite: OLDEST_OPEN_ROOM
SELECT o.id FROM rooms o WHERE o.game = $1 AND o.clock_move_seconds IS $3 AND o.private = 0 AND o.joinable = 1 AND o.finished = 0 AND (o.seats_held_until IS NULL OR o.seats_held_until <= $4) AND NOT EXISTS (SELECT 1 FROM room_players m WHERE m.room_id = o.id AND m.player_id = $2 AND m.active = 1) AND (o.updated_at >= $5 OR EXISTS (SELECT 1 FROM room_players s JOIN players p ON p.id = s.player_id WHERE s.room_id = o.id AND s.active = 1 AND p.last_seen_at >= $5)) AND (o.quick_play_rating IS NULL OR $7 - o.quick_play_since >= 60000 OR abs(o.quick_play_rating - $6) <= 100 + 50 * (($7 - o.quick_play_since) / 5000)) ORDER BY o.seq LIMIT 1;

-- PostgreSQL: OLDEST_OPEN_ROOM
SELECT o.id FROM rooms o WHERE o.game = $1 AND o.private = false AND o.joinable = true AND o.finished = false AND CASE WHEN o.clock_move_seconds IS NOT DISTINCT FROM $3 AND (o.seats_held_until IS NULL OR o.seats_held_until <= $4) AND NOT EXISTS (SELECT 1 FROM room_players m WHERE m.room_id = o.id AND m.player_id = $2 AND m.active = true OFFSET 0) AND (o.updated_at >= $5 OR EXISTS (SELECT 1 FROM room_players s JOIN players p ON p.id = s.player_id WHERE s.room_id = o.id AND s.active = true AND p.last_seen_at >= $5 OFFSET 0)) AND (o.quick_play_rating IS NULL OR $7 - o.quick_play_since >= 60000 OR abs(o.quick_play_rating - $6) <= 100 + 50 * (($7 - o.quick_play_since) / 5000)) THEN true ELSE false END ORDER BY o.seq LIMIT 1;

-- SQLite: IDLE_WAITING_ROOMS
SELECT id, version FROM rooms WHERE joinable = 1 AND finished = 0 AND updated_at < $1 ORDER BY updated_at LIMIT $2;

-- PostgreSQL: IDLE_WAITING_ROOMS
SELECT id, version FROM rooms WHERE waiting_since < $1 ORDER BY waiting_since LIMIT $2;

-- SQLite: INSERT_ROOMS
WITH v (id, game, private, rated, version, joinable, finished, state, players, inactive_players, trigger_timeout_at, to_move, turns, rematch, seats_held_until, score, created_at, updated_at, game_version, clock_move_seconds, quick_play_for, seen_since, quick_play_rating, quick_play_since) AS (VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)) INSERT INTO rooms (id, game, private, rated, version, joinable, finished, state, players, inactive_players, trigger_timeout_at, to_move, turns, rematch, seats_held_until, score, created_at, updated_at, game_version, clock_move_seconds, quick_play_rating, quick_play_since) SELECT v.id, v.game, v.private, v.rated, v.version, v.joinable, v.finished, v.state, v.players, v.inactive_players, v.trigger_timeout_at, v.to_move, v.turns, v.rematch, v.seats_held_until, v.score, v.created_at, v.updated_at, v.game_version, v.clock_move_seconds, v.quick_play_rating, v.quick_play_since FROM v WHERE v.quick_play_for IS NULL OR NOT EXISTS (SELECT 1 FROM rooms o WHERE o.game = v.game AND o.clock_move_seconds IS v.clock_move_seconds AND o.private = 0 AND o.joinable = 1 AND o.finished = 0 AND (o.seats_held_until IS NULL OR o.seats_held_until <= v.updated_at) AND NOT EXISTS (SELECT 1 FROM room_players m WHERE m.room_id = o.id AND m.player_id = v.quick_play_for AND m.active = 1) AND (o.updated_at >= v.seen_since OR EXISTS (SELECT 1 FROM room_players s JOIN players p ON p.id = s.player_id WHERE s.room_id = o.id AND s.active = 1 AND p.last_seen_at >= v.seen_since)) AND (o.quick_play_rating IS NULL OR v.quick_play_since - o.quick_play_since >= 60000 OR abs(o.quick_play_rating - v.quick_play_rating) <= 100 + 50 * ((v.quick_play_since - o.quick_play_since) / 5000))) ON CONFLICT DO NOTHING RETURNING id;

-- PostgreSQL: INSERT_ROOMS
WITH v (id, game, private, rated, version, joinable, finished, state, players, inactive_players, trigger_timeout_at, to_move, turns, rematch, seats_held_until, score, created_at, updated_at, game_version, clock_move_seconds, quick_play_for, seen_since, quick_play_rating, quick_play_since) AS (VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24), ($25, $26, $27, $28, $29, $30, $31, $32, $33, $34, $35, $36, $37, $38, $39, $40, $41, $42, $43, $44, $45, $46, $47, $48)) INSERT INTO rooms (id, game, private, rated, version, joinable, finished, state, players, inactive_players, trigger_timeout_at, to_move, turns, rematch, seats_held_until, score, created_at, updated_at, game_version, clock_move_seconds, quick_play_rating, quick_play_since) SELECT v.id, v.game, v.private, v.rated, v.version, v.joinable, v.finished, CAST(v.state AS json), CAST(v.players AS jsonb), CAST(v.inactive_players AS jsonb), v.trigger_timeout_at, v.to_move, CAST(v.turns AS json), CAST(v.rematch AS jsonb), v.seats_held_until, CAST(v.score AS jsonb), v.created_at, v.updated_at, v.game_version, v.clock_move_seconds, v.quick_play_rating, v.quick_play_since FROM v WHERE v.quick_play_for IS NULL OR NOT EXISTS (SELECT 1 FROM rooms o WHERE o.game = v.game AND o.clock_move_seconds IS NOT DISTINCT FROM v.clock_move_seconds AND o.private = false AND o.joinable = true AND o.finished = false AND (o.seats_held_until IS NULL OR o.seats_held_until <= v.updated_at) AND NOT EXISTS (SELECT 1 FROM room_players m WHERE m.room_id = o.id AND m.player_id = v.quick_play_for AND m.active = true) AND (o.updated_at >= v.seen_since OR EXISTS (SELECT 1 FROM room_players s JOIN players p ON p.id = s.player_id WHERE s.room_id = o.id AND s.active = true AND p.last_seen_at >= v.seen_since)) AND (o.quick_play_rating IS NULL OR v.quick_play_since - o.quick_play_since >= 60000 OR abs(o.quick_play_rating - v.quick_play_rating) <= 100 + 50 * ((v.quick_play_since - o.quick_play_since) / 5000))) ON CONFLICT DO NOTHING RETURNING id;

-- SQLite: UPDATE_ROOMS
WITH v (id, version, joinable, finished, state, players, inactive_players, trigger_timeout_at, to_move, turns, rematch, seats_held_until, score, updated_at, expected_version) AS (VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)) UPDATE rooms SET version = v.version, state = v.state, players = v.players, inactive_players = v.inactive_players, trigger_timeout_at = v.trigger_timeout_at, to_move = v.to_move, turns = v.turns, rematch = v.rematch, seats_held_until = v.seats_held_until, score = v.score, updated_at = v.updated_at FROM v WHERE rooms.id = v.id AND rooms.version = v.expected_version RETURNING rooms.id;

-- PostgreSQL: UPDATE_ROOMS
WITH v (id, version, joinable, finished, state, players, inactive_players, trigger_timeout_at, to_move, turns, rematch, seats_held_until, score, updated_at, expected_version) AS (VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15), ($16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30)) UPDATE rooms SET version = v.version, joinable = v.joinable, finished = v.finished, state = CAST(v.state AS json), players = CAST(v.players AS jsonb), inactive_players = CAST(v.inactive_players AS jsonb), trigger_timeout_at = v.trigger_timeout_at, to_move = v.to_move, turns = CAST(v.turns AS json), rematch = CAST(v.rematch AS jsonb), seats_held_until = v.seats_held_until, score = CAST(v.score AS jsonb), updated_at = v.updated_at FROM v WHERE rooms.id = v.id AND rooms.version = v.expected_version RETURNING rooms.id;

-- SQLite: UPDATE_LISTED_ROOMS
WITH v (id, version, joinable, finished, state, players, inactive_players, trigger_timeout_at, to_move, turns, rematch, seats_held_until, score, updated_at, expected_version) AS (VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)) UPDATE rooms SET version = v.version, joinable = v.joinable, finished = v.finished, state = v.state, players = v.players, inactive_players = v.inactive_players, trigger_timeout_at = v.trigger_timeout_at, to_move = v.to_move, turns = v.turns, rematch = v.rematch, seats_held_until = v.seats_held_until, score = v.score, updated_at = v.updated_at FROM v WHERE rooms.id = v.id AND rooms.version = v.expected_version RETURNING rooms.id;

-- PostgreSQL: UPDATE_LISTED_ROOMS
(UPDATE_ROOMS);

-- SQLite: INSERT_EVENTS
WITH v (room_id, version, kind, player_id, move, state, joinable, finished, players, created_at, trigger_timeout_at, to_move) AS (VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)) INSERT INTO room_events (room_id, version, kind, player_id, move, state, joinable, finished, players, created_at, trigger_timeout_at, to_move) SELECT v.room_id, v.version, v.kind, v.player_id, v.move, v.state, v.joinable, v.finished, v.players, v.created_at, v.trigger_timeout_at, v.to_move FROM v;

-- PostgreSQL: INSERT_EVENTS
WITH v (room_id, version, kind, player_id, move, state, joinable, finished, players, created_at, trigger_timeout_at, to_move) AS (VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12), ($13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24)) INSERT INTO room_events (room_id, version, kind, player_id, move, state, joinable, finished, players, created_at, trigger_timeout_at, to_move) SELECT v.room_id, v.version, v.kind, v.player_id, CAST(v.move AS json), CAST(v.state AS json), v.joinable, v.finished, CAST(v.players AS jsonb), v.created_at, v.trigger_timeout_at, v.to_move FROM v;

-- SQLite: UPSERT_MEMBERS
WITH v (room_id, player_id, active) AS (VALUES (?, ?, ?), (?, ?, ?)) INSERT INTO room_players (room_id, player_id, active, room_seq, game, finished) SELECT v.room_id, v.player_id, v.active, r.seq, r.game, r.finished FROM v JOIN rooms r ON r.id = v.room_id WHERE true ON CONFLICT (room_id, player_id) DO UPDATE SET active = excluded.active;

-- PostgreSQL: UPSERT_MEMBERS
WITH v (room_id, player_id, active) AS (VALUES ($1, $2, $3), ($4, $5, $6)) INSERT INTO room_players (room_id, player_id, active, room_seq, game, finished) SELECT v.room_id, v.player_id, v.active, r.seq, r.game, r.finished FROM v JOIN rooms r ON r.id = v.room_id WHERE true ON CONFLICT (room_id, player_id) DO UPDATE SET active = excluded.active;

-- SQLite: SET_MEMBERS_FINISHED
WITH v (room_id, player_id, finished) AS (VALUES (?, ?, ?), (?, ?, ?)) UPDATE room_players SET finished = v.finished FROM v WHERE room_players.room_id = v.room_id AND room_players.player_id = v.player_id;

-- PostgreSQL: SET_MEMBERS_FINISHED
WITH v (room_id, player_id, finished) AS (VALUES ($1, $2, $3), ($4, $5, $6)) UPDATE room_players SET finished = v.finished FROM v WHERE room_players.room_id = v.room_id AND room_players.player_id = v.player_id;

-- SQLite: GAME_OWNER
SELECT owner_id FROM games WHERE id = $1;

-- PostgreSQL: GAME_OWNER
SELECT owner_id FROM games WHERE id = $1 FOR UPDATE;

-- SQLite: COPY_ROOMS
WITH RECURSIVE n (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $2) INSERT INTO rooms (id, game, private, rated, version, joinable, finished, state, players, inactive_players, created_at, updated_at, game_version, trigger_timeout_at, to_move, turns, clock_move_seconds, rematch, seats_held_until, score) SELECT lower(hex(randomblob(16))), game, private, rated, version, joinable, finished, state, players, inactive_players, created_at, updated_at, game_version, trigger_timeout_at, to_move, turns, clock_move_seconds, rematch, seats_held_until, score FROM n, rooms WHERE id = $1 ORDER BY i;

-- PostgreSQL: COPY_ROOMS
INSERT INTO rooms (id, game, private, rated, version, joinable, finished, state, players, inactive_players, created_at, updated_at, game_version, trigger_timeout_at, to_move, turns, clock_move_seconds, rematch, seats_held_until, score) SELECT replace(gen_random_uuid()::text, '-', ''), game, private, rated, version, joinable, finished, state, players, inactive_players, created_at, updated_at, game_version, trigger_timeout_at, to_move, turns, clock_move_seconds, rematch, seats_held_until, score FROM generate_series(1, $2) AS n, rooms WHERE id = $1 ORDER BY n;

-- SQLite and PostgreSQL: PING
SELECT 1;

-- SQLite and PostgreSQL: ONE_ROOM
SELECT r.seq, r.id, r.game, r.game_version, r.private, r.rated, r.version, r.joinable, r.finished, CAST(r.state AS TEXT) AS state, CAST(r.players AS TEXT) AS players, CAST(r.inactive_players AS TEXT) AS inactive_players, r.created_at, r.updated_at, r.trigger_timeout_at, r.to_move, CAST(r.turns AS TEXT) AS turns, r.clock_move_seconds, CAST(r.rematch AS TEXT) AS rematch, CAST(r.score AS TEXT) AS score FROM rooms r WHERE r.id = $1;

-- SQLite and PostgreSQL: EVENTS_PAGE
SELECT e.version, e.kind, e.player_id, p.username, CAST(e.move AS TEXT) AS move, CAST(e.state AS TEXT) AS state, e.joinable, e.finished, CAST(e.players AS TEXT) AS players, e.trigger_timeout_at, e.to_move, e.created_at FROM room_events e LEFT JOIN players p ON p.id = e.player_id WHERE e.room_id = $1 AND e.version > $2 ORDER BY e.version LIMIT $3;

-- SQLite and PostgreSQL: ACCOUNT
SELECT id, username, created_at FROM players WHERE id = $1;

-- SQLite and PostgreSQL: ACCOUNT_BY_NAME
SELECT id, username, created_at FROM players WHERE (username = $1 OR username_key = lower($1)) ORDER BY username = $1 DESC LIMIT 1;

-- SQLite and PostgreSQL: VERSIONS
SELECT v.game_id, v.version, v.name, v.description, v.min_players, v.max_players, v.format, v.sha256, v.move_example, v.on_timeout, v.on_player_view, v.enumerate_moves, v.winners, v.to_move, v.chat, (SELECT count(*) FROM game_frontend_files f WHERE f.game_id = v.game_id AND f.version = v.version) AS frontend_files, v.frontend_background, v.frontend_height, v.created_at, g.owner_id, p.username AS owner_name, g.created_at AS game_created_at, g.unpublished_at FROM game_versions v JOIN games g ON g.id = v.game_id JOIN players p ON p.id = g.owner_id WHERE ($1 IS NULL OR v.game_id = $1) AND v.version = coalesce($2, (SELECT max(version) FROM game_versions l WHERE l.game_id = v.game_id)) ORDER BY v.game_id;

-- SQLite and PostgreSQL: GAME_SOURCE
SELECT source AS text FROM game_versions WHERE game_id = $1 AND version = $2;

-- SQLite and PostgreSQL: FRONTEND_FILE
SELECT content_type, etag, body, false AS gzipped FROM game_frontend_files WHERE game_id = $1 AND version = $2 AND path = $3;

-- SQLite and PostgreSQL: FRONTEND_FILE_GZIP
SELECT content_type, etag, coalesce(gzip, body) AS body, gzip IS NOT NULL AS gzipped FROM game_frontend_files WHERE game_id = $1 AND version = $2 AND path = $3;

-- SQLite and PostgreSQL: EARLIEST_DEADLINES
SELECT id, version, trigger_timeout_at FROM rooms WHERE trigger_timeout_at IS NOT NULL ORDER BY trigger_timeout_at LIMIT $1;

-- SQLite and PostgreSQL: LAST_ACTIONS
SELECT player_id, MAX(version) AS version FROM room_events WHERE room_id = $1 AND player_id IS NOT NULL GROUP BY player_id;

-- SQLite and PostgreSQL: MARK_SEEN
UPDATE players SET last_seen_at = $1 WHERE id = $2 AND (last_seen_at IS NULL OR last_seen_at < $1);

-- SQLite and PostgreSQL: INSERT_ACCOUNT
INSERT INTO players (id, username, username_key, token_hash, created_at) VALUES ($1, $2, lower($2), '', $3) ON CONFLICT DO NOTHING RETURNING id;

-- SQLite and PostgreSQL: INSERT_BOT
INSERT INTO players (id, username, username_key, token_hash, created_at, bot) VALUES ($1, $2, lower($2), '', $3, $4) ON CONFLICT DO NOTHING;

-- SQLite and PostgreSQL: BOT_ACCOUNT
SELECT id, username FROM players WHERE bot = $1;

-- SQLite and PostgreSQL: INSERT_SESSION
INSERT INTO sessions (id, player_id, token_hash, label, created_at, last_used_at) SELECT $1, $2, $3, $4, $5, $6 WHERE NOT EXISTS (SELECT 1 FROM players WHERE id = $2 AND suspended_at IS NOT NULL) RETURNING id;

-- SQLite and PostgreSQL: SESSION
SELECT s.id, s.player_id, p.username, s.token_hash, s.label, s.created_at, s.last_used_at FROM sessions s JOIN players p ON p.id = s.player_id WHERE s.id = $1 AND s.ended_at IS NULL AND p.suspended_at IS NULL;

-- SQLite and PostgreSQL: SESSIONS_OF
SELECT s.id, s.player_id, p.username, s.token_hash, s.label, s.created_at, s.last_used_at FROM sessions s JOIN players p ON p.id = s.player_id WHERE s.player_id = $1 AND s.ended_at IS NULL ORDER BY s.created_at, s.id;

-- SQLite and PostgreSQL: END_SESSION
UPDATE sessions SET ended_at = $1 WHERE player_id = $2 AND ended_at IS NULL AND id = $3 RETURNING id;

-- SQLite and PostgreSQL: END_OTHER_SESSIONS
UPDATE sessions SET ended_at = $1 WHERE player_id = $2 AND ended_at IS NULL AND id <> $3 RETURNING id;

-- SQLite and PostgreSQL: END_ALL_SESSIONS
UPDATE sessions SET ended_at = $1 WHERE player_id = $2 AND ended_at IS NULL RETURNING id;

-- SQLite and PostgreSQL: SET_SESSION_TOKEN
UPDATE sessions SET token_hash = $1, token_changed_at = $4 WHERE id = $2 AND player_id = $3 AND ended_at IS NULL RETURNING id;

-- SQLite and PostgreSQL: MARK_SESSION_USED
UPDATE sessions SET last_used_at = $1 WHERE id = $2 AND last_used_at < $1;

-- SQLite and PostgreSQL: ENDED_SINCE
SELECT id, ended_at AS at FROM sessions WHERE ended_at IS NOT NULL AND ended_at > $1 UNION ALL SELECT id, token_changed_at AS at FROM sessions WHERE token_changed_at IS NOT NULL AND token_changed_at > $1 ORDER BY at LIMIT 1000;

-- SQLite and PostgreSQL: INSERT_CODE
INSERT INTO sign_in_codes (code_hash, player_id, created_at, expires_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING code_hash;

-- SQLite and PostgreSQL: REDEEM_CODE
DELETE FROM sign_in_codes WHERE code_hash = $1 AND used_at IS NULL AND expires_at > $2 RETURNING player_id;

-- SQLite and PostgreSQL: PRUNE_CODES
DELETE FROM sign_in_codes WHERE expires_at <= $1;

-- SQLite and PostgreSQL: LIVE_CODES
SELECT count(*) AS live FROM sign_in_codes WHERE player_id = $1;

-- SQLite and PostgreSQL: SET_PASSWORD
UPDATE players SET password_hash = $1 WHERE id = $2;

-- SQLite and PostgreSQL: PASSWORD_BY_NAME
SELECT id, username, password_hash FROM players WHERE (username = $1 OR username_key = lower($1)) AND bot IS NULL ORDER BY username = $1 DESC LIMIT 1;

-- SQLite and PostgreSQL: PASSWORD_OF
SELECT id, username, password_hash FROM players WHERE id = $1 AND bot IS NULL;

-- SQLite and PostgreSQL: PLAYER_BY_NAME
SELECT id, username FROM players WHERE (username = $1 OR username_key = lower($1)) AND bot IS NULL ORDER BY username = $1 DESC LIMIT 1;

-- SQLite and PostgreSQL: PLAYER_BY_ID
SELECT id, username FROM players WHERE id = $1 AND bot IS NULL;

-- SQLite and PostgreSQL: GRANT_ROLE
INSERT INTO player_roles (player_id, role, granted_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING;

-- SQLite and PostgreSQL: REVOKE_ROLE
DELETE FROM player_roles WHERE player_id = $1 AND role = $2;

-- SQLite and PostgreSQL: ROLES_OF
SELECT role FROM player_roles WHERE player_id = $1 ORDER BY role;

-- SQLite and PostgreSQL: SUSPEND
UPDATE players SET suspended_at = coalesce(suspended_at, $1), suspension_reason = $2 WHERE id = $3 AND bot IS NULL RETURNING id, username;

-- SQLite and PostgreSQL: END_ALL_SESSIONS
UPDATE sessions SET ended_at = $1 WHERE player_id = $2 AND ended_at IS NULL RETURNING id;

-- SQLite and PostgreSQL: UNSUSPEND
UPDATE players SET suspended_at = NULL, suspension_reason = NULL WHERE id = $1 AND bot IS NULL AND suspended_at IS NOT NULL RETURNING id, username;

-- SQLite and PostgreSQL: SUSPENSION
SELECT suspension_reason AS reason FROM players WHERE id = $1 AND suspended_at IS NOT NULL;

-- SQLite and PostgreSQL: PLAYER_RECORD
SELECT id, username, created_at, last_seen_at, suspended_at, suspension_reason FROM players WHERE (username = $1 OR username_key = lower($1)) AND bot IS NULL ORDER BY username = $1 DESC LIMIT 1;

-- SQLite and PostgreSQL: RENAME
UPDATE players SET username = $1, username_key = lower($1) WHERE id = $2 AND bot IS NULL AND NOT EXISTS (SELECT 1 FROM players o WHERE (o.username = $1 OR o.username_key = lower($1)) AND o.id <> $2) RETURNING id;

-- SQLite and PostgreSQL: UNPUBLISH
UPDATE games SET unpublished_at = coalesce(unpublished_at, $1), unpublish_reason = $2 WHERE id = $3 RETURNING id;

-- SQLite and PostgreSQL: INSERT_AUDIT
INSERT INTO audit_log (at, actor_id, actor_name, action, target_kind, target_id, reason, details, client) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9);

-- SQLite and PostgreSQL: AUDIT_PAGE
SELECT id, at, actor_id, actor_name, client, action, target_kind, target_id, reason, details FROM audit_log WHERE ($1 IS NULL OR id < $1) ORDER BY id DESC LIMIT $2;

-- SQLite and PostgreSQL: SEATS_OF
SELECT room_id FROM room_players WHERE player_id = $1 AND finished = FALSE AND active = TRUE ORDER BY room_seq;

-- SQLite and PostgreSQL: UNFINISHED_ROOMS_OF_GAME
SELECT id, joinable FROM rooms WHERE game = $1 AND finished = FALSE ORDER BY seq;

-- SQLite: RATINGS_OF
WITH v (game, player_id) AS (VALUES (?, ?), (?, ?)) SELECT r.game, r.player_id, r.rating, r.deviation, r.volatility, r.games FROM v JOIN ratings r ON r.game = v.game AND r.player_id = v.player_id;

-- PostgreSQL: RATINGS_OF
WITH v (game, player_id) AS (VALUES ($1, $2), ($3, $4)) SELECT r.game, r.player_id, r.rating, r.deviation, r.volatility, r.games FROM v JOIN ratings r ON r.game = v.game AND r.player_id = v.player_id;

-- SQLite: UPSERT_RATINGS
WITH v (game, player_id, rating, deviation, volatility, games, conservative, updated_at) AS (VALUES (?, ?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?, ?)) INSERT INTO ratings (game, player_id, rating, deviation, volatility, games, conservative, updated_at) SELECT v.game, v.player_id, v.rating, v.deviation, v.volatility, v.games, v.conservative, v.updated_at FROM v WHERE true ON CONFLICT (game, player_id) DO UPDATE SET rating = excluded.rating, deviation = excluded.deviation, volatility = excluded.volatility, games = excluded.games, conservative = excluded.conservative, updated_at = excluded.updated_at;

-- PostgreSQL: UPSERT_RATINGS
WITH v (game, player_id, rating, deviation, volatility, games, conservative, updated_at) AS (VALUES ($1, $2, $3, $4, $5, $6, $7, $8), ($9, $10, $11, $12, $13, $14, $15, $16)) INSERT INTO ratings (game, player_id, rating, deviation, volatility, games, conservative, updated_at) SELECT v.game, v.player_id, v.rating, v.deviation, v.volatility, v.games, v.conservative, v.updated_at FROM v WHERE true ON CONFLICT (game, player_id) DO UPDATE SET rating = excluded.rating, deviation = excluded.deviation, volatility = excluded.volatility, games = excluded.games, conservative = excluded.conservative, updated_at = excluded.updated_at;

-- SQLite: INSERT_RATING_CHANGES
WITH v (ord, room_id, version, game, player_id, rating_before, deviation_before, volatility_before, rating_after, deviation_after, volatility_after, won) AS (VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)) INSERT INTO rating_changes (room_id, version, game, player_id, rating_before, deviation_before, volatility_before, rating_after, deviation_after, volatility_after, won) SELECT v.room_id, v.version, v.game, v.player_id, v.rating_before, v.deviation_before, v.volatility_before, v.rating_after, v.deviation_after, v.volatility_after, v.won FROM v ORDER BY v.ord;

-- PostgreSQL: INSERT_RATING_CHANGES
WITH v (ord, room_id, version, game, player_id, rating_before, deviation_before, volatility_before, rating_after, deviation_after, volatility_after, won) AS (VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12), ($13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24)) INSERT INTO rating_changes (room_id, version, game, player_id, rating_before, deviation_before, volatility_before, rating_after, deviation_after, volatility_after, won) SELECT v.room_id, v.version, v.game, v.player_id, v.rating_before, v.deviation_before, v.volatility_before, v.rating_after, v.deviation_after, v.volatility_after, v.won FROM v ORDER BY v.ord;

-- SQLite and PostgreSQL: CHANGES_IN
SELECT c.version, c.player_id, p.username, c.rating_before, c.rating_after FROM rating_changes c JOIN players p ON p.id = c.player_id WHERE c.room_id = $1 AND c.version >= $2 AND c.version <= $3 ORDER BY c.version, c.seq;

-- SQLite and PostgreSQL: ALL_CHANGES
SELECT seq, room_id, version, game, player_id, won, rating_after, deviation_after, volatility_after FROM rating_changes ORDER BY seq;

-- SQLite and PostgreSQL: LEADERBOARD_FIRST
SELECT r.player_id, p.username, r.rating, r.deviation, r.games, r.conservative FROM ratings r JOIN players p ON p.id = r.player_id WHERE r.game = $1 AND r.games >= 5 ORDER BY r.conservative DESC, r.player_id DESC LIMIT $2;

-- SQLite and PostgreSQL: LEADERBOARD_AFTER
SELECT r.player_id, p.username, r.rating, r.deviation, r.games, r.conservative FROM ratings r JOIN players p ON p.id = r.player_id WHERE r.game = $1 AND r.games >= 5 AND (r.conservative, r.player_id) < ($2, $3) ORDER BY r.conservative DESC, r.player_id DESC LIMIT $4;

-- SQLite and PostgreSQL: SET_CHANGE
UPDATE rating_changes SET rating_before = $1, deviation_before = $2, volatility_before = $3, rating_after = $4, deviation_after = $5, volatility_after = $6 WHERE seq = $7;

-- SQLite and PostgreSQL: SET_RATING
UPDATE ratings SET rating = $3, deviation = $4, volatility = $5, games = $6, conservative = $7 WHERE game = $1 AND player_id = $2;

-- SQLite and PostgreSQL: PLAYER_RATINGS
SELECT r.game, r.rating, r.deviation, r.games, r.conservative FROM ratings r WHERE r.player_id = $1 ORDER BY r.games DESC, r.game;

-- SQLite and PostgreSQL: TURNS_OF
SELECT r.id, r.game, r.version, CAST(r.players AS TEXT) AS players, r.trigger_timeout_at, r.clock_move_seconds, (r.turns ->> m.player_id) AS turn_since FROM room_players m JOIN rooms r ON r.id = m.room_id WHERE m.finished = false AND m.player_id = $1 AND m.active = true AND r.finished = false AND (r.turns ->> m.player_id) IS NOT NULL ORDER BY r.trigger_timeout_at IS NULL, r.trigger_timeout_at, (r.turns ->> m.player_id), r.id LIMIT $2;

-- SQLite and PostgreSQL: PLACES_ABOVE
SELECT CAST((SELECT coalesce(sum(b.players), 0) FROM rating_bands b WHERE b.game = $1 AND b.band > $2) + (SELECT count(*) FROM ratings o WHERE o.game = $1 AND o.games >= 5 AND o.conservative >= $3 AND o.conservative < $6 AND (o.conservative, o.player_id) > ($4, $5)) AS BIGINT) AS above;

-- SQLite: ADD_TO_BANDS
WITH v (game, band, players) AS (VALUES (?, ?, ?), (?, ?, ?)) INSERT INTO rating_bands (game, band, players) SELECT v.game, v.band, v.players FROM v WHERE true ON CONFLICT (game, band) DO UPDATE SET players = rating_bands.players + excluded.players;

-- PostgreSQL: ADD_TO_BANDS
WITH v (game, band, players) AS (VALUES ($1, $2, $3), ($4, $5, $6)) INSERT INTO rating_bands (game, band, players) SELECT v.game, v.band, v.players FROM v WHERE true ON CONFLICT (game, band) DO UPDATE SET players = rating_bands.players + excluded.players;

-- SQLite and PostgreSQL: CLEAR_BANDS
DELETE FROM rating_bands;

-- SQLite: CHANGES_OF_PLAYERS_IN
WITH v (room_id, player_id) AS (VALUES (?, ?), (?, ?)) SELECT c.room_id, c.rating_before, c.rating_after, c.won FROM v JOIN rating_changes c ON c.room_id = v.room_id AND c.player_id = v.player_id ORDER BY c.seq;

-- PostgreSQL: CHANGES_OF_PLAYERS_IN
WITH v (room_id, player_id) AS (VALUES ($1, $2), ($3, $4)) SELECT c.room_id, c.rating_before, c.rating_after, c.won FROM v JOIN rating_changes c ON c.room_id = v.room_id AND c.player_id = v.player_id ORDER BY c.seq;

-- SQLite and PostgreSQL: INSERT_GAME
INSERT INTO games (id, owner_id, created_at) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING;

-- SQLite and PostgreSQL: INSERT_GAME_VERSION
INSERT INTO game_versions (game_id, version, name, description, min_players, max_players, format, source, sha256, created_at, move_example, on_timeout, on_player_view, enumerate_moves, frontend_background, frontend_height, winners, to_move, chat) SELECT $1, coalesce(max(version), 0) + 1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18 FROM game_versions WHERE game_id = $1 RETURNING version;

-- SQLite and PostgreSQL: COPY_FRONTEND_FILES
INSERT INTO game_frontend_files (game_id, version, path, content_type, etag, body, gzip) SELECT game_id, $2, path, content_type, etag, body, gzip FROM game_frontend_files WHERE game_id = $1 AND version = $3;

-- SQLite and PostgreSQL: INSERT_FRONTEND_FILE
INSERT INTO game_frontend_files (game_id, version, path, content_type, etag, body, gzip) VALUES ($1, $2, $3, $4, $5, $6, $7);

-- SQLite and PostgreSQL: LAST_ROOM_SEQ
SELECT coalesce(max(seq), 0) AS seq FROM rooms;

-- SQLite and PostgreSQL: COPY_MEMBERS
INSERT INTO room_players (room_id, player_id, active, room_seq, game, finished) SELECT r.id, m.player_id, m.active, r.seq, r.game, r.finished FROM rooms r, room_players m WHERE r.seq > $2 AND m.room_id = $1;

-- SQLite and PostgreSQL: COPY_EVENTS
INSERT INTO room_events (room_id, version, kind, player_id, move, state, joinable, finished, players, created_at, to_move) SELECT r.id, e.version, e.kind, e.player_id, e.move, e.state, e.joinable, e.finished, e.players, e.created_at, e.to_move FROM rooms r, room_events e WHERE r.seq > $2 AND e.room_id = $1;

-- SQLite and PostgreSQL: INSERT_GAME_LOG
INSERT INTO game_logs (game, game_version, at, room, version, hook, level, text) VALUES ($1, $2, $3, $4, $5, $6, $7, $8);

-- SQLite and PostgreSQL: TRIM_GAME_LOG
DELETE FROM game_logs WHERE game = $1 AND id <= (SELECT id FROM game_logs WHERE game = $1 ORDER BY id DESC LIMIT 1 OFFSET $2);

-- SQLite and PostgreSQL: GAME_LOG_AFTER
SELECT id, game, game_version, at, room, version, hook, level, text FROM game_logs WHERE game = $1 AND id > $2 ORDER BY id LIMIT $3;

-- SQLite and PostgreSQL: GAME_LOG_NEWEST
SELECT id, game, game_version, at, room, version, hook, level, text FROM game_logs WHERE game = $1 ORDER BY id DESC LIMIT $2;

-- SQLite: INSERT_OUTBOX
WITH v (id, endpoint_id, type, room_id, game, version, data, body, created_at, retry_until) AS (VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)) INSERT INTO outbox (id, endpoint_id, type, room_id, game, version, data, body, created_at, state, due_at, retry_until) SELECT v.id, v.endpoint_id, v.type, v.room_id, v.game, v.version, v.data, v.body, v.created_at, 'pending', v.created_at, v.retry_until FROM v JOIN webhook_endpoints e ON e.id = v.endpoint_id WHERE e.disabled_at IS NULL;

-- PostgreSQL: INSERT_OUTBOX
WITH v (id, endpoint_id, type, room_id, game, version, data, body, created_at, retry_until) AS (VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10), ($11, $12, $13, $14, $15, $16, $17, $18, $19, $20)) INSERT INTO outbox (id, endpoint_id, type, room_id, game, version, data, body, created_at, state, due_at, retry_until) SELECT v.id, v.endpoint_id, v.type, v.room_id, v.game, v.version, v.data, v.body, v.created_at, 'pending', v.created_at, v.retry_until FROM v JOIN webhook_endpoints e ON e.id = v.endpoint_id WHERE e.disabled_at IS NULL;

-- SQLite: SETTLE_OUTBOX
WITH v (seq, state, due_at, status, done_at) AS (VALUES (?, ?, ?, ?, ?), (?, ?, ?, ?, ?)) UPDATE outbox SET state = v.state, due_at = v.due_at, claimed_until = NULL, attempts = attempts + 1, last_status = v.status, done_at = v.done_at FROM v WHERE outbox.seq = v.seq;

-- PostgreSQL: SETTLE_OUTBOX
WITH v (seq, state, due_at, status, done_at) AS (VALUES ($1, $2, $3, $4, $5), ($6, $7, $8, $9, $10)) UPDATE outbox SET state = v.state, due_at = v.due_at, claimed_until = NULL, attempts = attempts + 1, last_status = v.status, done_at = v.done_at FROM v WHERE outbox.seq = v.seq;

-- SQLite: INSERT_ATTEMPTS
WITH v (outbox_seq, attempt, at, status, latency_ms, response, error) AS (VALUES (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?)) INSERT INTO outbox_attempts (outbox_seq, attempt, at, status, latency_ms, response, error) SELECT v.outbox_seq, v.attempt, v.at, v.status, v.latency_ms, v.response, v.error FROM v WHERE true ON CONFLICT DO NOTHING;

-- PostgreSQL: INSERT_ATTEMPTS
WITH v (outbox_seq, attempt, at, status, latency_ms, response, error) AS (VALUES ($1, $2, $3, $4, $5, $6, $7), ($8, $9, $10, $11, $12, $13, $14)) INSERT INTO outbox_attempts (outbox_seq, attempt, at, status, latency_ms, response, error) SELECT v.outbox_seq, v.attempt, v.at, v.status, v.latency_ms, v.response, v.error FROM v WHERE true ON CONFLICT DO NOTHING;

-- SQLite: CLAIM_OUTBOX
UPDATE outbox SET claimed_until = $3 WHERE seq IN (SELECT seq FROM outbox WHERE endpoint_id = $1 AND due_at <= $2 AND (claimed_until IS NULL OR claimed_until <= $2) ORDER BY due_at LIMIT $4) RETURNING seq, id, type, room_id, game, version, data, body, created_at, retry_until, attempts;

-- PostgreSQL: CLAIM_OUTBOX
UPDATE outbox SET claimed_until = $3 WHERE seq IN (SELECT seq FROM outbox WHERE endpoint_id = $1 AND due_at <= $2 AND (claimed_until IS NULL OR claimed_until <= $2) ORDER BY due_at LIMIT $4 FOR UPDATE SKIP LOCKED) RETURNING seq, id, type, room_id, game, version, data, body, created_at, retry_until, attempts;

-- SQLite and PostgreSQL: ENDPOINT
SELECT id, game_id, created_by, url, events, secret, previous_secret, previous_secret_until, paused_at, disabled_at, disabled_reason, failing_since, created_at FROM webhook_endpoints WHERE id = $1;

-- SQLite and PostgreSQL: ENDPOINTS
SELECT id, game_id, created_by, url, events, secret, previous_secret, previous_secret_until, paused_at, disabled_at, disabled_reason, failing_since, created_at FROM webhook_endpoints ORDER BY created_at, id;

-- SQLite and PostgreSQL: INSERT_ENDPOINT
INSERT INTO webhook_endpoints (id, game_id, created_by, url, events, secret, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7);

-- SQLite and PostgreSQL: UPDATE_ENDPOINT
UPDATE webhook_endpoints SET url = coalesce($2, url), events = coalesce($3, events) WHERE id = $1 RETURNING id;

-- SQLite and PostgreSQL: PAUSE_ENDPOINT
UPDATE webhook_endpoints SET paused_at = coalesce(paused_at, $2) WHERE id = $1 RETURNING id;

-- SQLite and PostgreSQL: RESUME_ENDPOINT
UPDATE webhook_endpoints SET paused_at = NULL, disabled_at = NULL, disabled_reason = NULL, failing_since = NULL WHERE id = $1 RETURNING id;

-- SQLite and PostgreSQL: ROTATE_SECRET
UPDATE webhook_endpoints SET previous_secret = secret, previous_secret_until = $3, secret = $2 WHERE id = $1 RETURNING id;

-- SQLite and PostgreSQL: DELETE_ENDPOINT
DELETE FROM webhook_endpoints WHERE id = $1 RETURNING id;

-- SQLite and PostgreSQL: SUBSCRIBERS
SELECT id FROM webhook_endpoints WHERE disabled_at IS NULL AND (game_id IS NULL OR game_id = $1) AND ',' || events || ',' LIKE '%,' || $2 || ',%';

-- SQLite and PostgreSQL: SUBSCRIPTIONS
SELECT id, coalesce(game_id, '') AS game_id, events FROM webhook_endpoints WHERE disabled_at IS NULL;

-- SQLite and PostgreSQL: ENDPOINT_FAILING
UPDATE webhook_endpoints SET failing_since = coalesce(failing_since, $2) WHERE id = $1;

-- SQLite and PostgreSQL: ENDPOINT_ANSWERING
UPDATE webhook_endpoints SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL;

-- SQLite and PostgreSQL: DISABLE_ENDPOINT
UPDATE webhook_endpoints SET disabled_at = $2, disabled_reason = $3 WHERE id = $1 AND disabled_at IS NULL AND failing_since <= $4 RETURNING id;

-- SQLite and PostgreSQL: DELIVERIES
SELECT seq, id, endpoint_id, type, room_id, state, created_at, due_at, retry_until, attempts, last_status FROM outbox WHERE endpoint_id = $1 AND seq < $2 ORDER BY seq DESC LIMIT $3;

-- SQLite and PostgreSQL: DELIVERY
SELECT seq, id, endpoint_id, type, room_id, state, created_at, due_at, retry_until, attempts, last_status FROM outbox WHERE endpoint_id = $1 AND id = $2;

-- SQLite and PostgreSQL: OUTBOX_BACKLOG
SELECT count(*) AS waiting, min(o.due_at) AS earliest FROM outbox o JOIN webhook_endpoints e ON e.id = o.endpoint_id WHERE o.due_at IS NOT NULL AND e.paused_at IS NULL AND e.disabled_at IS NULL;

-- SQLite and PostgreSQL: ATTEMPTS
SELECT a.outbox_seq, a.attempt, a.at, a.status, a.latency_ms, a.response, a.error FROM outbox_attempts a JOIN outbox o ON o.seq = a.outbox_seq WHERE o.endpoint_id = $1 AND a.outbox_seq BETWEEN $2 AND $3 ORDER BY a.outbox_seq, a.attempt;

-- SQLite and PostgreSQL: REDELIVER
UPDATE outbox SET state = 'pending', due_at = $3, retry_until = $4, claimed_until = NULL, done_at = NULL WHERE endpoint_id = $1 AND id = $2 RETURNING seq;

-- SQLite and PostgreSQL: PRUNE_OUTBOX
DELETE FROM outbox WHERE seq IN (SELECT seq FROM outbox WHERE done_at < $1 ORDER BY done_at LIMIT $2) RETURNING seq;

-- SQLite: VERSIONS_OF
WITH v (room_id, version) AS (VALUES (?, ?), (?, ?)) SELECT e.room_id, e.version, e.kind, e.player_id, p.username, CAST(e.move AS TEXT) AS move, CAST(e.state AS TEXT) AS state, e.joinable, e.finished, CAST(e.players AS TEXT) AS players, e.trigger_timeout_at, e.to_move, e.created_at FROM v JOIN room_events e ON e.room_id = v.room_id AND e.version = v.version LEFT JOIN players p ON p.id = e.player_id;

-- PostgreSQL: VERSIONS_OF
WITH v (room_id, version) AS (VALUES ($1, $2), ($3, $4)) SELECT e.room_id, e.version, e.kind, e.player_id, p.username, CAST(e.move AS TEXT) AS move, CAST(e.state AS TEXT) AS state, e.joinable, e.finished, CAST(e.players AS TEXT) AS players, e.trigger_timeout_at, e.to_move, e.created_at FROM v JOIN room_events e ON e.room_id = v.room_id AND e.version = v.version LEFT JOIN players p ON p.id = e.player_id;

-- SQLite and PostgreSQL: RELEASE_CLAIMS
UPDATE outbox SET claimed_until = NULL WHERE due_at IS NOT NULL AND claimed_until IS NOT NULL;

-- SQLite: RELEASE_ROWS
WITH v (seq) AS (VALUES (?), (?)) UPDATE outbox SET claimed_until = NULL FROM v WHERE outbox.seq = v.seq AND outbox.due_at IS NOT NULL;

-- PostgreSQL: RELEASE_ROWS
WITH v (seq) AS (VALUES ($1), ($2)) UPDATE outbox SET claimed_until = NULL FROM v WHERE outbox.seq = v.seq AND outbox.due_at IS NOT NULL;

-- SQLite: INSERT_DIGESTS
WITH v (player_id, at, due_at) AS (VALUES (?, ?, ?), (?, ?, ?)) INSERT INTO notices (channel, kind, player_id, destination, created_at, state, due_at) SELECT 'mail', 'turns', v.player_id, e.address, v.at, 'pending', v.due_at FROM v JOIN player_emails e ON e.player_id = v.player_id WHERE e.turn_mail = true ON CONFLICT DO NOTHING;

-- PostgreSQL: INSERT_DIGESTS
WITH v (player_id, at, due_at) AS (VALUES ($1, $2, $3), ($4, $5, $6)) INSERT INTO notices (channel, kind, player_id, destination, created_at, state, due_at) SELECT 'mail', 'turns', v.player_id, e.address, v.at, 'pending', v.due_at FROM v JOIN player_emails e ON e.player_id = v.player_id WHERE e.turn_mail = true ON CONFLICT DO NOTHING;

-- SQLite: INSERT_CLOCK_WARNINGS
WITH v (player_id, room_id, version, at, due_at) AS (VALUES (?, ?, ?, ?, ?), (?, ?, ?, ?, ?)) INSERT INTO notices (channel, kind, player_id, destination, room_id, version, created_at, state, due_at) SELECT 'mail', 'clock', v.player_id, e.address, v.room_id, v.version, v.at, 'pending', v.due_at FROM v JOIN player_emails e ON e.player_id = v.player_id WHERE e.clock_mail = true AND NOT EXISTS (SELECT 1 FROM muted_rooms m WHERE m.player_id = v.player_id AND m.room_id = v.room_id);

-- PostgreSQL: INSERT_CLOCK_WARNINGS
WITH v (player_id, room_id, version, at, due_at) AS (VALUES ($1, $2, $3, $4, $5), ($6, $7, $8, $9, $10)) INSERT INTO notices (channel, kind, player_id, destination, room_id, version, created_at, state, due_at) SELECT 'mail', 'clock', v.player_id, e.address, v.room_id, v.version, v.at, 'pending', v.due_at FROM v JOIN player_emails e ON e.player_id = v.player_id WHERE e.clock_mail = true AND NOT EXISTS (SELECT 1 FROM muted_rooms m WHERE m.player_id = v.player_id AND m.room_id = v.room_id);

-- SQLite: INSERT_TURN_PUSHES
WITH v (player_id, room_id, version, at) AS (VALUES (?, ?, ?, ?), (?, ?, ?, ?)) INSERT INTO turn_pushes (room_id, player_id, version, at) SELECT v.room_id, v.player_id, v.version, v.at FROM v WHERE EXISTS (SELECT 1 FROM push_subscriptions s WHERE s.player_id = v.player_id) AND NOT EXISTS (SELECT 1 FROM muted_rooms m WHERE m.player_id = v.player_id AND m.room_id = v.room_id);

-- PostgreSQL: INSERT_TURN_PUSHES
WITH v (player_id, room_id, version, at) AS (VALUES ($1, $2, $3, $4), ($5, $6, $7, $8)) INSERT INTO turn_pushes (room_id, player_id, version, at) SELECT v.room_id, v.player_id, v.version, v.at FROM v WHERE EXISTS (SELECT 1 FROM push_subscriptions s WHERE s.player_id = v.player_id) AND NOT EXISTS (SELECT 1 FROM muted_rooms m WHERE m.player_id = v.player_id AND m.room_id = v.room_id);

-- SQLite and PostgreSQL: MAKE_TURN_PUSHES
INSERT INTO notices (channel, kind, player_id, destination, room_id, version, created_at, state, due_at) SELECT 'push', 'turn', t.player_id, s.id, t.room_id, t.version, t.at, 'pending', t.at FROM turn_pushes t JOIN rooms r ON r.id = t.room_id AND (r.turns ->> t.player_id) = t.at JOIN push_subscriptions s ON s.player_id = t.player_id WHERE t.at <= $1 AND NOT EXISTS (SELECT 1 FROM muted_rooms u WHERE u.player_id = t.player_id AND u.room_id = t.room_id) RETURNING room_id, player_id;

-- SQLite and PostgreSQL: DUE_TURN_PUSHES
SELECT count(*) AS taken FROM turn_pushes WHERE at <= $1;

-- SQLite and PostgreSQL: DROP_TURN_PUSHES
DELETE FROM turn_pushes WHERE at <= $1;

-- SQLite: TAKE_TURN_PUSHES
(in steps);

-- PostgreSQL: TAKE_TURN_PUSHES
WITH taken AS (DELETE FROM turn_pushes WHERE at <= $1 RETURNING room_id, player_id, version, at), made AS (INSERT INTO notices (channel, kind, player_id, destination, room_id, version, created_at, state, due_at) SELECT 'push', 'turn', t.player_id, s.id, t.room_id, t.version, t.at, 'pending', t.at FROM taken t JOIN rooms r ON r.id = t.room_id AND (r.turns ->> t.player_id) = t.at JOIN push_subscriptions s ON s.player_id = t.player_id WHERE NOT EXISTS (SELECT 1 FROM muted_rooms u WHERE u.player_id = t.player_id AND u.room_id = t.room_id) RETURNING room_id, player_id) SELECT (SELECT count(*) FROM taken) AS taken, (SELECT count(*) FROM (SELECT DISTINCT room_id, player_id FROM made) d) AS made;

-- SQLite and PostgreSQL: NEXT_TURN_PUSH
SELECT min(at) AS at FROM turn_pushes;

-- SQLite and PostgreSQL: INSERT_NOTICE
INSERT INTO notices (channel, kind, player_id, destination, body, created_at, state, due_at) VALUES ($1, $2, $3, $4, $5, $6, 'pending', $6);

-- SQLite and PostgreSQL: INSERT_MAIL_TO_VERIFIED
INSERT INTO notices (channel, kind, player_id, destination, body, created_at, state, due_at) SELECT 'mail', $2, player_id, address, $3, $4, 'pending', $4 FROM player_emails WHERE player_id = $1;

-- SQLite: CLAIM_NOTICES
UPDATE notices SET claimed_until = $2 WHERE seq IN (SELECT seq FROM notices WHERE due_at <= $1 AND (claimed_until IS NULL OR claimed_until <= $1) ORDER BY due_at LIMIT $3) RETURNING seq, channel, kind, player_id, destination, room_id, version, body, created_at, attempts;

-- PostgreSQL: CLAIM_NOTICES
UPDATE notices SET claimed_until = $2 WHERE seq IN (SELECT seq FROM notices WHERE due_at <= $1 AND (claimed_until IS NULL OR claimed_until <= $1) ORDER BY due_at LIMIT $3 FOR UPDATE SKIP LOCKED) RETURNING seq, channel, kind, player_id, destination, room_id, version, body, created_at, attempts;

-- SQLite: SETTLE_NOTICES
WITH v (seq, state, due_at, attempted, error, done_at) AS (VALUES (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?)) UPDATE notices SET state = v.state, due_at = v.due_at, claimed_until = NULL, attempts = notices.attempts + v.attempted, last_error = v.error, done_at = v.done_at, body = CASE WHEN v.done_at IS NULL THEN notices.body ELSE NULL END FROM v WHERE notices.seq = v.seq;

-- PostgreSQL: SETTLE_NOTICES
WITH v (seq, state, due_at, attempted, error, done_at) AS (VALUES ($1, $2, $3, $4, $5, $6), ($7, $8, $9, $10, $11, $12)) UPDATE notices SET state = v.state, due_at = v.due_at, claimed_until = NULL, attempts = notices.attempts + v.attempted, last_error = v.error, done_at = v.done_at, body = CASE WHEN v.done_at IS NULL THEN notices.body ELSE NULL END FROM v WHERE notices.seq = v.seq;

-- SQLite: RELEASE_SOME_NOTICES
WITH v (seq) AS (VALUES (?), (?)) UPDATE notices SET claimed_until = NULL FROM v WHERE notices.seq = v.seq AND notices.due_at IS NOT NULL;

-- PostgreSQL: RELEASE_SOME_NOTICES
WITH v (seq) AS (VALUES ($1), ($2)) UPDATE notices SET claimed_until = NULL FROM v WHERE notices.seq = v.seq AND notices.due_at IS NOT NULL;

-- SQLite and PostgreSQL: DIGEST_MAILED
UPDATE player_emails SET turns_mailed_at = $2 WHERE player_id = $1;

-- SQLite and PostgreSQL: DROP_SUBSCRIPTION
DELETE FROM push_subscriptions WHERE id = $1;

-- SQLite and PostgreSQL: PRUNE_NOTICES
DELETE FROM notices WHERE seq IN (SELECT seq FROM notices WHERE done_at < $1 ORDER BY done_at LIMIT $2) RETURNING seq;

-- SQLite and PostgreSQL: RELEASE_NOTICES
UPDATE notices SET claimed_until = NULL WHERE due_at IS NOT NULL AND claimed_until IS NOT NULL;

-- SQLite and PostgreSQL: DROP_PAST_TURNS
DELETE FROM notices WHERE seq IN (SELECT n.seq FROM notices n WHERE n.channel = 'push' AND n.due_at <= $1 AND (n.claimed_until IS NULL OR n.claimed_until <= $1) AND NOT EXISTS (SELECT 1 FROM rooms r WHERE r.id = n.room_id AND (r.turns ->> n.player_id) IS NOT NULL) LIMIT $2) RETURNING seq;

-- SQLite and PostgreSQL: EMAIL_OF
SELECT address, verified_at, turn_mail, clock_mail FROM player_emails WHERE player_id = $1;

-- SQLite and PostgreSQL: PENDING_EMAIL
SELECT address FROM email_tokens WHERE player_id = $1 AND purpose = 'verify' AND expires_at > $2 ORDER BY created_at DESC LIMIT 1;

-- SQLite and PostgreSQL: EMAIL_TOKEN
SELECT player_id, address FROM email_tokens WHERE token_hash = $1 AND purpose = $2 AND expires_at > $3;

-- SQLite and PostgreSQL: RESET_ACCOUNT
SELECT p.id, p.username, e.address FROM players p JOIN player_emails e ON e.player_id = p.id WHERE (p.username_key = lower($1) OR e.address_key = lower($1)) AND p.bot IS NULL LIMIT 1;

-- SQLite and PostgreSQL: DROP_TOKENS
DELETE FROM email_tokens WHERE player_id = $1 AND purpose = $2;

-- SQLite and PostgreSQL: INSERT_TOKEN
INSERT INTO email_tokens (token_hash, player_id, purpose, address, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6);

-- SQLite and PostgreSQL: USE_TOKEN
DELETE FROM email_tokens WHERE token_hash = $1 AND purpose = $2 AND expires_at > $3 RETURNING player_id, address;

-- SQLite and PostgreSQL: PRUNE_TOKENS
DELETE FROM email_tokens WHERE expires_at <= $1;

-- SQLite and PostgreSQL: ADDRESS_HOLDER
SELECT player_id FROM player_emails WHERE address_key = lower($1) AND player_id <> $2;

-- SQLite and PostgreSQL: SET_ADDRESS
INSERT INTO player_emails (player_id, address, address_key, verified_at) VALUES ($1, $2, lower($2), $3) ON CONFLICT (player_id) DO UPDATE SET address = excluded.address, address_key = excluded.address_key, verified_at = excluded.verified_at;

-- SQLite and PostgreSQL: DROP_ADDRESS
DELETE FROM player_emails WHERE player_id = $1;

-- SQLite and PostgreSQL: SET_MAIL_SETTINGS
UPDATE player_emails SET turn_mail = $2, clock_mail = $3 WHERE player_id = $1;

-- SQLite and PostgreSQL: MUTE_ROOM
INSERT INTO muted_rooms (player_id, room_id) VALUES ($1, $2) ON CONFLICT DO NOTHING;

-- SQLite and PostgreSQL: UNMUTE_ROOM
DELETE FROM muted_rooms WHERE player_id = $1 AND room_id = $2;

-- SQLite and PostgreSQL: MUTED_ROOMS
SELECT room_id FROM muted_rooms WHERE player_id = $1 ORDER BY room_id;

-- SQLite and PostgreSQL: DIGEST_ROOMS
SELECT r.id, r.game, r.version, CAST(r.players AS TEXT) AS players, r.trigger_timeout_at, r.clock_move_seconds, (r.turns ->> m.player_id) AS turn_since, (p.last_seen_at IS NULL OR p.last_seen_at < (r.turns ->> m.player_id)) AS away FROM room_players m JOIN rooms r ON r.id = m.room_id JOIN players p ON p.id = m.player_id WHERE m.finished = false AND m.player_id = $1 AND m.active = true AND r.finished = false AND (r.turns ->> m.player_id) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM muted_rooms x WHERE x.player_id = m.player_id AND x.room_id = m.room_id) ORDER BY r.trigger_timeout_at IS NULL, r.trigger_timeout_at, (r.turns ->> m.player_id), r.id LIMIT 50;

-- SQLite and PostgreSQL: DIGEST_MAILED_AT
SELECT turns_mailed_at FROM player_emails WHERE player_id = $1;

-- SQLite and PostgreSQL: INSERT_SERVER_KEY
INSERT INTO server_keys (name, value) VALUES ($1, $2) ON CONFLICT DO NOTHING;

-- SQLite and PostgreSQL: SERVER_KEY
SELECT value FROM server_keys WHERE name = $1;

-- SQLite and PostgreSQL: UPSERT_SUBSCRIPTION
INSERT INTO push_subscriptions (id, player_id, endpoint, p256dh, auth, created_at) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (endpoint) DO UPDATE SET player_id = excluded.player_id, p256dh = excluded.p256dh, auth = excluded.auth RETURNING id;

-- SQLite and PostgreSQL: SUBSCRIPTION_COUNT
SELECT count(*) AS n FROM push_subscriptions WHERE player_id = $1;

-- SQLite and PostgreSQL: SUBSCRIPTIONS_OF
SELECT id, player_id, endpoint, p256dh, auth, created_at FROM push_subscriptions WHERE player_id = $1 ORDER BY created_at, id;

-- SQLite: PUSH_TARGETS
WITH v (seq, subscription, player_id, room_id) AS (VALUES (?, ?, ?, ?), (?, ?, ?, ?)) SELECT v.seq, s.id AS subscription_id, s.player_id, s.endpoint, s.p256dh, s.auth, s.created_at AS subscribed_at, r.id, r.game, r.version, CAST(r.players AS TEXT) AS players, r.trigger_timeout_at, r.clock_move_seconds, (r.turns ->> m.player_id) AS turn_since FROM v JOIN push_subscriptions s ON s.id = v.subscription AND s.player_id = v.player_id JOIN room_players m ON m.room_id = v.room_id AND m.player_id = v.player_id JOIN rooms r ON r.id = m.room_id WHERE (r.turns ->> m.player_id) IS NOT NULL AND m.active = true AND r.finished = false;

-- PostgreSQL: PUSH_TARGETS
WITH v (seq, subscription, player_id, room_id) AS (VALUES ($1, $2, $3, $4), ($5, $6, $7, $8)) SELECT v.seq, s.id AS subscription_id, s.player_id, s.endpoint, s.p256dh, s.auth, s.created_at AS subscribed_at, r.id, r.game, r.version, CAST(r.players AS TEXT) AS players, r.trigger_timeout_at, r.clock_move_seconds, (r.turns ->> m.player_id) AS turn_since FROM v JOIN push_subscriptions s ON s.id = v.subscription AND s.player_id = v.player_id JOIN room_players m ON m.room_id = v.room_id AND m.player_id = v.player_id JOIN rooms r ON r.id = m.room_id WHERE (r.turns ->> m.player_id) IS NOT NULL AND m.active = true AND r.finished = false;

-- SQLite and PostgreSQL: REMOVE_SUBSCRIPTION
DELETE FROM push_subscriptions WHERE player_id = $1 AND id = $2 RETURNING id;

-- SQLite and PostgreSQL: INSERT_MESSAGE
INSERT INTO chat_messages (room_id, channel, player_id, body, room_version, created_at) SELECT $1, $2, $3, $4, (SELECT version FROM rooms WHERE id = $5), $6 RETURNING id, room_version;

-- SQLite and PostgreSQL: ROOM_MESSAGES_AFTER
SELECT m.id, m.room_id, m.channel, m.player_id, p.username, m.body, m.room_version, m.created_at, m.deleted_at FROM chat_messages m JOIN players p ON p.id = m.player_id WHERE m.room_id = $1 AND m.channel = $2 AND m.id > $3 AND NOT EXISTS (SELECT 1 FROM player_blocks b WHERE b.player_id = $4 AND b.blocked_id = m.player_id) ORDER BY m.id LIMIT $5;

-- SQLite and PostgreSQL: ROOM_STREAM_AFTER
SELECT m.id, m.room_id, m.channel, m.player_id, p.username, m.body, m.room_version, m.created_at, m.deleted_at FROM chat_messages m JOIN players p ON p.id = m.player_id WHERE m.room_id = $1 AND m.id > $2 ORDER BY m.id LIMIT $3;

-- SQLite and PostgreSQL: LAST_ROOM_MESSAGE
SELECT COALESCE(MAX(id), 0) AS id FROM chat_messages WHERE room_id = $1;

-- SQLite and PostgreSQL: LAST_LOBBY_MESSAGE
SELECT COALESCE(MAX(id), 0) AS id FROM chat_messages WHERE room_id IS NULL AND channel = 'lobby';

-- SQLite and PostgreSQL: LOBBY_MESSAGES_AFTER
SELECT m.id, m.room_id, m.channel, m.player_id, p.username, m.body, m.room_version, m.created_at, m.deleted_at FROM chat_messages m JOIN players p ON p.id = m.player_id WHERE m.room_id IS NULL AND m.channel = 'lobby' AND m.id > $1 AND NOT EXISTS (SELECT 1 FROM player_blocks b WHERE b.player_id = $2 AND b.blocked_id = m.player_id) ORDER BY m.id LIMIT $3;

-- SQLite and PostgreSQL: LOBBY_MESSAGES_BEFORE
SELECT m.id, m.room_id, m.channel, m.player_id, p.username, m.body, m.room_version, m.created_at, m.deleted_at FROM chat_messages m JOIN players p ON p.id = m.player_id WHERE m.room_id IS NULL AND m.channel = 'lobby' AND m.id < $1 AND NOT EXISTS (SELECT 1 FROM player_blocks b WHERE b.player_id = $2 AND b.blocked_id = m.player_id) ORDER BY m.id DESC LIMIT $3;

-- SQLite and PostgreSQL: MESSAGE
SELECT m.id, m.room_id, m.channel, m.player_id, p.username, m.body, m.room_version, m.created_at, m.deleted_at FROM chat_messages m JOIN players p ON p.id = m.player_id WHERE m.id = $1;

-- SQLite and PostgreSQL: ROOM_CHAT
SELECT r.finished, r.version, COALESCE(v.chat, TRUE) AS chat, EXISTS (SELECT 1 FROM room_players s WHERE s.room_id = r.id AND s.player_id = $2) AS seated, EXISTS (SELECT 1 FROM closed_galleries g WHERE g.room_id = r.id) AS gallery_closed, (SELECT e.player_id FROM room_events e WHERE e.room_id = r.id AND e.version = 1) AS opener FROM rooms r LEFT JOIN game_versions v ON v.game_id = r.game AND v.version = r.game_version WHERE r.id = $1;

-- SQLite and PostgreSQL: MUTED_UNTIL
SELECT chat_muted_until FROM players WHERE id = $1;

-- SQLite and PostgreSQL: MUTE
UPDATE players SET chat_muted_until = $2 WHERE id = $1 RETURNING id, username;

-- SQLite and PostgreSQL: DELETE_MESSAGE
UPDATE chat_messages SET body = NULL, deleted_at = $2 WHERE id = $1 AND deleted_at IS NULL RETURNING id, room_id;

-- SQLite and PostgreSQL: INSERT_REPORT
INSERT INTO chat_reports (message_id, reporter_id, reason, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT (message_id, reporter_id) DO NOTHING;

-- SQLite and PostgreSQL: OPEN_REPORTS
SELECT m.id, m.room_id, m.channel, m.player_id, p.username, m.body, m.room_version, m.created_at, m.deleted_at, r.reporter_id, rp.username AS reporter_name, r.reason, r.created_at AS reported_at FROM chat_reports r JOIN chat_messages m ON m.id = r.message_id JOIN players p ON p.id = m.player_id JOIN players rp ON rp.id = r.reporter_id WHERE m.deleted_at IS NULL ORDER BY r.created_at DESC, m.id DESC LIMIT $1;

-- SQLite and PostgreSQL: BLOCK
INSERT INTO player_blocks (player_id, blocked_id, created_at) VALUES ($1, $2, $3) ON CONFLICT (player_id, blocked_id) DO NOTHING;

-- SQLite and PostgreSQL: UNBLOCK
DELETE FROM player_blocks WHERE player_id = $1 AND blocked_id = $2 RETURNING blocked_id;

-- SQLite and PostgreSQL: BLOCKS_OF
SELECT p.id, p.username FROM player_blocks b JOIN players p ON p.id = b.blocked_id WHERE b.player_id = $1 ORDER BY b.created_at, p.id;

-- SQLite and PostgreSQL: CLOSE_GALLERY
INSERT INTO closed_galleries (room_id) VALUES ($1) ON CONFLICT (room_id) DO NOTHING;

-- SQLite and PostgreSQL: PLAYER_GAMES
WITH RECURSIVE g (game) AS (SELECT (SELECT game FROM room_players WHERE finished = $1 AND player_id = $2 ORDER BY game LIMIT 1) UNION ALL SELECT (SELECT game FROM room_players WHERE finished = $1 AND player_id = $2 AND game > g.game ORDER BY game LIMIT 1) FROM g WHERE g.game IS NOT NULL) SELECT game FROM g WHERE game IS NOT NULL LIMIT $3;

-- SQLite: LISTING (the lobby)
SELECT r.seq, r.id, r.game, r.game_version, r.private, r.rated, r.version, r.joinable, r.finished, CAST(r.state AS TEXT) AS state, CAST(r.players AS TEXT) AS players, CAST(r.inactive_players AS TEXT) AS inactive_players, r.created_at, r.updated_at, r.trigger_timeout_at, r.to_move, CAST(r.turns AS TEXT) AS turns, r.clock_move_seconds, CAST(r.rematch AS TEXT) AS rematch, CAST(r.score AS TEXT) AS score FROM rooms r WHERE r.private = 0 AND r.joinable = $1 AND r.finished = $2 AND r.seq < $3 UNION ALL SELECT r.seq, r.id, r.game, r.game_version, r.private, r.rated, r.version, r.joinable, r.finished, CAST(r.state AS TEXT) AS state, CAST(r.players AS TEXT) AS players, CAST(r.inactive_players AS TEXT) AS inactive_players, r.created_at, r.updated_at, r.trigger_timeout_at, r.to_move, CAST(r.turns AS TEXT) AS turns, r.clock_move_seconds, CAST(r.rematch AS TEXT) AS rematch, CAST(r.score AS TEXT) AS score FROM rooms r WHERE r.private = 0 AND r.joinable = $4 AND r.finished = $5 AND r.seq < $6 UNION ALL SELECT r.seq, r.id, r.game, r.game_version, r.private, r.rated, r.version, r.joinable, r.finished, CAST(r.state AS TEXT) AS state, CAST(r.players AS TEXT) AS players, CAST(r.inactive_players AS TEXT) AS inactive_players, r.created_at, r.updated_at, r.trigger_timeout_at, r.to_move, CAST(r.turns AS TEXT) AS turns, r.clock_move_seconds, CAST(r.rematch AS TEXT) AS rematch, CAST(r.score AS TEXT) AS score FROM rooms r WHERE r.private = 0 AND r.joinable = $7 AND r.finished = $8 AND r.seq < $9 UNION ALL SELECT r.seq, r.id, r.game, r.game_version, r.private, r.rated, r.version, r.joinable, r.finished, CAST(r.state AS TEXT) AS state, CAST(r.players AS TEXT) AS players, CAST(r.inactive_players AS TEXT) AS inactive_players, r.created_at, r.updated_at, r.trigger_timeout_at, r.to_move, CAST(r.turns AS TEXT) AS turns, r.clock_move_seconds, CAST(r.rematch AS TEXT) AS rematch, CAST(r.score AS TEXT) AS score FROM rooms r WHERE r.private = 0 AND r.joinable = $10 AND r.finished = $11 AND r.seq < $12 ORDER BY seq DESC LIMIT $13;

-- PostgreSQL: LISTING (the lobby)
SELECT * FROM (SELECT r.seq, r.id, r.game, r.game_version, r.private, r.rated, r.version, r.joinable, r.finished, CAST(r.state AS TEXT) AS state, CAST(r.players AS TEXT) AS players, CAST(r.inactive_players AS TEXT) AS inactive_players, r.created_at, r.updated_at, r.trigger_timeout_at, r.to_move, CAST(r.turns AS TEXT) AS turns, r.clock_move_seconds, CAST(r.rematch AS TEXT) AS rematch, CAST(r.score AS TEXT) AS score FROM rooms r WHERE r.private = false AND r.joinable = false AND r.finished = false AND r.seq < $1 ORDER BY seq DESC LIMIT $5) part0 UNION ALL SELECT * FROM (SELECT r.seq, r.id, r.game, r.game_version, r.private, r.rated, r.version, r.joinable, r.finished, CAST(r.state AS TEXT) AS state, CAST(r.players AS TEXT) AS players, CAST(r.inactive_players AS TEXT) AS inactive_players, r.created_at, r.updated_at, r.trigger_timeout_at, r.to_move, CAST(r.turns AS TEXT) AS turns, r.clock_move_seconds, CAST(r.rematch AS TEXT) AS rematch, CAST(r.score AS TEXT) AS score FROM rooms r WHERE r.private = false AND r.joinable = false AND r.finished = true AND r.seq < $2 ORDER BY seq DESC LIMIT $6) part1 UNION ALL SELECT * FROM (SELECT r.seq, r.id, r.game, r.game_version, r.private, r.rated, r.version, r.joinable, r.finished, CAST(r.state AS TEXT) AS state, CAST(r.players AS TEXT) AS players, CAST(r.inactive_players AS TEXT) AS inactive_players, r.created_at, r.updated_at, r.trigger_timeout_at, r.to_move, CAST(r.turns AS TEXT) AS turns, r.clock_move_seconds, CAST(r.rematch AS TEXT) AS rematch, CAST(r.score AS TEXT) AS score FROM rooms r WHERE r.private = false AND r.joinable = true AND r.finished = false AND r.seq < $3 ORDER BY seq DESC LIMIT $7) part2 UNION ALL SELECT * FROM (SELECT r.seq, r.id, r.game, r.game_version, r.private, r.rated, r.version, r.joinable, r.finished, CAST(r.state AS TEXT) AS state, CAST(r.players AS TEXT) AS players, CAST(r.inactive_players AS TEXT) AS inactive_players, r.created_at, r.updated_at, r.trigger_timeout_at, r.to_move, CAST(r.turns AS TEXT) AS turns, r.clock_move_seconds, CAST(r.rematch AS TEXT) AS rematch, CAST(r.score AS TEXT) AS score FROM rooms r WHERE r.private = false AND r.joinable = true AND r.finished = true AND r.seq < $4 ORDER BY seq DESC LIMIT $8) part3 ORDER BY seq DESC LIMIT $9;

-- SQLite: LISTING (one game's open rooms)
SELECT r.seq, r.id, r.game, r.game_version, r.private, r.rated, r.version, r.joinable, r.finished, CAST(r.state AS TEXT) AS state, CAST(r.players AS TEXT) AS players, CAST(r.inactive_players AS TEXT) AS inactive_players, r.created_at, r.updated_at, r.trigger_timeout_at, r.to_move, CAST(r.turns AS TEXT) AS turns, r.clock_move_seconds, CAST(r.rematch AS TEXT) AS rematch, CAST(r.score AS TEXT) AS score FROM rooms r WHERE r.private = 0 AND r.game = $1 AND r.joinable = $2 AND r.finished = $3 AND r.seq < $4 ORDER BY seq DESC LIMIT $5;

-- PostgreSQL: LISTING (one game's open rooms)
SELECT r.seq, r.id, r.game, r.game_version, r.private, r.rated, r.version, r.joinable, r.finished, CAST(r.state AS TEXT) AS state, CAST(r.players AS TEXT) AS players, CAST(r.inactive_players AS TEXT) AS inactive_players, r.created_at, r.updated_at, r.trigger_timeout_at, r.to_move, CAST(r.turns AS TEXT) AS turns, r.clock_move_seconds, CAST(r.rematch AS TEXT) AS rematch, CAST(r.score AS TEXT) AS score FROM rooms r WHERE r.private = false AND r.game = $1 AND r.joinable = true AND r.finished = false AND r.seq < $2 ORDER BY seq DESC LIMIT $3;

-- SQLite: LISTING (my rooms of one game, finished)
SELECT m.room_seq AS seq, r.id, r.game, r.game_version, r.private, r.rated, r.version, r.joinable, r.finished, CAST(r.state AS TEXT) AS state, CAST(r.players AS TEXT) AS players, CAST(r.inactive_players AS TEXT) AS inactive_players, r.created_at, r.updated_at, r.trigger_timeout_at, r.to_move, CAST(r.turns AS TEXT) AS turns, r.clock_move_seconds, CAST(r.rematch AS TEXT) AS rematch, CAST(r.score AS TEXT) AS score FROM room_players m JOIN rooms r ON r.seq = m.room_seq WHERE m.finished = $1 AND m.player_id = $2 AND m.game = $3 AND m.room_seq < $4 ORDER BY seq DESC LIMIT $5;

-- PostgreSQL: LISTING (my rooms of one game, finished)
SELECT m.room_seq AS seq, r.id, r.game, r.game_version, r.private, r.rated, r.version, r.joinable, r.finished, CAST(r.state AS TEXT) AS state, CAST(r.players AS TEXT) AS players, CAST(r.inactive_players AS TEXT) AS inactive_players, r.created_at, r.updated_at, r.trigger_timeout_at, r.to_move, CAST(r.turns AS TEXT) AS turns, r.clock_move_seconds, CAST(r.rematch AS TEXT) AS rematch, CAST(r.score AS TEXT) AS score FROM room_players m CROSS JOIN LATERAL (SELECT * FROM rooms WHERE rooms.seq = m.room_seq OFFSET 0) r WHERE m.finished = true AND m.player_id = $1 AND m.game = $2 AND m.room_seq < $3 ORDER BY seq DESC LIMIT $4;

-- SQLite: LISTING (someone's joinable rooms, of two games: two ranges merged)
SELECT m.room_seq AS seq, r.id, r.game, r.game_version, r.private, r.rated, r.version, r.joinable, r.finished, CAST(r.state AS TEXT) AS state, CAST(r.players AS TEXT) AS players, CAST(r.inactive_players AS TEXT) AS inactive_players, r.created_at, r.updated_at, r.trigger_timeout_at, r.to_move, CAST(r.turns AS TEXT) AS turns, r.clock_move_seconds, CAST(r.rematch AS TEXT) AS rematch, CAST(r.score AS TEXT) AS score FROM room_players m JOIN rooms r ON r.seq = m.room_seq WHERE m.finished = $1 AND m.player_id = $2 AND m.game = $3 AND r.joinable = $4 AND r.private = 0 AND m.room_seq < $5 UNION ALL SELECT m.room_seq AS seq, r.id, r.game, r.game_version, r.private, r.rated, r.version, r.joinable, r.finished, CAST(r.state AS TEXT) AS state, CAST(r.players AS TEXT) AS players, CAST(r.inactive_players AS TEXT) AS inactive_players, r.created_at, r.updated_at, r.trigger_timeout_at, r.to_move, CAST(r.turns AS TEXT) AS turns, r.clock_move_seconds, CAST(r.rematch AS TEXT) AS rematch, CAST(r.score AS TEXT) AS score FROM room_players m JOIN rooms r ON r.seq = m.room_seq WHERE m.finished = $6 AND m.player_id = $7 AND m.game = $8 AND r.joinable = $9 AND r.private = 0 AND m.room_seq < $10 ORDER BY seq DESC LIMIT $11;

-- PostgreSQL: LISTING (someone's joinable rooms, of two games: two ranges merged)
SELECT * FROM (SELECT m.room_seq AS seq, r.id, r.game, r.game_version, r.private, r.rated, r.version, r.joinable, r.finished, CAST(r.state AS TEXT) AS state, CAST(r.players AS TEXT) AS players, CAST(r.inactive_players AS TEXT) AS inactive_players, r.created_at, r.updated_at, r.trigger_timeout_at, r.to_move, CAST(r.turns AS TEXT) AS turns, r.clock_move_seconds, CAST(r.rematch AS TEXT) AS rematch, CAST(r.score AS TEXT) AS score FROM room_players m CROSS JOIN LATERAL (SELECT * FROM rooms WHERE rooms.seq = m.room_seq OFFSET 0) r WHERE m.finished = false AND m.player_id = $1 AND m.game = $2 AND r.joinable = true AND r.private = false AND m.room_seq < $3 ORDER BY seq DESC LIMIT $7) part0 UNION ALL SELECT * FROM (SELECT m.room_seq AS seq, r.id, r.game, r.game_version, r.private, r.rated, r.version, r.joinable, r.finished, CAST(r.state AS TEXT) AS state, CAST(r.players AS TEXT) AS players, CAST(r.inactive_players AS TEXT) AS inactive_players, r.created_at, r.updated_at, r.trigger_timeout_at, r.to_move, CAST(r.turns AS TEXT) AS turns, r.clock_move_seconds, CAST(r.rematch AS TEXT) AS rematch, CAST(r.score AS TEXT) AS score FROM room_players m CROSS JOIN LATERAL (SELECT * FROM rooms WHERE rooms.seq = m.room_seq OFFSET 0) r WHERE m.finished = false AND m.player_id = $4 AND m.game = $5 AND r.joinable = true AND r.private = false AND m.room_seq < $6 ORDER BY seq DESC LIMIT $8) part1 ORDER BY seq DESC LIMIT $9;

-- SQLite: LISTING (my rooms of two games, finished or not: four ranges merged)
SELECT m.room_seq AS seq, r.id, r.game, r.game_version, r.private, r.rated, r.version, r.joinable, r.finished, CAST(r.state AS TEXT) AS state, CAST(r.players AS TEXT) AS players, CAST(r.inactive_players AS TEXT) AS inactive_players, r.created_at, r.updated_at, r.trigger_timeout_at, r.to_move, CAST(r.turns AS TEXT) AS turns, r.clock_move_seconds, CAST(r.rematch AS TEXT) AS rematch, CAST(r.score AS TEXT) AS score FROM room_players m JOIN rooms r ON r.seq = m.room_seq WHERE m.finished = $1 AND m.player_id = $2 AND m.game = $3 AND m.room_seq < $4 UNION ALL SELECT m.room_seq AS seq, r.id, r.game, r.game_version, r.private, r.rated, r.version, r.joinable, r.finished, CAST(r.state AS TEXT) AS state, CAST(r.players AS TEXT) AS players, CAST(r.inactive_players AS TEXT) AS inactive_players, r.created_at, r.updated_at, r.trigger_timeout_at, r.to_move, CAST(r.turns AS TEXT) AS turns, r.clock_move_seconds, CAST(r.rematch AS TEXT) AS rematch, CAST(r.score AS TEXT) AS score FROM room_players m JOIN rooms r ON r.seq = m.room_seq WHERE m.finished = $5 AND m.player_id = $6 AND m.game = $7 AND m.room_seq < $8 UNION ALL SELECT m.room_seq AS seq, r.id, r.game, r.game_version, r.private, r.rated, r.version, r.joinable, r.finished, CAST(r.state AS TEXT) AS state, CAST(r.players AS TEXT) AS players, CAST(r.inactive_players AS TEXT) AS inactive_players, r.created_at, r.updated_at, r.trigger_timeout_at, r.to_move, CAST(r.turns AS TEXT) AS turns, r.clock_move_seconds, CAST(r.rematch AS TEXT) AS rematch, CAST(r.score AS TEXT) AS score FROM room_players m JOIN rooms r ON r.seq = m.room_seq WHERE m.finished = $9 AND m.player_id = $10 AND m.game = $11 AND m.room_seq < $12 UNION ALL SELECT m.room_seq AS seq, r.id, r.game, r.game_version, r.private, r.rated, r.version, r.joinable, r.finished, CAST(r.state AS TEXT) AS state, CAST(r.players AS TEXT) AS players, CAST(r.inactive_players AS TEXT) AS inactive_players, r.created_at, r.updated_at, r.trigger_timeout_at, r.to_move, CAST(r.turns AS TEXT) AS turns, r.clock_move_seconds, CAST(r.rematch AS TEXT) AS rematch, CAST(r.score AS TEXT) AS score FROM room_players m JOIN rooms r ON r.seq = m.room_seq WHERE m.finished = $13 AND m.player_id = $14 AND m.game = $15 AND m.room_seq < $16 ORDER BY seq DESC LIMIT $17;

-- PostgreSQL: LISTING (my rooms of two games, finished or not: four ranges merged)
SELECT * FROM (SELECT m.room_seq AS seq, r.id, r.game, r.game_version, r.private, r.rated, r.version, r.joinable, r.finished, CAST(r.state AS TEXT) AS state, CAST(r.players AS TEXT) AS players, CAST(r.inactive_players AS TEXT) AS inactive_players, r.created_at, r.updated_at, r.trigger_timeout_at, r.to_move, CAST(r.turns AS TEXT) AS turns, r.clock_move_seconds, CAST(r.rematch AS TEXT) AS rematch, CAST(r.score AS TEXT) AS score FROM room_players m CROSS JOIN LATERAL (SELECT * FROM rooms WHERE rooms.seq = m.room_seq OFFSET 0) r WHERE m.finished = false AND m.player_id = $1 AND m.game = $2 AND m.room_seq < $3 ORDER BY seq DESC LIMIT $13) part0 UNION ALL SELECT * FROM (SELECT m.room_seq AS seq, r.id, r.game, r.game_version, r.private, r.rated, r.version, r.joinable, r.finished, CAST(r.state AS TEXT) AS state, CAST(r.players AS TEXT) AS players, CAST(r.inactive_players AS TEXT) AS inactive_players, r.created_at, r.updated_at, r.trigger_timeout_at, r.to_move, CAST(r.turns AS TEXT) AS turns, r.clock_move_seconds, CAST(r.rematch AS TEXT) AS rematch, CAST(r.score AS TEXT) AS score FROM room_players m CROSS JOIN LATERAL (SELECT * FROM rooms WHERE rooms.seq = m.room_seq OFFSET 0) r WHERE m.finished = false AND m.player_id = $4 AND m.game = $5 AND m.room_seq < $6 ORDER BY seq DESC LIMIT $14) part1 UNION ALL SELECT * FROM (SELECT m.room_seq AS seq, r.id, r.game, r.game_version, r.private, r.rated, r.version, r.joinable, r.finished, CAST(r.state AS TEXT) AS state, CAST(r.players AS TEXT) AS players, CAST(r.inactive_players AS TEXT) AS inactive_players, r.created_at, r.updated_at, r.trigger_timeout_at, r.to_move, CAST(r.turns AS TEXT) AS turns, r.clock_move_seconds, CAST(r.rematch AS TEXT) AS rematch, CAST(r.score AS TEXT) AS score FROM room_players m CROSS JOIN LATERAL (SELECT * FROM rooms WHERE rooms.seq = m.room_seq OFFSET 0) r WHERE m.finished = true AND m.player_id = $7 AND m.game = $8 AND m.room_seq < $9 ORDER BY seq DESC LIMIT $15) part2 UNION ALL SELECT * FROM (SELECT m.room_seq AS seq, r.id, r.game, r.game_version, r.private, r.rated, r.version, r.joinable, r.finished, CAST(r.state AS TEXT) AS state, CAST(r.players AS TEXT) AS players, CAST(r.inactive_players AS TEXT) AS inactive_players, r.created_at, r.updated_at, r.trigger_timeout_at, r.to_move, CAST(r.turns AS TEXT) AS turns, r.clock_move_seconds, CAST(r.rematch AS TEXT) AS rematch, CAST(r.score AS TEXT) AS score FROM room_players m CROSS JOIN LATERAL (SELECT * FROM rooms WHERE rooms.seq = m.room_seq OFFSET 0) r WHERE m.finished = true AND m.player_id = $10 AND m.game = $11 AND m.room_seq < $12 ORDER BY seq DESC LIMIT $16) part3 ORDER BY seq DESC LIMIT $17;

-- SQLite: LISTING (my rooms, finished, of more games than are read as ranges: a walk)
SELECT m.room_seq AS seq, r.id, r.game, r.game_version, r.private, r.rated, r.version, r.joinable, r.finished, CAST(r.state AS TEXT) AS state, CAST(r.players AS TEXT) AS players, CAST(r.inactive_players AS TEXT) AS inactive_players, r.created_at, r.updated_at, r.trigger_timeout_at, r.to_move, CAST(r.turns AS TEXT) AS turns, r.clock_move_seconds, CAST(r.rematch AS TEXT) AS rematch, CAST(r.score AS TEXT) AS score FROM room_players m JOIN rooms r ON r.seq = m.room_seq WHERE m.finished = $1 AND m.player_id = $2 AND m.room_seq < $3 ORDER BY seq DESC LIMIT $4;

-- PostgreSQL: LISTING (my rooms, finished, of more games than are read as ranges: a walk)
SELECT m.room_seq AS seq, r.id, r.game, r.game_version, r.private, r.rated, r.version, r.joinable, r.finished, CAST(r.state AS TEXT) AS state, CAST(r.players AS TEXT) AS players, CAST(r.inactive_players AS TEXT) AS inactive_players, r.created_at, r.updated_at, r.trigger_timeout_at, r.to_move, CAST(r.turns AS TEXT) AS turns, r.clock_move_seconds, CAST(r.rematch AS TEXT) AS rematch, CAST(r.score AS TEXT) AS score FROM room_players m CROSS JOIN LATERAL (SELECT * FROM rooms WHERE rooms.seq = m.room_seq OFFSET 0) r WHERE m.finished = true AND m.player_id = $1 AND m.room_seq < $2 ORDER BY seq DESC LIMIT $3;

-- SQLite: BACKUP
VACUUM INTO ?;

-- PostgreSQL: QUICK_PLAY_LOCK
SELECT pg_advisory_xact_lock(hashtextextended('turnhouse quick play ' || $1, 0));

-- PostgreSQL: RATINGS_LOCK
WITH v (game, player_id) AS (VALUES ($1, $2), ($3, $4)) SELECT pg_advisory_xact_lock(s.lock) FROM (SELECT DISTINCT hashtextextended('turnhouse rating ' || v.game || ' ' || v.player_id, 0) AS lock FROM v) s ORDER BY s.lock;

-- PostgreSQL: NOTIFY
WITH v (room_id, version, lobby) AS (VALUES ($1, $2, $3), ($4, $5, $6)) SELECT pg_notify('turnhouse', v.room_id || ' ' || v.version || ' ' || current_setting('turnhouse.instance') || ' ' || v.lobby) FROM v;

-- PostgreSQL: SESSIONS_IN
WITH v (id) AS (VALUES ($1), ($2)) SELECT s.id, s.player_id, p.username, s.token_hash, s.label, s.created_at, s.last_used_at FROM v JOIN sessions s ON s.id = v.id JOIN players p ON p.id = s.player_id WHERE s.ended_at IS NULL AND p.suspended_at IS NULL;

-- PostgreSQL: CHAT_LOCK
SELECT pg_advisory_xact_lock(hashtextextended('turnhouse chat ' || $1, 0));

-- PostgreSQL: CHAT_NOTIFY
SELECT pg_notify('turnhouse_chat', $1 || ' ' || current_setting('turnhouse.instance'));

-- PostgreSQL: NOTIFY_PRESENCE
SELECT pg_notify('turnhouse_presence', $1);
