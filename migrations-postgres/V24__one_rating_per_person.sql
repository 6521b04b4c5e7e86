-- A person's rating of a learning is their standing word on it: the latest replaces their
-- earlier one and can be cleared (issue 20: "rate up" five times counted five, and "rate down"
-- then "rate up --why misclicked" left the learning penalised). `rated_by` is who rated: the
-- git identity (user.email) or, without one, the OS user; learning_ratings keeps one row per
-- learning and person, and learning_credit's rated_up and rated_down count those rows. The
-- history of every rating stays in learning_events ('rated').
ALTER TABLE learning_ratings ADD COLUMN rated_by TEXT COLLATE "C" NOT NULL DEFAULT '';

-- Ratings made before this had no rater: taken as one person's, whose latest stands.
DELETE FROM learning_ratings
WHERE id NOT IN (SELECT MAX(id) FROM learning_ratings GROUP BY learning_id);

CREATE UNIQUE INDEX learning_ratings_person ON learning_ratings (learning_id, rated_by);

UPDATE learning_credit SET
    rated_up = (SELECT COUNT(*) FROM learning_ratings r
                WHERE r.learning_id = learning_credit.learning_id AND r.rating = 'up'),
    rated_down = (SELECT COUNT(*) FROM learning_ratings r
                  WHERE r.learning_id = learning_credit.learning_id AND r.rating = 'down');
