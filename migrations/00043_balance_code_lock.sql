-- +goose Up
-- A package's code tried with more phones not its client's than a day
-- allows (the widget's lookup or a booking) is locked for the rest of that
-- day: it then refuses every phone, its client's too, so whoever holds it
-- cannot tell which phone is the client's by which one books. Read with
-- the balance's row (no other read per booking); a new code ends it.
ALTER TABLE balances ADD COLUMN code_locked_until timestamptz;

-- +goose Down
ALTER TABLE balances DROP COLUMN code_locked_until;
