-- +goose Up
-- Panel users: salon owners and admins. Passwords are argon2id hashes in the
-- PHC string format; the email is the login and unique across the platform.
CREATE TABLE users (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    salon_id      bigint NOT NULL REFERENCES salons ON DELETE CASCADE,
    email         text NOT NULL CHECK (email = lower(email) AND email LIKE '%_@_%'),
    password_hash text NOT NULL,
    role          text NOT NULL CHECK (role IN ('owner', 'admin')),
    created_at    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (email)
);
CREATE INDEX users_salon ON users (salon_id);

-- +goose Down
DROP TABLE users;
