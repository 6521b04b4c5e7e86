-- Credits recorded before the outcome rules changed are recomputed by the rules the store
-- applies now (crates/gza-store/src/outcomes.rs, `Ending::credit`). Until then a review task's
-- own completion was credited helpful (cancelling the debit of every CHANGES_REQUESTED it gave,
-- with `inject: file`), and a provider's failure (AGENT_EXIT, AGENT_ERROR: an expired key or an
-- outage fails every task alike) was debited as harmful. Those rows were put right only if the
-- task happened to be credited again, so learnings kept counts, and the project its base rate,
-- that today's rules would not give. The counts are stored, not derived on read, so they are
-- derived again here from the credits and the injections, as crediting accumulates them: each
-- task once per learning, whatever number of times it was given. People's ratings are kept.
-- Its PostgreSQL twin is migrations-postgres/V25__credits_by_the_current_rules.sql.

-- Each task's credit: an A/B run or a review is neutral; reverted work, a completed code task
-- whose latest review requested changes, or a failure its agent owns is harmful; any other
-- completed task is helpful; the rest neutral. (`ending` is 'completed' or the failure reason,
-- `verdict` the latest review's, as the task was last credited.)
UPDATE task_credits SET credit = CASE
    WHEN EXISTS (SELECT 1 FROM ab_runs ab WHERE ab.task_id = task_credits.task_id) THEN 'neutral'
    WHEN EXISTS (SELECT 1 FROM tasks t WHERE t.id = task_credits.task_id AND t.task_type = 'review')
        THEN 'neutral'
    WHEN reverted IS NOT NULL THEN 'harmful'
    WHEN ending = 'completed' AND verdict = 'CHANGES_REQUESTED' THEN 'harmful'
    WHEN ending = 'completed' THEN 'helpful'
    WHEN ending IN ('TIMEOUT', 'MAX_TURNS', 'NO_RESULT', 'UNSAFE_WORKTREE') THEN 'harmful'
    ELSE 'neutral'
END;

-- Each learning's counts, from the tasks it was given (each once).
UPDATE learning_credit SET helpful = 0, harmful = 0;
INSERT INTO learning_credit (learning_id, helpful, harmful)
SELECT g.learning_id,
       SUM(CASE WHEN c.credit = 'helpful' THEN 1 ELSE 0 END),
       SUM(CASE WHEN c.credit = 'harmful' THEN 1 ELSE 0 END)
FROM (SELECT DISTINCT learning_id, task_id FROM learning_injections WHERE task_id IS NOT NULL) AS g
JOIN task_credits c ON c.task_id = g.task_id
JOIN learnings l ON l.id = g.learning_id
WHERE c.credit <> 'neutral'
GROUP BY g.learning_id
ON CONFLICT (learning_id) DO UPDATE SET helpful = excluded.helpful, harmful = excluded.harmful;
-- A row exists only for a learning with some history.
DELETE FROM learning_credit WHERE helpful = 0 AND harmful = 0 AND rated_up = 0 AND rated_down = 0;

-- The project's base rate.
UPDATE credit_totals SET
    helpful = (SELECT COUNT(*) FROM task_credits WHERE credit = 'helpful'),
    harmful = (SELECT COUNT(*) FROM task_credits WHERE credit = 'harmful')
WHERE id = 1;
