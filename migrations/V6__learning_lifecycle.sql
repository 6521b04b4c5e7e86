-- The learning lifecycle: tiers proven by evidence found in the code (seed 002), stale
-- evidence, and quarantine for learnings that read like instructions to the agent.

-- 1: a rule nobody has checked against the code yet; 2: validated expertise (the code shows it
-- in 3+ files). tier_level says how strongly: 'medium' (3-4 files) or 'high' (5+).
ALTER TABLE learnings ADD COLUMN tier INTEGER NOT NULL DEFAULT 1 CHECK (tier IN (1, 2));
ALTER TABLE learnings ADD COLUMN tier_level TEXT CHECK (tier_level IN ('medium', 'high'));
-- The last evidence found, as JSON: {"terms": [...], "files": [...], "count": N, "at": "..."}.
ALTER TABLE learnings ADD COLUMN evidence TEXT;
ALTER TABLE learnings ADD COLUMN validated_at TEXT;
-- Why a validated learning dropped back a tier (its evidence disappeared); NULL when it has not.
ALTER TABLE learnings ADD COLUMN stale_reason TEXT;
-- Why a learning is held back: it reads like a command to the agent (destructive or remote
-- code, bypassing review, ignoring guidance). Kept and listed, never injected until a person
-- accepts it (`gza learnings promote`), which clears this.
ALTER TABLE learnings ADD COLUMN quarantine_reason TEXT;

CREATE INDEX learnings_tier ON learnings (tier) WHERE tier = 2;
