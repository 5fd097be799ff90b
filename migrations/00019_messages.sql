-- +goose Up
-- The message layer. Every message owed to a client or a master is a row of
-- messages, written by the job that a change of state causes (or by the
-- reminder sweep), and sent by a job of its own that rebuilds its words
-- from the booking's state at that moment and drops it when it no longer
-- applies. The unique key makes a message once per (booking, kind,
-- channel, recipient) and what tells two of a kind apart (ref: a
-- reminder's offset and the start it reminds of, a change's job).

ALTER TABLE salons
    ADD COLUMN quiet_from time NOT NULL DEFAULT '21:00',
    ADD COLUMN quiet_to time NOT NULL DEFAULT '09:00',
    ADD COLUMN reminder_offsets_min integer[] NOT NULL DEFAULT '{1440,120}'
        CHECK (cardinality(reminder_offsets_min) <= 4 AND 0 < ALL (reminder_offsets_min) AND 10080 >= ALL (reminder_offsets_min)),
    -- Which messages each paid channel carries ('{}': the channel is off).
    -- Telegram is free and carries every kind.
    ADD COLUMN email_kinds text[] NOT NULL DEFAULT '{confirmation,changed,cancelled,hold_expired,payment_due,paid,refunded,reminder,waitlist_offer}',
    ADD COLUMN sms_kinds text[] NOT NULL DEFAULT '{}',
    -- the share of bookings (percent) whose reminders are plain, with no
    -- one-tap answers: the hold-out the reminders' effect is measured by
    ADD COLUMN reminder_holdout_pct integer NOT NULL DEFAULT 0 CHECK (reminder_holdout_pct BETWEEN 0 AND 50);

ALTER TABLE bookings
    -- the language the client booked in ('': the salon's)
    ADD COLUMN lang text NOT NULL DEFAULT '' CHECK (lang IN ('', 'ru', 'en')),
    ADD COLUMN client_confirmed_at timestamptz,
    ADD COLUMN client_confirmed_via text CHECK (client_confirmed_via IN ('telegram', 'email', 'sms', 'widget'));


CREATE TABLE messages (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- the booking's salon (no key of its own on salons: a booking's
    -- messages go with it, and checking the salon's row on every insert
    -- would have every booking of a salon share a lock on it)
    salon_id    bigint NOT NULL,
    booking_id  bigint NOT NULL REFERENCES bookings ON DELETE CASCADE,
    kind        text NOT NULL CHECK (kind IN ('confirmation', 'changed', 'cancelled', 'hold_expired', 'payment_due', 'paid',
                                              'refunded', 'reminder', 'waitlist_offer', 'new')),
    channel     text NOT NULL CHECK (channel IN ('telegram', 'email', 'sms')),
    -- the address on the channel: a Telegram user id, an e-mail, a phone (E.164)
    recipient   text NOT NULL,
    to_master   boolean NOT NULL DEFAULT false,
    ref         text NOT NULL DEFAULT '',
    -- for a reminder: how long before the start, and the start it reminds of
    lead_min    integer,
    starts_at   timestamptz,
    -- for a change: the job's arguments (where a moved booking was)
    change      jsonb,
    state       text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'sent', 'delivered', 'failed', 'dropped')),
    error       text,
    attempts    integer NOT NULL DEFAULT 0, -- since it was (re)queued: the backoff's count
    sends       integer NOT NULL DEFAULT 0, -- claims ever: a retried chat message's new key
    not_before  timestamptz NOT NULL DEFAULT now(),
    -- a send in flight: the provider was called and has not answered yet
    sending_at  timestamptz,
    provider_id text,
    segments    integer,
    -- a hold-out reminder: sent without its one-tap answers
    plain       boolean NOT NULL DEFAULT false,
    subject     text,
    body        text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    sent_at     timestamptz,
    delivered_at timestamptz,
    UNIQUE (booking_id, kind, channel, recipient, ref)
);
-- what is due to be sent (the unique key serves a booking's messages)
CREATE INDEX messages_due ON messages (not_before, id) WHERE state = 'queued';
-- sends in flight (the sweep fails those of a dead replica)
CREATE INDEX messages_sending ON messages (sending_at) WHERE state = 'queued' AND sending_at IS NOT NULL;
CREATE INDEX messages_failed ON messages (salon_id, id) WHERE state = 'failed';
CREATE INDEX messages_unreported ON messages (sent_at) WHERE state = 'sent' AND channel = 'sms';

-- New bookings whose client is owed a confirmation by e-mail or SMS: one
-- small row written with the booking (the transactional outbox, as cheap
-- as a row can be), which the sender turns into the confirmation's
-- messages, then deletes.
CREATE TABLE booking_outbox (
    booking_id bigint PRIMARY KEY
);

-- How many messages each channel's provider was handed in a second, by
-- every replica together: a provider's rate limit is one for all of them.
CREATE TABLE message_rate (
    channel text NOT NULL,
    second  timestamptz NOT NULL,
    n       integer NOT NULL,
    PRIMARY KEY (channel, second)
);

-- A channel a client stopped at a salon (an unsubscribe link, an SMS
-- "STOP"): nothing more goes to that address there.
CREATE TABLE message_optouts (
    salon_id   bigint NOT NULL REFERENCES salons ON DELETE CASCADE,
    channel    text NOT NULL,
    address    text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (salon_id, channel, address)
);

-- Links in messages: each one purpose for one booking (confirm, cancel,
-- move, manage, unsubscribe, telegram), expiring, stored as the SHA-256 of
-- the token (the token itself is only ever in the message).
CREATE TABLE booking_links (
    token_hash bytea PRIMARY KEY,
    salon_id   bigint NOT NULL,
    booking_id bigint NOT NULL REFERENCES bookings ON DELETE CASCADE,
    action     text NOT NULL CHECK (action IN ('confirm', 'cancel', 'move', 'manage', 'unsubscribe', 'telegram')),
    channel    text NOT NULL,
    address    text NOT NULL DEFAULT '',
    message_id bigint REFERENCES messages ON DELETE SET NULL,
    expires_at timestamptz NOT NULL,
    used_at    timestamptz,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX booking_links_booking ON booking_links (booking_id, action);
CREATE INDEX booking_links_expired ON booking_links (expires_at);

-- +goose Down
DROP TABLE message_rate;
DROP TABLE booking_outbox;
DROP TABLE booking_links;
DROP TABLE message_optouts;
DROP TABLE messages;
ALTER TABLE bookings DROP COLUMN client_confirmed_via, DROP COLUMN client_confirmed_at, DROP COLUMN lang;
ALTER TABLE salons DROP COLUMN reminder_holdout_pct, DROP COLUMN sms_kinds, DROP COLUMN email_kinds, DROP COLUMN reminder_offsets_min,
    DROP COLUMN quiet_to, DROP COLUMN quiet_from;
