-- Tasks of one type, newest first, whatever their status (`gza history --type`, `gza search
-- --type`): V28's (task_type, status, id) orders by id only within one status, so SQLite sorted
-- every task of the type to list twenty (96,000 page reads at 100,000 tasks). SQLite only:
-- PostgreSQL already answers from V28's twin (scripts/bench-pg-commands).
CREATE INDEX tasks_type_recent ON tasks (task_type, id);
