package booking

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
)

// SalonService is something a salon sells: a haircut, a manicure. (The type is
// not called Service because Service is the booking core itself.)
type SalonService struct {
	ID          int64
	SalonID     int64
	Name        string
	DurationMin int // how long the client is in the chair
	BufferMin   int // minutes kept free after it (cleaning); not shown to clients
	// ProcessingMin and FinishMin: after DurationMin the client stays
	// ProcessingMin more (a colour taking) while the master is free for
	// others, then the master works FinishMin more.
	ProcessingMin int
	FinishMin     int
	Price         Money // default price; a master may have another
	Deposit       Money // prepaid part; 0 when none is required
	Active        bool
}

// StayMin is how long a client stays for the service with a master who
// works durationMin: the work, then a processing time's wait and finish.
func (sv *SalonService) StayMin(durationMin int) int {
	return durationMin + sv.ProcessingMin + sv.FinishMin
}

// timing is the service's terms of time with a master who works durationMin.
func (sv *SalonService) timing(durationMin int) timing {
	return timing{dur: minutes(durationMin), buffer: minutes(sv.BufferMin), processing: minutes(sv.ProcessingMin),
		finish: minutes(sv.FinishMin)}
}

// serviceColumns are what scanService reads.
const serviceColumns = `id, salon_id, name, duration_min, buffer_min, price, deposit, active, processing_min, finish_min`

func scanService(r pgx.Row) (SalonService, error) {
	var sv SalonService
	err := r.Scan(&sv.ID, &sv.SalonID, &sv.Name, &sv.DurationMin, &sv.BufferMin, &sv.Price, &sv.Deposit, &sv.Active,
		&sv.ProcessingMin, &sv.FinishMin)
	return sv, err
}

// Check says what CreateService and UpdateService refuse of the
// service's fields, every field at fault (a form says them all at once);
// nil when none. It changes nothing.
func (sv SalonService) Check() error { return sv.normalize() }

func (sv *SalonService) normalize() error {
	fe := fieldErrors{}
	sv.Name = cleanText(fe, "name", sv.Name, MaxTitleLen, oneLine, true)
	checkRange(fe, "duration_min", sv.DurationMin, 5, 720)
	checkRange(fe, "buffer_min", sv.BufferMin, 0, 240)
	checkRange(fe, "processing_min", sv.ProcessingMin, 0, 480)
	checkRange(fe, "finish_min", sv.FinishMin, 0, 240)
	if sv.FinishMin > 0 && sv.ProcessingMin == 0 {
		fe.add("finish_min", "needs processing time before it")
	}
	if sv.Price < 0 {
		fe.add("price", "must not be negative")
	}
	if sv.Deposit < 0 {
		fe.add("deposit", "must not be negative")
	} else if sv.Deposit > sv.Price {
		fe.add("deposit", "must not exceed the price")
	}
	return fe.err()
}

