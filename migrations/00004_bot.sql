-- +goose Up
-- The Telegram bot. Every update is written to tg_updates (the inbox) before
-- it is acted on, so a redelivered update has no second effect and a crash
-- loses none; each chat's dialog lives in tg_chats, so replicas and restarts
-- continue where the user was; every outgoing call goes through tg_outbox,
-- sent by one rate-limited sender.

CREATE TABLE tg_updates (
    update_id    bigint PRIMARY KEY,
    chat_id      bigint NOT NULL,
    payload      jsonb NOT NULL,
    received_at  timestamptz NOT NULL DEFAULT now(),
    processed_at timestamptz,
    attempts     integer NOT NULL DEFAULT 0,
    not_before   timestamptz NOT NULL DEFAULT now(),
    error        text
);
CREATE INDEX tg_updates_pending ON tg_updates (chat_id, update_id) WHERE processed_at IS NULL;
CREATE INDEX tg_updates_processed ON tg_updates (processed_at) WHERE processed_at IS NOT NULL;

-- Small named values: the long-polling offset.
CREATE TABLE tg_state (
    key   text PRIMARY KEY,
    value bigint NOT NULL
);

CREATE TABLE tg_chats (
    chat_id    bigint PRIMARY KEY,
    user_id    bigint NOT NULL,
    lang       text NOT NULL DEFAULT 'ru' CHECK (lang IN ('ru', 'en')),
    lang_set   boolean NOT NULL DEFAULT false,
    salon_id   bigint REFERENCES salons ON DELETE SET NULL,
    dialog     jsonb NOT NULL DEFAULT '{}',
    updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE tg_outbox (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    chat_id    bigint NOT NULL,
    payload    jsonb NOT NULL,
    -- a job that queues a message says so once: a retried job finds its key
    dedupe_key text UNIQUE,
    state      text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'sent', 'failed')),
    attempts   integer NOT NULL DEFAULT 0,
    not_before timestamptz NOT NULL DEFAULT now(),
    last_error text,
    created_at timestamptz NOT NULL DEFAULT now(),
    sent_at    timestamptz
);
CREATE INDEX tg_outbox_queued ON tg_outbox (id) WHERE state = 'queued';

-- One-time codes with which a master links their Telegram account.
CREATE TABLE master_link_codes (
    code_hash  bytea PRIMARY KEY,
    salon_id   bigint NOT NULL,
    master_id  bigint NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at    timestamptz,
    FOREIGN KEY (salon_id, master_id) REFERENCES masters (salon_id, id) ON DELETE CASCADE
);

-- +goose Down
DROP TABLE master_link_codes;
DROP TABLE tg_outbox;
DROP TABLE tg_chats;
DROP TABLE tg_state;
DROP TABLE tg_updates;
