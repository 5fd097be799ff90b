-- +goose Up
-- The e-mail a client gave with a booking, where that booking's messages
-- go. It is the booking's, never the client record's: whoever types a
-- phone number must not redirect that client's messages.
ALTER TABLE bookings ADD COLUMN contact_email text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE bookings DROP COLUMN contact_email;
