-- +goose Up
-- Who may see and change a booking is decided in the core from a credential
-- the caller presents. Chat channels (Telegram today) reach clients and
-- masters through identities, each created only with proof of who the person
-- is; a typed phone number proves nothing. A booking remembers the chat
-- account that made it (its origin), so the maker can manage it without
-- being handed the client record of whoever owns that phone.

-- The salon's country: the default region for phone numbers written in a
-- national format.
ALTER TABLE salons ADD COLUMN country text NOT NULL DEFAULT 'RU' CHECK (country ~ '^[A-Z]{2}$');

-- A client's account on a chat channel: channel 'telegram', external_id the
-- Telegram user id as text. verified_by says what proved it: 'contact' (the
-- channel vouched that the person owns the client's phone, e.g. a Telegram
-- contact shared by its owner), 'import' or 'admin' (the salon vouched).
CREATE TABLE client_identities (
    salon_id    bigint NOT NULL,
    client_id   bigint NOT NULL,
    channel     text NOT NULL CHECK (channel ~ '^[a-z][a-z0-9_]{1,31}$'),
    external_id text NOT NULL CHECK (length(external_id) BETWEEN 1 AND 128),
    verified_by text NOT NULL CHECK (verified_by IN ('contact', 'import', 'admin')),
    verified_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (salon_id, channel, external_id),
    FOREIGN KEY (salon_id, client_id) REFERENCES clients (salon_id, id) ON DELETE CASCADE
);
CREATE INDEX client_identities_client ON client_identities (client_id);
-- Whether a salon has clients reachable on a chat channel at all is part of
-- the cached catalogue: in a salon without any, a booking writes no
-- notification job and checks for none.
CREATE TRIGGER client_identities_ins AFTER INSERT ON client_identities REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION catalog_changed_new();
CREATE TRIGGER client_identities_del AFTER DELETE ON client_identities REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION catalog_changed_old();
-- A chat account's bookings in every salon (the bot's /my).
CREATE INDEX client_identities_external ON client_identities (channel, external_id);

-- A master's account on a chat channel, linked with a one-time code.
CREATE TABLE master_identities (
    salon_id    bigint NOT NULL,
    master_id   bigint NOT NULL,
    channel     text NOT NULL CHECK (channel ~ '^[a-z][a-z0-9_]{1,31}$'),
    external_id text NOT NULL CHECK (length(external_id) BETWEEN 1 AND 128),
    verified_by text NOT NULL CHECK (verified_by IN ('link_code', 'admin')),
    verified_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (salon_id, channel, external_id),
    FOREIGN KEY (salon_id, master_id) REFERENCES masters (salon_id, id) ON DELETE CASCADE
);
CREATE INDEX master_identities_master ON master_identities (master_id);
-- Which masters are reachable is part of the cached catalogue: a booking
-- of a master nobody can tell writes no notification job.
CREATE TRIGGER master_identities_ins AFTER INSERT ON master_identities REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION catalog_changed_new();
CREATE TRIGGER master_identities_upd AFTER UPDATE ON master_identities REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION catalog_changed_both();
CREATE TRIGGER master_identities_del AFTER DELETE ON master_identities REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION catalog_changed_old();

-- The chat account that made a booking, and the name given with it (the
-- client record keeps its own name: a booking never renames it).
ALTER TABLE bookings
    ADD COLUMN origin_channel text,
    ADD COLUMN origin_ref     text,
    ADD COLUMN contact_name   text NOT NULL DEFAULT '',
    ADD CONSTRAINT bookings_origin_pair CHECK ((origin_channel IS NULL) = (origin_ref IS NULL));
CREATE INDEX bookings_origin ON bookings (origin_channel, origin_ref, starts_at) WHERE origin_ref IS NOT NULL;

-- The channel a change was made through (web, telegram, panel, import, system).
ALTER TABLE booking_events ADD COLUMN channel text NOT NULL DEFAULT 'system';

