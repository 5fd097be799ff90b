-- +goose Up
-- A salon's own cancellation or move (a master ill, the salon closed: the
-- desk said so) frees no time for the waitlist: the time cannot be served,
-- and an offer of it would book a client with a master who is not there.
-- The transaction says so with salon.not_offered, and the trigger that
-- writes freed time (00023) does not fire.
DROP TRIGGER waitlist_busy_freed ON master_busy;
CREATE TRIGGER waitlist_busy_freed AFTER DELETE ON master_busy
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT
    WHEN (coalesce(current_setting('salon.not_offered', true), '') <> 'on')
    EXECUTE FUNCTION waitlist_busy_freed();

-- +goose Down
DROP TRIGGER waitlist_busy_freed ON master_busy;
CREATE TRIGGER waitlist_busy_freed AFTER DELETE ON master_busy
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION waitlist_busy_freed();