// CreateService adds a service to the salon's menu (active).
// Errors: ErrNotFound (salon), ErrInvalid (a field, or the name is taken).
func (s *Service) CreateService(ctx context.Context, salonID int64, in SalonService) (*SalonService, error) {
	if err := authorize(ctx, salonID, RoleOwner); err != nil {
		return nil, err
	}
	if err := in.normalize(); err != nil {
		return nil, err
	}
	in.SalonID, in.Active = salonID, true
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `
			INSERT INTO services (salon_id, name, duration_min, buffer_min, price, deposit, processing_min, finish_min)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
			salonID, in.Name, in.DurationMin, in.BufferMin, in.Price, in.Deposit, in.ProcessingMin, in.FinishMin).Scan(&in.ID)
		switch {
		case pgCode(err) == pgUniqueViolation:
			return Invalid("name", "a service with this name exists")
		case pgCode(err) == "23503":
			return fmt.Errorf("salon %d: %w", salonID, ErrNotFound)
		case err != nil:
			return fmt.Errorf("create service: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &in, nil
}

// Services lists the salon's active services by name.
func (s *Service) Services(ctx context.Context, salonID int64) ([]SalonService, error) {
	if err := mayRead(ctx, salonID); err != nil {
		return nil, err
	}
	return s.services(ctx, salonID, true)
}

func (s *Service) services(ctx context.Context, salonID int64, activeOnly bool) ([]SalonService, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT `+serviceColumns+`
		FROM services WHERE salon_id = $1 AND (active OR NOT $2) ORDER BY active DESC, name, id`, salonID, activeOnly)
	if err != nil {
		return nil, fmt.Errorf("services: %w", dbErr(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (SalonService, error) { return scanService(r) })
	if err != nil {
		return nil, fmt.Errorf("services: %w", dbErr(err))
	}
	return out, nil
}

// catalog is a salon's settings, services, masters and offers as of one
// catalog_version. Book and Reschedule read only the version (and the
// shifts) under the master's lock and take the rest from a cached catalog of
// that version, so a booking touches two tables instead of five; any change
// to the catalogue, through any path, moves the version (triggers in the
// schema) and the next booking reloads it.
type catalog struct {
	version  int64
	salon    Salon
	services map[int64]SalonService
	masters  map[int64]bool // id -> active
	linked   map[int64]bool // masters reachable on a chat channel
	// chatClients: some client of the salon is reachable on a chat channel
	chatClients bool
	// messages: what the salon sends, when.
	messages MessageSettings
	offers   map[[2]int64]offerTerms // (master, service) -> terms
	// parallel: the pairs of services (lower id first) a visit may have
	// done at once by two masters.
	parallel map[[2]int64]bool
}

// together reports whether the salon does services a and b at once.
func (c *catalog) together(a, b int64) bool {
	return c.parallel[[2]int64{min(a, b), max(a, b)}]
}

// catalogAt returns the salon's catalog at version (or newer), from the
// cache or loaded through q.
func (s *Service) catalogAt(ctx context.Context, q querier, salonID, version int64) (*catalog, error) {
	if c, ok := s.catalogs.Load(salonID); ok && c.(*catalog).version >= version {
		return c.(*catalog), nil
	}
	c, err := loadCatalog(ctx, q, salonID)
	if err != nil {
		return nil, err
	}
	s.catalogs.Store(salonID, c)
	return c, nil
}

// currentCatalog returns the salon's catalogue at its current version: one
// query for the version, the rest from the cache unless it moved.
// Errors: ErrNotFound (salon).
func (s *Service) currentCatalog(ctx context.Context, salonID int64) (*catalog, error) {
	var version int64
	err := s.pool.QueryRow(ctx, `SELECT catalog_version FROM salons WHERE id = $1`, salonID).Scan(&version)
	if isNoRows(err) {
		return nil, fmt.Errorf("salon %d: %w", salonID, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("catalog of salon %d: %w", salonID, dbErr(err))
	}
	return s.catalogAt(ctx, s.pool, salonID, version)
}

// offersFor returns the terms of the active masters (or of masterID only,
// when not 0) who do the service, by master id.
func (c *catalog) offersFor(serviceID, masterID int64) []offerTerms {
	var out []offerTerms
	for key, o := range c.offers {
		if key[1] == serviceID && c.masters[key[0]] && (masterID == 0 || key[0] == masterID) {
			out = append(out, o)
		}
	}
	slices.SortFunc(out, func(a, b offerTerms) int { return cmp.Compare(a.masterID, b.masterID) })
	return out
}

// loadCatalog reads a salon's whole catalogue in one statement, so all of it
// comes from one snapshot, labelled with the version of that snapshot.
func loadCatalog(ctx context.Context, q querier, salonID int64) (*catalog, error) {
	c := &catalog{services: map[int64]SalonService{}, masters: map[int64]bool{}, linked: map[int64]bool{},
		offers: map[[2]int64]offerTerms{}}
	var (
		svIDs, svDur, svBuf []int64
		svProc, svFin       []int64
		parA, parB          []int64
		svNames             []string
		svPrice, svDeposit  []Money
		svActive            []bool
		mIDs                []int64
		mActive             []bool
		linked              []int64
		oMaster, oService   []int64
		oDur                []int64
		oPrice              []Money
		emailKinds          []string
		smsKinds            []string
	)
	sal, err := scanSalon(scanPrefix{q.QueryRow(ctx, `
		SELECT `+salonColumns+`, catalog_version,
		       sv.ids, sv.names, sv.durs, sv.bufs, sv.prices, sv.deposits, sv.active, sv.procs, sv.fins,
		       ARRAY(SELECT service_a FROM service_parallel WHERE salon_id = s.id ORDER BY service_a, service_b),
		       ARRAY(SELECT service_b FROM service_parallel WHERE salon_id = s.id ORDER BY service_a, service_b),
		       m.ids, m.active, o.masters, o.services, o.durs, o.prices,
		       ARRAY(SELECT DISTINCT master_id FROM master_identities WHERE salon_id = s.id),
		       EXISTS (SELECT 1 FROM client_identities WHERE salon_id = s.id),
		       to_char(s.quiet_from, 'HH24:MI'), to_char(s.quiet_to, 'HH24:MI'), s.email_kinds, s.sms_kinds
		FROM salons s,
		LATERAL (SELECT COALESCE(array_agg(id), '{}') ids, COALESCE(array_agg(name), '{}') names,
		                COALESCE(array_agg(duration_min::bigint), '{}') durs, COALESCE(array_agg(buffer_min::bigint), '{}') bufs,
		                COALESCE(array_agg(price), '{}') prices, COALESCE(array_agg(deposit), '{}') deposits,
		                COALESCE(array_agg(active), '{}') active,
		                COALESCE(array_agg(processing_min::bigint), '{}') procs, COALESCE(array_agg(finish_min::bigint), '{}') fins
		         FROM services WHERE salon_id = s.id) sv,
		LATERAL (SELECT COALESCE(array_agg(id), '{}') ids, COALESCE(array_agg(active), '{}') active
		         FROM masters WHERE salon_id = s.id) m,
		LATERAL (SELECT COALESCE(array_agg(ms.master_id), '{}') masters, COALESCE(array_agg(ms.service_id), '{}') services,
		                COALESCE(array_agg(COALESCE(ms.duration_min, x.duration_min)::bigint), '{}') durs,
		                COALESCE(array_agg(COALESCE(ms.price, x.price)), '{}') prices
		         FROM master_services ms JOIN services x ON x.id = ms.service_id WHERE ms.salon_id = s.id) o
		WHERE s.id = $1`, salonID), []any{&c.version,
		&svIDs, &svNames, &svDur, &svBuf, &svPrice, &svDeposit, &svActive, &svProc, &svFin, &parA, &parB,
		&mIDs, &mActive, &oMaster, &oService, &oDur, &oPrice, &linked, &c.chatClients,
		&c.messages.QuietFrom, &c.messages.QuietTo, &emailKinds, &smsKinds}})
	if isNoRows(err) {
		return nil, fmt.Errorf("salon %d: %w", salonID, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("catalog of salon %d: %w", salonID, err)
	}
	c.salon = *sal
	c.messages.EmailKinds, c.messages.SMSKinds = kindsOf(emailKinds), kindsOf(smsKinds)
	for i, id := range svIDs {
		c.services[id] = SalonService{ID: id, SalonID: salonID, Name: svNames[i], DurationMin: int(svDur[i]),
			BufferMin: int(svBuf[i]), Price: svPrice[i], Deposit: svDeposit[i], Active: svActive[i],
			ProcessingMin: int(svProc[i]), FinishMin: int(svFin[i])}
	}
	c.parallel = map[[2]int64]bool{}
	for i := range parA {
		c.parallel[[2]int64{parA[i], parB[i]}] = true
	}
	for i, id := range mIDs {
		c.masters[id] = mActive[i]
	}
	for _, id := range linked {
		c.linked[id] = true
	}
	for i := range oMaster {
		c.offers[[2]int64{oMaster[i], oService[i]}] = offerTerms{masterID: oMaster[i], durationMin: int(oDur[i]), price: oPrice[i]}
	}
	return c, nil
}

// SetTogether says which services the salon does at once with service id,
// by two masters for one client (a manicure and a pedicure): in a visit,
// either of a pair may then start with the other. with replaces the set
// of id's pairs, in one transaction: nothing changes when any of it is
// refused. Owners only. Errors: ErrNotFound (id, or a service of with not
// the salon's, named), ErrForbidden, ErrInvalid (id in with).
func (s *Service) SetTogether(ctx context.Context, salonID, id int64, with []int64) error {
	if err := authorize(ctx, salonID, RoleOwner); err != nil {
		return err
	}
	if slices.Contains(with, id) {
		return Invalid("with", "a service is not done at once with itself")
	}
	with = append([]int64{}, with...) // none is an empty array, not NULL
	return s.inTx(ctx, func(tx pgx.Tx) error {
		var known []int64
		if err := tx.QueryRow(ctx, `SELECT COALESCE(array_agg(id), '{}') FROM services WHERE salon_id = $1 AND id = ANY($2)`,
			salonID, append([]int64{id}, with...)).Scan(&known); err != nil {
			return fmt.Errorf("set together: %w", err)
		}
		if !slices.Contains(known, id) {
			return fmt.Errorf("service %d: %w", id, ErrNotFound)
		}
		for _, w := range with {
			if !slices.Contains(known, w) {
				return unknown("with", "no service %d in this salon", w)
			}
		}
		// Only what changes is written (a statement that writes nothing
		// leaves the catalogue's version as it was).
		if _, err := tx.Exec(ctx, `DELETE FROM service_parallel WHERE salon_id = $1 AND (service_a = $2 OR service_b = $2)
			AND NOT (CASE WHEN service_a = $2 THEN service_b ELSE service_a END = ANY($3))`, salonID, id, with); err != nil {
			return fmt.Errorf("set together: %w", err)
		}
		_, err := tx.Exec(ctx, `INSERT INTO service_parallel (salon_id, service_a, service_b)
			SELECT $1, least($2::bigint, w), greatest($2::bigint, w) FROM unnest($3::bigint[]) w
			ON CONFLICT DO NOTHING`, salonID, id, with)
		if pgCode(err) == "23503" { // (one deleted since it was read)
			return fmt.Errorf("service %d or one done at once with it: %w", id, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("set together: %w", err)
		}
		return nil
	})
}

// TogetherWith lists the services the salon does at once with service id
// (SetTogether), by id. Admins and owners.
func (s *Service) TogetherWith(ctx context.Context, salonID, id int64) ([]int64, error) {
	if err := authorize(ctx, salonID, RoleAdmin); err != nil {
		return nil, err
	}
	var out []int64
	if err := s.pool.QueryRow(ctx, `SELECT COALESCE(array_agg(CASE WHEN service_a = $2 THEN service_b ELSE service_a END ORDER BY 1), '{}')
		FROM service_parallel WHERE salon_id = $1 AND (service_a = $2 OR service_b = $2)`, salonID, id).Scan(&out); err != nil {
		return nil, fmt.Errorf("together with %d: %w", id, dbErr(err))
	}
	return out, nil
}
