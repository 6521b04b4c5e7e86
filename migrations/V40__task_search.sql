-- `gza search`: a full-text index over every task's prompt and output (SQLite FTS5). It holds
-- only the index: the text stays in `tasks` (external content), so the database does not keep
-- every output twice. Triggers keep it in step in the same transaction as every insert, delete
-- and change of a prompt or output, whichever code path makes it; an update that changes
-- neither (status, figures, claims) costs the index nothing.
--
-- unicode61 folds case and diacritics and splits on anything but letters and digits, so
-- `parse_verdict` is found as `parse verdict`; the prefix indexes make the word beginnings a
-- search asks for (`auth` for `authentication`) a lookup rather than a scan of the vocabulary.
CREATE VIRTUAL TABLE task_search USING fts5(
    prompt,
    output,
    content = 'tasks',
    content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 2',
    prefix = '2 3'
);
INSERT INTO task_search (task_search) VALUES ('rebuild');

CREATE TRIGGER task_search_insert AFTER INSERT ON tasks BEGIN
    INSERT INTO task_search (rowid, prompt, output) VALUES (NEW.id, NEW.prompt, NEW.output);
END;

CREATE TRIGGER task_search_delete AFTER DELETE ON tasks BEGIN
    INSERT INTO task_search (task_search, rowid, prompt, output)
    VALUES ('delete', OLD.id, OLD.prompt, OLD.output);
END;

CREATE TRIGGER task_search_update AFTER UPDATE OF prompt, output ON tasks
WHEN OLD.prompt IS NOT NEW.prompt OR OLD.output IS NOT NEW.output BEGIN
    INSERT INTO task_search (task_search, rowid, prompt, output)
    VALUES ('delete', OLD.id, OLD.prompt, OLD.output);
    INSERT INTO task_search (rowid, prompt, output) VALUES (NEW.id, NEW.prompt, NEW.output);
END;
