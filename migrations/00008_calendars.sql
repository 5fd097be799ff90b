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

-- +goose Down
DROP TABLE master_calendars;
