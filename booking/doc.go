// Package booking is the core of the salon booking platform: salons, their
// masters, services and shifts, clients, bookings and free slots, who may
// see and change them, and the notifications their changes cause. Every
// front end (the Telegram bot, the web widget and its JSON API, the admin
// panel, the CSV importer) reads and changes a calendar only through a
// *Service, passing who is asking, and maps the error kinds below to its
// own output.
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
// Contention is queued, not failed, and the queue is bounded. Every write to
// a master's calendar first takes pg_advisory_xact_lock on
// hashtextextended('booking-master:<id>'), so bookings of one master
// serialise while different masters run in parallel. A transaction takes its
// master locks once, all together, in ascending id order (Reschedule between
// two masters takes both); one that finds the booking moved to another
// master meanwhile rolls back and starts again, so locks are never taken in
// two orders. A request that finds a master's lock taken does not wait
// holding a database connection: it ends its transaction and waits at the
// master's gate in the process (one request per process and master waits in
// the database, at most MaxGateWaiters in all), so a busy master never takes
// the connections other salons need. (The one exception is a client's try
// of a code that is a package's or certificate's: holding the code's lock,
// which lets one try of the code on at a time, it waits for its masters
// in the database, within the same lock wait, rather than lose its turn
// among the code's tries; a made-up code waits at the gate.) A wait is
// bounded by the lock wait (WithLockWait), a request by its context's
// deadline: past either, nothing is written and the answer is
// ErrUnavailable.
//
// A lost race is a good answer, and a cheap one. Book inserts under a
// SAVEPOINT; the constraint alone decides who wins. A request for a busy
// master whose start an active booking visibly covers does not even queue.
// A loser's transaction ends (releasing the lock) before its alternatives
// are computed: up to MaxAlternatives nearest free starts, the same master
// before and after, then other masters at the requested time, then other
// masters nearby, searched from a fresh snapshot in a week around the time
// and in the whole bookable window when that finds fewer than three. The
// losers of one slot share one search. They are advice: the constraint
// decides again when one is booked.
//
// Retries are harmless. Book takes an idempotency key: the same key with the
// same request returns the first booking (and the same manage token),
// another request gets ErrKeyReused, and concurrent replays wait (bounded)
// for the first one's outcome, so they create one booking.
//
// Nothing is half-written. Each exported method runs in one transaction; on
// any error nothing it did remains.
//
// # Trust
//
// Every method of Service finds who asks in its context (As, a Caller): a
// context that names nobody is refused (ErrForbidden), never taken for the
// platform, which the jobs, the command line and tests name explicitly
// (BySystem). Who may see or change a booking is decided here, from the
// caller's credential, never by a front end comparing ids: a manage token
// opens its booking; a chat identity (as the channel vouches for it) opens
// the bookings it made and those of the client it was proven to be; a panel
// user opens their salon; the system everything. A booking the caller may
// not see is ErrNotFound. Clients are reached through chat identities
// (client_identities: channel, external id, how it was verified), created
// only with proof of who the person is: a phone the channel vouched for (a
// Telegram contact shared by its owner). A typed phone books, and reveals,
// lists and hands over nothing: the booking goes to the client of that phone
// (whose record it never renames; the name given stays on the booking) and
// the maker's identity becomes its origin. Nothing that grants access is
// stored readable: manage tokens and link codes as hashes, idempotency keys
// as hashes with replayed tokens derived again from the key.
//
// # Staff, and the audit log
//
// A panel user asks as ByStaff. Staff are held to their salon (another
// salon's ids are ErrNotFound) and their role: owners manage the catalogue,
// users and settings; admins the day, clients and shifts (ErrForbidden).
// Every change a staff member or an import makes is a row of audit_log
// (actor, action, entity, the changed columns before and after, secrets left
// out), written by triggers in the change's own transaction whenever the
// transaction names its actor, so no code path can change a salon from the
// panel without its row. Panel sessions and login throttling live in
// PostgreSQL (Login, SessionUser, Logout): only hashes of session ids are
// stored; a login attempt is counted before its password is hashed, and
// hashing runs a few at a time in a bounded queue (WithPasswordChecks).
//
// # Messages
//
// Messages are effects of state, sent once. A change that someone can be
// told about writes, in its own transaction, its notification job (a chat
// identity of the client other than the one that made the change, a linked
// master) or, for a new booking whose client is owed an e-mail or SMS, one
// row of booking_outbox; the job, the outbox's reader (planOutbox) and the
// reminder sweep (Remind, planning 13 hours ahead by the salon's offsets)
// write rows of messages, one per (booking, kind, channel, recipient, and a
// reminder's offset and start or a change's job). Whichever replica claims a
// row (sending_at) rebuilds it from the booking as it is then and drops it
// when it no longer applies; it goes to the bot's outbox (Telegram, whose
// sender reports back) or through the channel's Courier (e-mail, SMS), at
// the provider's rate for all replicas together (message_rate). An answer
// "not now" is asked again with a backoff; a refusal, or an answer lost
// after the text may have gone, fails the message with its reason and is
// never sent again by itself. Quiet hours hold SMS and chats for the
// morning. Links in messages are single-purpose tokens stored hashed, and
// GET-safe: OpenLink shows, UseLink (a POST) acts, as the client through the
// link's channel. Confirmed bookings become completed once their
// salon-local day has ended (CompletePast, a periodic job), unless staff
// marked them no-show.
//
// Freed time finds the waiting list without a race in the dark. Triggers
// write every stretch of freed time (a booking's busy interval that goes, a
// shift that comes) in the transaction that frees it and wake every replica
// on its commit; one claims it (SKIP LOCKED) and offers it, as the calendar
// then is, in join order. An open offer holds nothing: the first to accept
// books it under the master's lock like any booking, the others get "taken"
// with alternatives. A held offer is a pending booking inside the exclusion
// constraint, so nothing else can book the time until it is taken (its row
// locked, like ExpireHolds locks it) or expires to the next in line.
//
// # Errors
//
// Methods return errors that wrap one of the kinds ErrNotFound, ErrInvalid
// (a *ValidationError naming the fields), ErrSlotTaken (a *SlotTakenError),
// ErrConflict, ErrForbidden, ErrTooLate and ErrUnavailable, tested with
// errors.Is; each method's comment says which. Any other error is internal:
// front ends log it and show "internal error". Text people type is checked
// once, here, for every field (see CleanName and the MaxNameLen family).
//
// # Time
//
// Instants are time.Time; calendar days (Date) and wall-clock times (Clock)
// are the salon's, resolved through its IANA zone when shifts are written,
// so slot computation works on instants and DST days need no special case.
// The clock is injected (WithClock). Policies the front ends show (the
// bookable window, the cancel cutoff, the master "any master" gets) are
// methods here: Salon.Window, Salon.ChangeableUntil, Salon.ClientMayChange,
// and Slots without a master.
//
// # Speed
//
// Book costs two round trips when the master is free (its transaction is
// pipelined) and reads only the catalogue version and the master's shifts
// under the lock; the salon's settings, services, offers and linked masters
// come from a cache keyed by that version, which triggers move on every
// catalogue change. Calendar (the panel's day and week views) reads its
// masters, shifts, bookings and version in one round trip of a fixed number
// of statements, however many masters there are. See docs/BENCHMARKS.md.
package booking
