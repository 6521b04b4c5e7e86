-- Claude Code hooks run on every tool call and prompt, and must answer in milliseconds with
-- 10,000 learnings and a long injection history (issue 18): the learnings with triggers are
-- found through a partial index instead of a scan of every learning, and what a session was
-- already given through an index on the session instead of a scan of every injection.
CREATE INDEX learnings_triggered ON learnings (id) WHERE triggers NOT IN ('{}', '');
CREATE INDEX learning_injections_session ON learning_injections (session_id) WHERE session_id IS NOT NULL;
