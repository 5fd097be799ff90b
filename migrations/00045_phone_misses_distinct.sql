-- +goose Up
-- A package's code is locked by how many different phones not its
-- client's were tried with it in a day, not by how many tries: the same
-- wrong phone tried again (a client going back and picking another time)
-- counts once. The phones are kept as their SHA-256, for the day.
ALTER TABLE balance_phone_misses ADD COLUMN phones bytea[] NOT NULL DEFAULT '{}';

-- +goose Down
ALTER TABLE balance_phone_misses DROP COLUMN phones;
