-- A claim's token (issue 21, faults): each claim writes a token of its own on the task it takes,
-- so a worker whose connection broke while the claim's commit was on its way can tell, on a new
-- connection, whether the claim was made (the task names its token) before it claims again.
-- Without it, a claim that committed unseen would leave a task in progress under a live lease
-- that no one runs. NULL on tasks claimed before, and on tasks no one claimed.
ALTER TABLE tasks ADD COLUMN claim_token TEXT;
