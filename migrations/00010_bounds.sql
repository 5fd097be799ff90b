-- +goose Up
-- A login attempt is counted before its password is hashed: its rows (one
-- per throttle key, the e-mail's and the address's) are written first, as
-- failures, and removed when the password turns out right or is never
-- checked. The id tells one attempt's rows from another's at the same
-- instant.
ALTER TABLE login_failures ADD COLUMN attempt bigint NOT NULL DEFAULT 0;
CREATE SEQUENCE login_attempts;

-- An upload is kept in chunks, written as it streams in and read back as
-- the import streams it: no process holds a whole file in memory. An
-- upload is 'receiving' until its last chunk is written.
CREATE TABLE upload_chunks (
    upload_id text NOT NULL REFERENCES uploads ON DELETE CASCADE,
    seq       integer NOT NULL,
    data      bytea NOT NULL,
    PRIMARY KEY (upload_id, seq)
);
ALTER TABLE uploads DROP COLUMN file;
ALTER TABLE uploads ADD COLUMN size bigint NOT NULL DEFAULT 0;
ALTER TABLE uploads DROP CONSTRAINT uploads_phase_check;
ALTER TABLE uploads ADD CONSTRAINT uploads_phase_check
    CHECK (phase IN ('receiving', 'checking', 'checked', 'applying', 'applied', 'failed'));

-- A client back from paying is found by a reference of their payment,
-- short-lived and good for nothing but that page: a return URL (which the
-- provider keeps) carries no manage token. return_url is the URL the
-- provider was given, sent again as it was on a retry.
ALTER TABLE payment_sessions ADD COLUMN return_ref text UNIQUE;
ALTER TABLE payment_sessions ADD COLUMN return_url text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE payment_sessions DROP COLUMN return_url;
ALTER TABLE payment_sessions DROP COLUMN return_ref;
DELETE FROM uploads WHERE phase = 'receiving';
ALTER TABLE uploads DROP CONSTRAINT uploads_phase_check;
ALTER TABLE uploads ADD CONSTRAINT uploads_phase_check
    CHECK (phase IN ('checking', 'checked', 'applying', 'applied', 'failed'));
ALTER TABLE uploads DROP COLUMN size;
ALTER TABLE uploads ADD COLUMN file bytea NOT NULL DEFAULT '';
DROP TABLE upload_chunks;
DROP SEQUENCE login_attempts;
ALTER TABLE login_failures DROP COLUMN attempt;
