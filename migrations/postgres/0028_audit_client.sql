-- Where an admin action came from: the client's address as the server saw it (behind a
-- trusted proxy, the address the proxy names). Null for the command line and for entries kept
-- before it was recorded.
ALTER TABLE audit_log ADD COLUMN client TEXT;
