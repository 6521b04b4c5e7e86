-- A/B runs (`gza ab`, issue 20): the same tasks run from one base commit with learnings and
-- without, to measure on the person's own repository whether learnings help.
--
-- An experiment names its base commit, how many rounds each task runs, and whether each run is
-- judged by the project's verify command. Each run is a real task (history, cost and logs work
-- as for any task) in the group `ab-<experiment>`, and one row here: its task list item, round
-- and arm ('with': learnings chosen and injected as `gza work` does; 'without': the task skips
-- learnings). A task named here is never claimed from the queue by `gza work`, never credited
-- to the learnings it was given and never extracted: an experiment must not train what it
-- measures. task_id has no foreign key: a run whose task was deleted is run again by
-- `gza ab --resume`, which also points a run that was interrupted (KILLED, WORKER_DIED) at its
-- replacement. verified is NULL until the run is judged: 'passed', 'failed', or 'not_run' (no
-- branch to verify, or verify not asked for).
CREATE TABLE ab_experiments (
    id          INTEGER PRIMARY KEY,
    created_at  TEXT    NOT NULL,
    base_commit TEXT    NOT NULL,
    base_name   TEXT    NOT NULL,
    repeats     INTEGER NOT NULL CHECK (repeats >= 1),
    verify      INTEGER NOT NULL CHECK (verify IN (0, 1))
);

CREATE TABLE ab_runs (
    experiment  INTEGER NOT NULL REFERENCES ab_experiments(id) ON DELETE CASCADE,
    item        INTEGER NOT NULL,
    round       INTEGER NOT NULL,
    arm         TEXT    NOT NULL CHECK (arm IN ('with', 'without')),
    task_id     INTEGER NOT NULL,
    source_task INTEGER,
    verified    TEXT CHECK (verified IN ('passed', 'failed', 'not_run')),
    PRIMARY KEY (experiment, item, round, arm)
);
-- Whether a task is an A/B run: the queue, crediting and extraction ask this by task.
CREATE UNIQUE INDEX ab_runs_task ON ab_runs (task_id);
