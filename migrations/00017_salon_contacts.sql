-- +goose Up
-- Where the salon is and how it is reached, as clients read it on the
-- booking page, in their calendar and in messages; and its privacy policy,
-- which the booking form links before a client gives their data.
ALTER TABLE salons
    ADD COLUMN address text NOT NULL DEFAULT '',
    ADD COLUMN phone text NOT NULL DEFAULT '',
    ADD COLUMN about text NOT NULL DEFAULT '',
    ADD COLUMN privacy_url text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE salons DROP COLUMN address, DROP COLUMN phone, DROP COLUMN about, DROP COLUMN privacy_url;
