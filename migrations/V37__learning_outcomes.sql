-- Learning from outcomes (issue 20): every task a learning was given to credits it with how the
-- task ended, and people rate learnings. Ranking weighs a learning by what it earned, against a
-- prior, so a new learning starts even and one bad task cannot bury a good one.
-- Its PostgreSQL twin is migrations-postgres/V8__learning_outcomes.sql.

-- How each finished task ended, as credited to the learnings it was given. `credit` is what the
-- learnings earn from it: 'helpful' (it completed, and nothing since said otherwise), 'harmful'
-- (it failed for a reason its agent owns, its latest review requested changes, or its work was
-- reverted), 'neutral' (a person or the machine stopped it: KILLED, WORKER_DIED, a sandbox or git
-- fault). The facts beside it are the evidence people are shown: the ending ('completed' or the
-- failure reason), the latest review's verdict and which task gave it, whether it was merged,
-- and the commit that reverted it. One row per task; a later fact (a review, a merge, a revert)
-- rewrites the row and moves its learnings' counts by the difference, so no task counts twice.
-- task_id has no foreign key: deleting a task keeps what its outcome taught.
CREATE TABLE task_credits (
    task_id     INTEGER PRIMARY KEY,
    credit      TEXT NOT NULL CHECK (credit IN ('helpful', 'harmful', 'neutral')),
    ending      TEXT NOT NULL,
    verdict     TEXT CHECK (verdict IN ('APPROVED', 'APPROVED_WITH_FOLLOWUPS', 'CHANGES_REQUESTED')),
    review_task INTEGER,
    merged      INTEGER NOT NULL DEFAULT 0 CHECK (merged IN (0, 1)),
    reverted    TEXT,
    credited_at TEXT NOT NULL
);

-- Each learning's counts: tasks it was given to that were helpful or harmful (each task once,
-- however many ways it was given), and people's ratings. A row exists only for a learning with
-- some history, so ranking reads a handful of rows by key.
CREATE TABLE learning_credit (
    learning_id INTEGER PRIMARY KEY REFERENCES learnings(id) ON DELETE CASCADE,
    helpful     INTEGER NOT NULL DEFAULT 0,
    harmful     INTEGER NOT NULL DEFAULT 0,
    rated_up    INTEGER NOT NULL DEFAULT 0,
    rated_down  INTEGER NOT NULL DEFAULT 0
);
-- `learnings stats` and `review` list the learnings with harmful outcomes or down ratings
-- without reading the others.
CREATE INDEX learning_credit_harmful ON learning_credit (learning_id)
    WHERE harmful > 0 OR rated_down > 0;

-- `gza learnings rate ID up|down [--why TEXT]`: what a person said, and when.
CREATE TABLE learning_ratings (
    id          INTEGER PRIMARY KEY,
    learning_id INTEGER NOT NULL REFERENCES learnings(id) ON DELETE CASCADE,
    rating      TEXT NOT NULL CHECK (rating IN ('up', 'down')),
    why         TEXT,
    rated_at    TEXT NOT NULL
);
CREATE INDEX learning_ratings_learning ON learning_ratings (learning_id);

-- One row: every credited task's outcome, the project's base rate (the prior a learning's
-- record is measured against); and how far the scan for reverted commits has read the
-- history of the checkout's HEAD.
CREATE TABLE credit_totals (
    id            INTEGER PRIMARY KEY CHECK (id = 1),
    helpful       INTEGER NOT NULL DEFAULT 0,
    harmful       INTEGER NOT NULL DEFAULT 0,
    reverts_from  TEXT
);
INSERT INTO credit_totals (id) VALUES (1);

-- Tasks that finished before this migration are credited as they stand, by the rules the
-- store applies to every task since (crates/gza-store/src/outcomes.rs, `Ending::credit`):
-- a failure its agent owns is harmful, a completed task whose latest review requested changes
-- is harmful, any other completed task helpful, the rest neutral.
INSERT INTO task_credits (task_id, credit, ending, verdict, review_task, merged, credited_at)
SELECT t.id,
       CASE
           WHEN t.status = 'failed' AND t.failure_reason IN
                ('TIMEOUT', 'MAX_TURNS', 'AGENT_ERROR', 'AGENT_EXIT', 'NO_RESULT', 'UNSAFE_WORKTREE')
               THEN 'harmful'
           WHEN t.status = 'completed' AND t.task_type IN ('implement', 'improve') AND
                (SELECT r.review_verdict FROM tasks r
                 WHERE r.based_on = t.id AND r.task_type = 'review' AND r.status = 'completed'
                   AND r.review_verdict IS NOT NULL
                 ORDER BY r.id DESC LIMIT 1) = 'CHANGES_REQUESTED'
               THEN 'harmful'
           WHEN t.status = 'completed' THEN 'helpful'
           ELSE 'neutral'
       END,
       CASE WHEN t.status = 'completed' THEN 'completed' ELSE COALESCE(t.failure_reason, 'failed') END,
       CASE WHEN t.task_type IN ('implement', 'improve') THEN
           (SELECT r.review_verdict FROM tasks r
            WHERE r.based_on = t.id AND r.task_type = 'review' AND r.status = 'completed'
              AND r.review_verdict IS NOT NULL
            ORDER BY r.id DESC LIMIT 1) END,
       CASE WHEN t.task_type IN ('implement', 'improve') THEN
           (SELECT r.id FROM tasks r
            WHERE r.based_on = t.id AND r.task_type = 'review' AND r.status = 'completed'
              AND r.review_verdict IS NOT NULL
            ORDER BY r.id DESC LIMIT 1) END,
       t.merged_at IS NOT NULL,
       strftime('%Y-%m-%dT%H:%M:%SZ', 'now')
FROM tasks t
WHERE t.status IN ('completed', 'failed');

INSERT INTO learning_credit (learning_id, helpful, harmful)
SELECT g.learning_id, SUM(c.credit = 'helpful'), SUM(c.credit = 'harmful')
FROM (SELECT DISTINCT learning_id, task_id FROM learning_injections WHERE task_id IS NOT NULL) g
JOIN task_credits c ON c.task_id = g.task_id
JOIN learnings l ON l.id = g.learning_id
WHERE c.credit <> 'neutral'
GROUP BY g.learning_id;

UPDATE credit_totals SET
    helpful = (SELECT COUNT(*) FROM task_credits WHERE credit = 'helpful'),
    harmful = (SELECT COUNT(*) FROM task_credits WHERE credit = 'harmful')
WHERE id = 1;
