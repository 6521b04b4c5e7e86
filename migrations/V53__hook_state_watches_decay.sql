-- The hooks stop giving a learning that has decayed out of use (seed 000: an unvalidated
-- learning's confidence halves every 90 days since a task last confirmed it), as a task's
-- prompt already does. The snapshot they keep now holds when each learning decays, read from
-- its tier and confirmed_at; so a change to either must move the hooks' counter, as a change to
-- any other column the snapshot reads does.
DROP TRIGGER hook_state_on_update;
CREATE TRIGGER hook_state_on_update
AFTER UPDATE OF text, insight, kind, triggers, checklist, confidence, priority, status, origin,
    quarantine_reason, tier, confirmed_at
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
  OR OLD.tier IS NOT NEW.tier
  OR OLD.confirmed_at IS NOT NEW.confirmed_at
BEGIN
    UPDATE hook_state SET version = version + 1 WHERE id = 1;
END;
-- Snapshots kept before this hold no decay moments: read them again.
UPDATE hook_state SET version = version + 1 WHERE id = 1;
