-- SQLite's V38 and V39: the ranking generation (a counter every change ranking can see moves
-- on, stamped on the learning it changed as `rank_generation`; deleted learnings recorded in
-- `learnings_removed`), and the index of completed tasks a regeneration reads its window and
-- the tasks owed an extraction through.
--
-- SQLite's AFTER triggers stamp the row with a second UPDATE; here a BEFORE trigger sets
-- NEW.rank_generation on the row being written. The update trigger watches the same columns
-- as SQLite's (a column ranking comes to read is added to both, in new migrations).
--
-- Concurrency: the counter's row is locked by the UPDATE that moves it until the transaction
-- commits, so generations are given out in commit order, and a reader's snapshot that sees
-- generation G sees every row stamped at or below G. The embeddings' triggers lock the
-- learning's row before the counter, the order an update of the learning itself takes them
-- in (its row is locked before its BEFORE trigger runs), so the two never deadlock.
CREATE TABLE learnings_generation (
    id         BIGINT PRIMARY KEY CHECK (id = 1),
    generation BIGINT NOT NULL
);
INSERT INTO learnings_generation (id, generation) VALUES (1, 1);

ALTER TABLE learnings ADD COLUMN rank_generation BIGINT NOT NULL DEFAULT 1;
CREATE INDEX learnings_rank_generation ON learnings (rank_generation);

CREATE TABLE learnings_removed (
    learning_id BIGINT NOT NULL,
    generation  BIGINT NOT NULL
);
CREATE INDEX learnings_removed_generation ON learnings_removed (generation);

CREATE FUNCTION learnings_generation_next() RETURNS BIGINT LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
DECLARE
    g BIGINT;
BEGIN
    UPDATE learnings_generation SET generation = generation + 1 WHERE id = 1
        RETURNING generation INTO g;
    RETURN g;
END
$$;

CREATE FUNCTION learnings_ranked_stamp() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    NEW.rank_generation := learnings_generation_next();
    RETURN NEW;
END
$$;

CREATE FUNCTION learnings_ranked_removed() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    INSERT INTO learnings_removed (learning_id, generation)
        VALUES (OLD.id, learnings_generation_next());
    RETURN NULL;
END
$$;

CREATE FUNCTION learning_embeddings_ranked() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
DECLARE
    ids BIGINT[];
    g   BIGINT;
BEGIN
    IF TG_OP = 'INSERT' THEN
        ids := ARRAY[NEW.learning_id];
    ELSIF TG_OP = 'DELETE' THEN
        ids := ARRAY[OLD.learning_id];
    ELSE
        ids := ARRAY[OLD.learning_id, NEW.learning_id];
    END IF;
    -- The learning's row first, then the counter (see the header).
    PERFORM 1 FROM learnings WHERE id = ANY (ids) ORDER BY id FOR NO KEY UPDATE;
    g := learnings_generation_next();
    UPDATE learnings SET rank_generation = g WHERE id = ANY (ids);
    RETURN NULL;
END
$$;

CREATE TRIGGER learnings_ranked_insert BEFORE INSERT ON learnings
    FOR EACH ROW EXECUTE FUNCTION learnings_ranked_stamp();
CREATE TRIGGER learnings_ranked_update
    BEFORE UPDATE OF section, text, keywords, applies_when, priority, confidence, status,
        quarantine_reason
    ON learnings
    FOR EACH ROW EXECUTE FUNCTION learnings_ranked_stamp();
CREATE TRIGGER learnings_ranked_delete AFTER DELETE ON learnings
    FOR EACH ROW EXECUTE FUNCTION learnings_ranked_removed();

CREATE TRIGGER learning_embeddings_ranked AFTER INSERT OR UPDATE OR DELETE ON learning_embeddings
    FOR EACH ROW EXECUTE FUNCTION learning_embeddings_ranked();

-- SQLite's V39.
CREATE INDEX tasks_completed_for_learnings ON tasks (completed_at DESC, id DESC)
    WHERE status = 'completed' AND skip_learnings = 0;
