-- A deleted task's id is never given to another task: its branch (gza/ID-…), its report and
-- anything a person wrote down about it may outlive the row. SQLite gives a table without
-- AUTOINCREMENT the largest id + 1, so deleting the newest task handed its id out again; the
-- highest id ever deleted is kept here and new ids start above it (the store's inserts read it).
CREATE TABLE task_id_floor (id INTEGER NOT NULL);
INSERT INTO task_id_floor (id) SELECT COALESCE(MAX(id), 0) FROM tasks;
CREATE TRIGGER task_id_floor_on_delete AFTER DELETE ON tasks
BEGIN
    UPDATE task_id_floor SET id = OLD.id WHERE id < OLD.id;
END;
