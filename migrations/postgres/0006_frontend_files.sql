-- A game version's frontend is a folder of files (a build folder, or one index.html), stored
-- with the version so that pg_dump carries it. `body` is the file as uploaded; `gzip` a
-- gzipped copy made once at upload where the type compresses and it is smaller (else NULL);
-- `etag` the entity tag it is served with. A version's files never change.
CREATE TABLE game_frontend_files (
    game_id      TEXT NOT NULL,
    version      BIGINT NOT NULL,
    path         TEXT NOT NULL CHECK (length(path) > 0),
    content_type TEXT NOT NULL,
    etag         TEXT NOT NULL,
    body         BYTEA NOT NULL,
    gzip         BYTEA,
    PRIMARY KEY (game_id, version, path),
    FOREIGN KEY (game_id, version) REFERENCES game_versions (game_id, version)
);

-- The pages uploaded before folders existed become each version's index.html.
INSERT INTO game_frontend_files (game_id, version, path, content_type, etag, body)
SELECT game_id, version, 'index.html', 'text/html; charset=utf-8',
       '"' || left(encode(sha256(convert_to(frontend, 'UTF8')), 'hex'), 32) || '"',
       convert_to(frontend, 'UTF8')
FROM game_versions WHERE frontend IS NOT NULL;

ALTER TABLE game_versions DROP COLUMN frontend;

-- How the page frames the frontend: its background (a CSS colour) and height in pixels.
-- NULL is the default (white, 600).
ALTER TABLE game_versions ADD COLUMN frontend_background TEXT;
ALTER TABLE game_versions ADD COLUMN frontend_height BIGINT;
