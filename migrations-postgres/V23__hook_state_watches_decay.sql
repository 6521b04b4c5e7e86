-- As SQLite's V53: the hooks' snapshot holds when each learning decays (from its tier and
-- confirmed_at), so a change to either moves the hooks' counter.
DROP TRIGGER hook_state_on_update ON learnings;
CREATE TRIGGER hook_state_on_update
    AFTER UPDATE OF text, insight, kind, triggers, checklist, confidence, priority, status, origin,
        quarantine_reason, tier, confirmed_at
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
       OR OLD.quarantine_reason IS DISTINCT FROM NEW.quarantine_reason
       OR OLD.tier IS DISTINCT FROM NEW.tier
       OR OLD.confirmed_at IS DISTINCT FROM NEW.confirmed_at)
    EXECUTE FUNCTION hook_state_bump();
-- Snapshots kept before this hold no decay moments: read them again.
UPDATE hook_state SET version = version + 1 WHERE id = 1;
