-- +goose Up
-- The message a chat's current screen (a message with buttons) was sent as,
-- and the nonce of its buttons, recorded once Telegram took it: a turn
-- with no button tapped (a code typed on the confirmation screen) edits
-- that screen, when it is still the dialog's, instead of leaving its
-- buttons looking live above the answer.
ALTER TABLE tg_chats ADD COLUMN screen_msg integer, ADD COLUMN screen_nonce text;

-- +goose Down
ALTER TABLE tg_chats DROP COLUMN screen_msg, DROP COLUMN screen_nonce;
