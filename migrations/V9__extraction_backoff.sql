-- A failing extraction endpoint is left alone for a while: after a regeneration whose calls all
-- failed, later automatic regenerations make no call until `until` (the wait doubles with each
-- failed regeneration in a row, from one minute up to an hour; a successful call resets it).
CREATE TABLE extraction_backoff (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    failures   INTEGER NOT NULL DEFAULT 0,
    until      TEXT,
    last_error TEXT
);
INSERT INTO extraction_backoff (id) VALUES (1);
