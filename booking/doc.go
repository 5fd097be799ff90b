// Package booking is the core of the salon booking platform: salons, their
// masters, services and shifts, clients, bookings and free slots. Every front
// end (the Telegram bot, the web widget and its JSON API, the admin panel,
// the CSV importer) changes a calendar only through a *Service, and maps the
// error kinds below to its own output.
//
// # Guarantees, and where each lives
//
// No overlapping active bookings per master. The schema's
// bookings_master_no_overlap constraint (EXCLUDE USING gist over salon,
// master and tstzrange(starts_at, booking_slot_end(starts_at, duration +
// buffer)), for pending and confirmed bookings) refuses any overlap, on
// every path, including raw SQL that skips the lock. booking_slot_end is
// IMMUTABLE because it only adds minutes.
//
// Contention is queued, not failed. Every write to a master's calendar first
// takes pg_advisory_xact_lock on hashtextextended('booking-master:<id>'), so
// bookings of one master serialise while different masters run in parallel;
// Reschedule between two masters locks both in ascending id order.
//
// A lost race is a good answer. Book inserts under a SAVEPOINT; an exclusion
// violation (SQLSTATE 23P01) rolls back to the savepoint only, and the same
// transaction computes up to MaxAlternatives nearest free starts (the same
// master before and after, then other masters who do the service at the
// requested time), returned in a *SlotTakenError.
//
// Retries are harmless. Book takes an idempotency key: the same key with the
// same request returns the first booking (and its manage token), another
// request gets ErrKeyReused, and concurrent replays wait for the first one's
// outcome, so they create one booking.
//
// Nothing is half-written. Each exported method runs in one transaction; on
// any error nothing it did remains.
//
// # Errors
//
// Methods return errors that wrap one of the kinds ErrNotFound, ErrInvalid
// (a *ValidationError naming the fields), ErrSlotTaken (a *SlotTakenError),
// ErrConflict, ErrForbidden and ErrTooLate, tested with errors.Is; each
// method's comment says which. Any other error is internal: front ends log
// it and show "internal error".
//
// # Time
//
// Instants are time.Time; calendar days (Date) and wall-clock times (Clock)
// are the salon's, resolved through its IANA zone when shifts are written,
// so slot computation works on instants and DST days need no special case.
// The clock is injected (WithClock).
//
// # Speed
//
// Book costs two round trips (its transaction is pipelined) and reads only
// the catalogue version and the master's shifts under the lock; the salon's
// settings, services and offers come from a cache keyed by that version,
// which triggers move on every catalogue change. See docs/BENCHMARKS.md.
package booking
