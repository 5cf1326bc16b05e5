-- When a session's token was last replaced: every server asks once a second which sessions
-- ended or changed token since it last asked, so that streams opened with an old token close.
ALTER TABLE sessions ADD COLUMN token_changed_at TEXT;
CREATE INDEX sessions_token_changed ON sessions (token_changed_at)
    WHERE token_changed_at IS NOT NULL;
