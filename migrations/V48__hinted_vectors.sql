-- A learning's vector is now the normalised sum of its text's embedding and each of its
-- "applies when" hints' (gza-learn rank::embed_learning), no longer one embedding of the text
-- and hints together. The vectors of learnings with hints were made the old way: drop them, so
-- the background job (`gza hook embed`) embeds them again; meanwhile they are ranked by words.
-- The embeddings' trigger moves the ranking generation, so the index never serves the old ones.
DELETE FROM learning_embeddings
WHERE learning_id IN (SELECT id FROM learnings WHERE applies_when <> '[]');
