-- +goose Up
-- A master's calendar feed: an iCalendar URL with a secret token (only its
-- hash is stored). One per master; a new one replaces (revokes) the old.
CREATE TABLE master_calendars (
    master_id  bigint PRIMARY KEY,
    salon_id   bigint NOT NULL,
    token_hash bytea NOT NULL UNIQUE,
    created_at timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (salon_id, master_id) REFERENCES masters (salon_id, id) ON DELETE CASCADE
);

-- A client's link to one booking's .ics file (from the bot, where there is
-- no manage token): only its hash is stored.
ALTER TABLE bookings ADD COLUMN calendar_token_hash bytea;
CREATE UNIQUE INDEX bookings_calendar_token ON bookings (calendar_token_hash) WHERE calendar_token_hash IS NOT NULL;

-- +goose Down
DROP INDEX bookings_calendar_token;
ALTER TABLE bookings DROP COLUMN calendar_token_hash;
DROP TABLE master_calendars;
