-- +goose Up
-- A deposit the refund policy keeps when its booking is cancelled while
-- the payment was authorized and not yet captured: it is captured anyway
-- (not released), as it would have been a moment later.
ALTER TABLE payment_sessions ADD COLUMN keep boolean NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE payment_sessions DROP COLUMN keep;
