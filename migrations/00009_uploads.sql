-- +goose Up
-- Files uploaded to the panel's import page, with their dry run's and
-- real run's progress and report: in the database, so any replica shows
-- them and applies them once.
CREATE TABLE uploads (
    id         text PRIMARY KEY,
    salon_id   bigint NOT NULL REFERENCES salons ON DELETE CASCADE,
    user_id    bigint NOT NULL REFERENCES users ON DELETE CASCADE,
    kind       text NOT NULL,
    name       text NOT NULL,
    file       bytea NOT NULL,
    phase      text NOT NULL CHECK (phase IN ('checking', 'checked', 'applying', 'applied', 'failed')),
    read_bytes bigint NOT NULL DEFAULT 0,
    rows_read  integer NOT NULL DEFAULT 0,
    summary    jsonb,
    lines      jsonb,
    error      text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX uploads_created ON uploads (created_at);

-- +goose Down
DROP TABLE uploads;
