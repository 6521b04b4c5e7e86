-- Workers that wait for work (`gza work --watch`) LISTEN on a channel of their project and
-- are woken by this trigger when a task may have become claimable: one is added or queued
-- again (pending), or one ends (completed, failed or dropped: its dependents may be
-- unblocked and an agent slot under max_concurrent is free). A claim (in_progress) wakes
-- nobody, so idle workers do not answer each other's claims. pg_notify folds identical
-- notifications within a transaction into one, so a batch of a thousand tasks sends one.
-- SQLite has no twin: one machine's workers watch the file's data_version instead.
CREATE FUNCTION gza_work_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('gza_work_' || md5(TG_TABLE_SCHEMA), '');
    RETURN NULL;
END;
$$;

CREATE TRIGGER tasks_work_insert AFTER INSERT ON tasks
    FOR EACH ROW WHEN (NEW.status <> 'in_progress')
    EXECUTE FUNCTION gza_work_notify();

CREATE TRIGGER tasks_work_update AFTER UPDATE OF status, depends_on ON tasks
    FOR EACH ROW WHEN (NEW.status <> 'in_progress')
    EXECUTE FUNCTION gza_work_notify();
