-- +goose Up
-- The waitlist: clients waiting for a time of a service (a master or any,
-- a range of days, optional times of day), offered time as it frees, in
-- the order they joined.

ALTER TABLE salons ADD COLUMN waitlist_mode text NOT NULL DEFAULT 'broadcast' CHECK (waitlist_mode IN ('hold', 'broadcast'));
ALTER TABLE salons ADD COLUMN waitlist_offer_min integer NOT NULL DEFAULT 15 CHECK (waitlist_offer_min BETWEEN 1 AND 1440);
ALTER TABLE salons ADD COLUMN waitlist_broadcast_n integer NOT NULL DEFAULT 3 CHECK (waitlist_broadcast_n BETWEEN 1 AND 50);

CREATE TABLE waitlist_entries (
    id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    salon_id          bigint NOT NULL REFERENCES salons ON DELETE CASCADE,
    client_id         bigint NOT NULL,
    service_id        bigint NOT NULL,
    master_id         bigint, -- NULL: any master who does the service
    from_date         date NOT NULL,
    to_date           date NOT NULL CHECK (to_date >= from_date),
    -- salon-local windows of the day, minutes from midnight: [[from, to], ...]; empty: all day
    times             jsonb NOT NULL DEFAULT '[]',
    status            text NOT NULL DEFAULT 'waiting' CHECK (status IN ('waiting', 'booked', 'left', 'ended')),
    manage_token_hash bytea NOT NULL,
    contact_name      text NOT NULL DEFAULT '',
    contact_email     text NOT NULL DEFAULT '',
    lang              text NOT NULL DEFAULT '',
    booking_id        bigint, -- the booking an offer became
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (salon_id, client_id) REFERENCES clients (salon_id, id),
    FOREIGN KEY (salon_id, service_id) REFERENCES services (salon_id, id)
);
CREATE INDEX waitlist_entries_waiting ON waitlist_entries (salon_id, service_id, id) WHERE status = 'waiting';

-- An offer of a freed time to an entry: open (broadcast: the first to take
-- it books it), held (hold mode: a pending booking keeps it for the entry
-- until expires_at), taken (booked), gone (taken by another, or no longer
-- free), expired (a hold not taken).
CREATE TABLE waitlist_offers (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    salon_id   bigint NOT NULL,
    entry_id   bigint NOT NULL REFERENCES waitlist_entries ON DELETE CASCADE,
    master_id  bigint NOT NULL,
    starts_at  timestamptz NOT NULL,
    ends_at    timestamptz NOT NULL,
    status     text NOT NULL CHECK (status IN ('open', 'held', 'taken', 'gone', 'expired')),
    booking_id bigint,
    expires_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (entry_id, master_id, starts_at)
);
CREATE INDEX waitlist_offers_time ON waitlist_offers (salon_id, master_id, starts_at) WHERE status IN ('open', 'held');

-- Time that freed (a cancelled booking), written in the cancellation's
-- transaction, to be offered by whichever replica claims it.
CREATE TABLE waitlist_freed (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    salon_id   bigint NOT NULL,
    master_id  bigint NOT NULL,
    starts_at  timestamptz NOT NULL,
    ends_at    timestamptz NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE waitlist_freed;
DROP TABLE waitlist_offers;
DROP TABLE waitlist_entries;
ALTER TABLE salons DROP COLUMN waitlist_broadcast_n;
ALTER TABLE salons DROP COLUMN waitlist_offer_min;
ALTER TABLE salons DROP COLUMN waitlist_mode;
