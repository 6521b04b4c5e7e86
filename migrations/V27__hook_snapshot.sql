-- What the hooks read before every tool call and at the start of every session (the learnings
-- with triggers, the CRITICAL ones, how many drafts wait) changes far less often than the
-- database does: `gza work` writes tasks, injections and validations many times a second. A
-- counter that every change able to alter what they read moves lets a hook keep what it read in
-- a file beside the database (.gza/hook-snapshot-v1.json) and trust it while the counter stands,
-- instead of querying (and, at 100,000 learnings, scanning) on every call (issues 18 and 20).
--
-- The update trigger names every column the hooks' snapshot reads, and fires only when one of
-- them really changes (validation rewrites validated_at and evidence on every regeneration; that
-- must not invalidate the snapshot). A column the snapshot comes to read must be added here, in
-- a new migration that drops and creates the trigger again: `hook_snapshot_columns_move_the_version`
-- in crates/gza-store/src/hooks.rs fails until it is.
--
-- `nonce` is random and never leaves the database: the file names it, so a file this database
-- did not produce (one a cloned repository committed under .gza/, say) never matches, whatever
-- version it claims.
CREATE TABLE hook_state (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    version INTEGER NOT NULL,
    nonce   TEXT NOT NULL
);
INSERT INTO hook_state (id, version, nonce) VALUES (1, 1, lower(hex(randomblob(16))));

CREATE TRIGGER hook_state_on_insert AFTER INSERT ON learnings
BEGIN
    UPDATE hook_state SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER hook_state_on_delete AFTER DELETE ON learnings
BEGIN
    UPDATE hook_state SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER hook_state_on_update
AFTER UPDATE OF text, insight, kind, triggers, checklist, confidence, priority, status, origin, quarantine_reason
ON learnings
WHEN OLD.text IS NOT NEW.text
  OR OLD.insight IS NOT NEW.insight
  OR OLD.kind IS NOT NEW.kind
  OR OLD.triggers IS NOT NEW.triggers
  OR OLD.checklist IS NOT NEW.checklist
  OR OLD.confidence IS NOT NEW.confidence
  OR OLD.priority IS NOT NEW.priority
  OR OLD.status IS NOT NEW.status
  OR OLD.origin IS NOT NEW.origin
  OR OLD.quarantine_reason IS NOT NEW.quarantine_reason
BEGIN
    UPDATE hook_state SET version = version + 1 WHERE id = 1;
END;

-- SessionStart gives the CRITICAL learnings: found through this index, not a scan of them all.
CREATE INDEX learnings_critical ON learnings (id) WHERE priority = 'CRITICAL';
