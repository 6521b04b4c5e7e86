-- The ranking index kept in step with the records (issue 20, "Scale"): a generation number that
-- every change ranking can see moves on, and on each learning the generation it last changed
-- at. The ranking index (.gza/rank-index-v2.bin) records the generation it was built at: when
-- it is the current one, a search ranks from the index alone without reading a row; when it is
-- behind, only the rows changed since (found through the index on rank_generation) and the
-- learnings deleted since are read, and the rest comes from the index.
--
-- A column ranking reads must be in the update trigger's list below, or an edit of it would
-- not reach the index until its next rebuild.

CREATE TABLE learnings_generation (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    generation INTEGER NOT NULL
);
INSERT INTO learnings_generation (id, generation) VALUES (1, 1);

ALTER TABLE learnings ADD COLUMN rank_generation INTEGER NOT NULL DEFAULT 1;
CREATE INDEX learnings_rank_generation ON learnings (rank_generation);

-- Learnings deleted (not archived: an archived learning is a changed row), by generation; the
-- embedding job forgets those its index has seen.
CREATE TABLE learnings_removed (
    learning_id INTEGER NOT NULL,
    generation  INTEGER NOT NULL
);
CREATE INDEX learnings_removed_generation ON learnings_removed (generation);

CREATE TRIGGER learnings_ranked_insert AFTER INSERT ON learnings BEGIN
    UPDATE learnings_generation SET generation = generation + 1 WHERE id = 1;
    UPDATE learnings SET rank_generation = (SELECT generation FROM learnings_generation WHERE id = 1)
        WHERE id = NEW.id;
END;

CREATE TRIGGER learnings_ranked_update
AFTER UPDATE OF section, text, keywords, applies_when, priority, confidence, status, quarantine_reason
ON learnings BEGIN
    UPDATE learnings_generation SET generation = generation + 1 WHERE id = 1;
    UPDATE learnings SET rank_generation = (SELECT generation FROM learnings_generation WHERE id = 1)
        WHERE id = NEW.id;
END;

CREATE TRIGGER learnings_ranked_delete AFTER DELETE ON learnings BEGIN
    UPDATE learnings_generation SET generation = generation + 1 WHERE id = 1;
    INSERT INTO learnings_removed (learning_id, generation)
        SELECT OLD.id, generation FROM learnings_generation WHERE id = 1;
END;

CREATE TRIGGER learning_embeddings_ranked_insert AFTER INSERT ON learning_embeddings BEGIN
    UPDATE learnings_generation SET generation = generation + 1 WHERE id = 1;
    UPDATE learnings SET rank_generation = (SELECT generation FROM learnings_generation WHERE id = 1)
        WHERE id = NEW.learning_id;
END;

CREATE TRIGGER learning_embeddings_ranked_update AFTER UPDATE ON learning_embeddings BEGIN
    UPDATE learnings_generation SET generation = generation + 1 WHERE id = 1;
    UPDATE learnings SET rank_generation = (SELECT generation FROM learnings_generation WHERE id = 1)
        WHERE id IN (OLD.learning_id, NEW.learning_id);
END;

CREATE TRIGGER learning_embeddings_ranked_delete AFTER DELETE ON learning_embeddings BEGIN
    UPDATE learnings_generation SET generation = generation + 1 WHERE id = 1;
    UPDATE learnings SET rank_generation = (SELECT generation FROM learnings_generation WHERE id = 1)
        WHERE id = OLD.learning_id;
END;
