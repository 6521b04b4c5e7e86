-- SQLite's V27: the hooks' counter (`hook_state`), moved by every insert and delete of a learning
-- and by every real change of a column the hooks' snapshot reads, and the index SessionStart
-- finds the CRITICAL learnings by. The update trigger watches the same columns as SQLite's (a
-- column the snapshot comes to read is added to both, in new migrations); `both_backends`'
-- `the_hooks_counter_moves_alike_on_both_backends` compares them column by column.
--
-- `nonce` is random per project schema and never leaves the database (gen_random_uuid draws
-- from the server's strong random source; two of them hashed to 32 hex digits, SQLite's shape).
CREATE TABLE hook_state (
    id      BIGINT PRIMARY KEY CHECK (id = 1),
    version BIGINT NOT NULL,
    nonce   TEXT COLLATE "C" NOT NULL
);
INSERT INTO hook_state (id, version, nonce)
VALUES (1, 1, md5(CAST(gen_random_uuid() AS TEXT) || CAST(gen_random_uuid() AS TEXT)));

CREATE FUNCTION hook_state_bump() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    UPDATE hook_state SET version = version + 1 WHERE id = 1;
    RETURN NULL;
END
$$;

CREATE TRIGGER hook_state_on_insert AFTER INSERT ON learnings
    FOR EACH ROW EXECUTE FUNCTION hook_state_bump();
CREATE TRIGGER hook_state_on_delete AFTER DELETE ON learnings
    FOR EACH ROW EXECUTE FUNCTION hook_state_bump();
CREATE TRIGGER hook_state_on_update
    AFTER UPDATE OF text, insight, kind, triggers, checklist, confidence, priority, status, origin,
        quarantine_reason
    ON learnings
    FOR EACH ROW
    WHEN (OLD.text IS DISTINCT FROM NEW.text
       OR OLD.insight IS DISTINCT FROM NEW.insight
       OR OLD.kind IS DISTINCT FROM NEW.kind
       OR OLD.triggers IS DISTINCT FROM NEW.triggers
       OR OLD.checklist IS DISTINCT FROM NEW.checklist
       OR OLD.confidence IS DISTINCT FROM NEW.confidence
       OR OLD.priority IS DISTINCT FROM NEW.priority
       OR OLD.status IS DISTINCT FROM NEW.status
       OR OLD.origin IS DISTINCT FROM NEW.origin
       OR OLD.quarantine_reason IS DISTINCT FROM NEW.quarantine_reason)
    EXECUTE FUNCTION hook_state_bump();

-- SessionStart gives the CRITICAL learnings: found through this index, not a scan of them all.
CREATE INDEX learnings_critical ON learnings (id) WHERE priority = 'CRITICAL';
