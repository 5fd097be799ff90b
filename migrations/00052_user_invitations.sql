-- +goose Up
-- A salon's owner adds a colleague by inviting an e-mail address: the
-- invitation's link (its code, kept only as a hash, like every code) goes
-- to that mailbox, and lets whoever opens it there set a password and
-- become the salon's user. Whether the address has an account at another
-- salon is told only to them, never to the owner who typed it.
CREATE TABLE user_invitations (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    salon_id    bigint NOT NULL REFERENCES salons ON DELETE CASCADE,
    email       text NOT NULL CHECK (email = lower(email) AND email LIKE '%_@_%'),
    role        text NOT NULL CHECK (role IN ('owner', 'admin')),
    code_hash   bytea NOT NULL UNIQUE,
    invited_by  bigint REFERENCES users ON DELETE CASCADE, -- (a user removed: their invitations go)
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    mailed_at   timestamptz,
    mail_error  text NOT NULL DEFAULT '',
    UNIQUE (salon_id, email)
);

CREATE TRIGGER user_invitations_audit AFTER INSERT OR UPDATE OR DELETE ON user_invitations FOR EACH ROW
    WHEN (audited()) EXECUTE FUNCTION audit_change('invitation');

-- +goose Down
DROP TABLE user_invitations;
