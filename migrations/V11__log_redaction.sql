-- Whether a task's raw logs (.gza/logs/ID.jsonl and ID.stderr.log) had their secrets redacted as
-- they were written: 1 yes, 0 no (`redact_raw_logs: false`), NULL written by a gza that did not
-- redact raw logs (before this migration) or not written yet.
ALTER TABLE tasks ADD COLUMN log_redacted INTEGER;
