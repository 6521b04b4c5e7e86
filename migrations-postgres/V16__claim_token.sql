-- SQLite's V45 (a claim's token) in PostgreSQL's words; migrations/V45__claim_token.sql says
-- what it is for.
ALTER TABLE tasks ADD COLUMN claim_token TEXT COLLATE "C";