-- Legacy links. clients.telegram_id was filled from a typed phone as well as
-- from shared contacts, so it proves nothing and becomes no identity; the
-- bookings made in the bot keep their maker as origin. Masters were linked
-- with one-time codes: those links are identities.
UPDATE bookings b SET origin_channel = 'telegram', origin_ref = c.telegram_id::text
FROM clients c WHERE c.id = b.client_id AND b.source = 'bot' AND c.telegram_id IS NOT NULL;
INSERT INTO master_identities (salon_id, master_id, channel, external_id, verified_by)
SELECT salon_id, id, 'telegram', telegram_id::text, 'link_code' FROM masters WHERE telegram_id IS NOT NULL;
UPDATE clients SET name = 'Telegram ' || telegram_id WHERE name = '' AND phone IS NULL;
ALTER TABLE clients DROP COLUMN telegram_id;
ALTER TABLE clients ADD CONSTRAINT clients_reachable CHECK (phone IS NOT NULL OR name <> '');
ALTER TABLE masters DROP COLUMN telegram_id;

-- Nothing that grants access is stored readable: idempotency keys are kept
-- as hashes (a replay proves it knows the key), and a replay's manage token
-- is derived from the key again instead of being stored.
ALTER TABLE idempotency_keys ADD COLUMN key_hash bytea;
UPDATE idempotency_keys SET key_hash = sha256(convert_to(key, 'UTF8')), result = result - 'manage_token';
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_pkey;
ALTER TABLE idempotency_keys DROP COLUMN key;
ALTER TABLE idempotency_keys ALTER COLUMN key_hash SET NOT NULL;
ALTER TABLE idempotency_keys ADD PRIMARY KEY (salon_id, scope, key_hash);

-- Telegram updates are kept exactly as received (bytes: a \u0000 escape
-- that jsonb refuses is still an update); what is not an update at all is
-- quarantined, so one bad update never stops the others.
ALTER TABLE tg_updates ALTER COLUMN payload TYPE bytea USING convert_to(payload::text, 'UTF8');
CREATE TABLE tg_quarantine (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    raw         bytea NOT NULL,
    reason      text NOT NULL,
    received_at timestamptz NOT NULL DEFAULT now()
);

-- Reminders sent, one per booking, start and lead: a sweep finds the
-- bookings due a reminder, and this row, written with the message, makes
-- each reminder go once (a moved booking is reminded of its new time).
CREATE TABLE booking_reminders (
    booking_id bigint NOT NULL REFERENCES bookings ON DELETE CASCADE,
    starts_at  timestamptz NOT NULL,
    lead_min   integer NOT NULL,
    sent_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (booking_id, starts_at, lead_min)
);

-- +goose Down
DROP TABLE booking_reminders;
DROP TABLE tg_quarantine;
ALTER TABLE tg_updates ALTER COLUMN payload TYPE jsonb USING convert_from(payload, 'UTF8')::jsonb;
DELETE FROM idempotency_keys;
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_pkey;
ALTER TABLE idempotency_keys DROP COLUMN key_hash;
ALTER TABLE idempotency_keys ADD COLUMN key text NOT NULL CHECK (length(key) BETWEEN 1 AND 255);
ALTER TABLE idempotency_keys ADD PRIMARY KEY (salon_id, scope, key);
ALTER TABLE masters ADD COLUMN telegram_id bigint;
UPDATE masters m SET telegram_id = i.external_id::bigint FROM master_identities i
WHERE i.master_id = m.id AND i.channel = 'telegram';
CREATE UNIQUE INDEX masters_telegram ON masters (salon_id, telegram_id) WHERE telegram_id IS NOT NULL;
ALTER TABLE clients DROP CONSTRAINT clients_reachable;
ALTER TABLE clients ADD COLUMN telegram_id bigint;
UPDATE clients c SET telegram_id = i.external_id::bigint FROM client_identities i
WHERE i.client_id = c.id AND i.channel = 'telegram';
CREATE UNIQUE INDEX clients_telegram ON clients (salon_id, telegram_id) WHERE telegram_id IS NOT NULL;
ALTER TABLE clients ADD CONSTRAINT clients_check CHECK (phone IS NOT NULL OR telegram_id IS NOT NULL) NOT VALID;
ALTER TABLE booking_events DROP COLUMN channel;
DROP INDEX bookings_origin;
ALTER TABLE bookings DROP CONSTRAINT bookings_origin_pair,
    DROP COLUMN origin_channel, DROP COLUMN origin_ref, DROP COLUMN contact_name;
DROP TABLE master_identities;
DROP TABLE client_identities;
ALTER TABLE salons DROP COLUMN country;
