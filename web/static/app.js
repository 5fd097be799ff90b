// The booking widget: service -> master -> day -> time -> contact -> confirm,
// and the manage page (view, cancel, reschedule). Plain script, no build step;
// every step is a section of the server-rendered page.
(function () {
  'use strict';
  var cfg = JSON.parse(document.getElementById('config').textContent);
  var T = cfg.i18n;
  var app = document.getElementById('app');
  var mode = app.dataset.mode;
  // items: the services of the visit chosen before the current one, each
  // {service, master} (master null: any); names and prices: every master
  // seen, and each one's price by service.
  var state = { service: null, master: null, day: null, slot: null, slots: [], masters: [], key: null, booking: null, token: null,
    items: [], names: {}, prices: {} };

  // --- helpers -------------------------------------------------------------
  function $(id) { return document.getElementById(id); }
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function fmt(key) {
    var args = Array.prototype.slice.call(arguments, 1), i = 0;
    return T[key].replace(/%s/g, function () { return args[i++]; });
  }
  // money writes an amount as the server does (booking.Money.Format): a
  // fractional one with two decimals (1 000,50 ₽), a whole one with none
  // (1 000 ₽); in Russian a no-break space between thousands and a
  // decimal comma.
  function money(v) {
    var c = Math.round(Number(v) * 100) || 0, ru = cfg.lang === 'ru';
    var s = String(Math.floor(Math.abs(c) / 100)).replace(/\B(?=(\d{3})+$)/g, ru ? '\u00a0' : ',');
    if (c % 100) s += (ru ? ',' : '.') + ('0' + Math.abs(c) % 100).slice(-2);
    if (c < 0) s = '-' + s;
    // (a no-break space: the sign never wraps away from its amount)
    // (the currency's sign as the server writes it: booking.CurrencySign)
    return cfg.signBefore ? cfg.sign + s : s + '\u00a0' + cfg.sign;
  }
  // A time is an instant; what the client reads is the salon's wall clock
  // (the salon's zone, not the browser's, and never the string's digits).
  var clock = new Intl.DateTimeFormat('en-GB', { timeZone: cfg.timezone, year: 'numeric', month: '2-digit',
    day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
  function wall(stamp) {
    var p = {};
    clock.formatToParts(new Date(stamp)).forEach(function (x) { p[x.type] = x.value; });
    return p;
  }
  function dateOf(stamp) { var p = wall(stamp); return p.year + '-' + p.month + '-' + p.day; }
  function clockOf(ms) { var p = wall(ms); return p.year + p.month + p.day + p.hour + p.minute; }
  // The night the clocks are put back shows an hour twice: those times
  // carry their offset from UTC ("01:30 GMT-4", "01:30 GMT-5"), as the
  // server writes them (i18n.ClockInZone) in e-mails, the bot and the panel.
  function offsetOf(ms) {
    var p = wall(ms);
    return Date.UTC(+p.year, +p.month - 1, +p.day, +p.hour, +p.minute) - Math.floor(ms / 60000) * 60000;
  }
  function shownTwice(ms) {
    var o = offsetOf(ms), c = clockOf(ms);
    return [-3, 3].some(function (h) {
      var other = ms + o - offsetOf(ms + h * 3600000);
      return other !== ms && clockOf(other) === c;
    });
  }
  function timeOf(stamp) {
    var ms = new Date(stamp).getTime(), p = wall(ms), t = p.hour + ':' + p.minute;
    if (!shownTwice(ms)) return t;
    var off = Math.round(offsetOf(ms) / 60000), sign = off < 0 ? '-' : '+', h = Math.floor(Math.abs(off) / 60), m = Math.abs(off) % 60;
    return t + ' GMT' + (off === 0 ? '' : sign + h + (m ? ':' + ('0' + m).slice(-2) : ''));
  }
  function dayLabel(date) {
    return new Date(date + 'T12:00:00Z').toLocaleDateString(cfg.lang === 'ru' ? 'ru-RU' : 'en-GB',
      { weekday: 'short', day: 'numeric', month: 'short', timeZone: 'UTC' });
  }
  function when(stamp) { return dayLabel(dateOf(stamp)) + ', ' + timeOf(stamp); }
  function newKey() {
    var b = new Uint8Array(16);
    crypto.getRandomValues(b);
    return Array.prototype.map.call(b, function (x) { return ('0' + x.toString(16)).slice(-2); }).join('');
  }
  function api(method, path, body, headers) {
    var opts = { method: method, headers: Object.assign({ 'Accept': 'application/json', 'Accept-Language': cfg.lang }, headers || {}) };
    if (body !== undefined) {
      opts.headers['Content-Type'] = 'application/json';
      opts.body = JSON.stringify(body);
    }
    return fetch('/api/v1' + path, opts).then(function (r) {
      return r.json().catch(function () { return {}; }).then(function (b) { return { status: r.status, body: b }; });
    });
  }
  // calendarLink makes el download the booking as an .ics file (the
  // token travels in a header, never in a URL). The link takes its place
  // at once and shows when its file is ready, so the buttons under it do
  // not move under a finger about to tap one.
  function calendarLink(el, id, token) {
    if (el.hidden) { el.hidden = false; el.style.visibility = 'hidden'; }
    fetch('/api/v1/bookings/' + id + '/calendar', { headers: { 'X-Manage-Token': token } }).then(function (r) {
      if (r.status !== 200) throw r;
      return r.blob();
    }).then(function (b) {
      el.href = URL.createObjectURL(b);
      el.download = 'booking-' + id + '.ics';
      el.style.visibility = '';
    }).catch(function () { el.hidden = true; el.style.visibility = ''; });
  }
  function showError(msg) { var e = $('error'); e.textContent = msg; e.hidden = !msg; }
  function serviceName(id) { var s = cfg.services.find(function (x) { return x.id === id; }); return s ? s.name : ''; }
  function masterName(id) {
    var m = state.masters.find(function (x) { return x.id === id; });
    return m ? m.name : state.names[id] || '';
  }
  // The visit's services as chosen so far, the current one last.
  function visitItems() {
    return state.items.concat(state.service ? [{ service: state.service, master: state.master }] : []);
  }
  // A visit's slot or booking has several items.
  function isVisit(x) { return !!(x && x.items && x.items.length > 1); }
  function priceOf(serviceID, masterID) {
    var p = state.prices[serviceID + ':' + masterID];
    if (p !== undefined) return Number(p);
    var s = cfg.services.find(function (x) { return x.id === serviceID; });
    return s ? Number(s.price) : 0;
  }
  function depositOf(serviceID) {
    var s = cfg.services.find(function (x) { return x.id === serviceID; });
    return s ? Number(s.deposit) || 0 : 0;
  }
  // itemRows are a visit's services, one row each: the service, its master
  // and time.
  function itemRows(items) {
    return items.map(function (it) {
      return [serviceName(it.service_id), masterName(it.master_id) + ', ' + timeOf(it.starts_at) + '–' + timeOf(it.ends_at)];
    });
  }

  // The step on screen; its heading takes the focus so keyboard and screen
  // reader users land on it.
  function show(step) {
    history1(step);
    showError('');
    chosen(step);
    app.querySelectorAll('section[data-step]').forEach(function (s) { s.hidden = s.dataset.step !== step; });
    var h = app.querySelector('section[data-step="' + step + '"] h2');
    if (h) h.focus();
    state.step = step;
    resize();
  }
  var back = { master: 'service', day: mode === 'manage' ? 'manage' : 'master', time: 'day', contact: 'time', confirm: mode === 'manage' ? 'time' : 'contact',
    wait: 'day' };
  app.querySelectorAll('button.back').forEach(function (b) {
    b.addEventListener('click', function () { show(back[state.step]); });
  });
  // The browser's Back is the step's Back: each step forward is an entry
  // of the browser's history (a phone's Back, the top page's when the
  // widget is embedded), and going back pops it. A step with no way back
  // (booked, a booking's page again) unwinds the entries: Back then
  // leaves the widget, not into a form already sent.
  // (Steps in their order: a move to a later one is forward, skipping or
  // not; the browser's Forward is not a step the client takes again.)
  var order = { service: 0, manage: 0, master: 1, day: 2, time: 3, wait: 3, contact: 4, confirm: 5 };
  var depth = 0, popsOwn = 0, popping = false;
  function history1(step) {
    var cur = state.step || (mode === 'book' ? 'service' : ''); // (the page opens on it)
    if (!window.history || !history.pushState || !cur || step === cur) return;
    if (!back[step]) {
      if (depth > 0) { popsOwn++; history.go(-depth); depth = 0; }
    } else if (order[step] > order[cur]) {
      depth++;
      history.pushState({ salonStep: step, n: depth }, '');
    } else if (depth > 0) {
      depth--;
      if (!popping) { popsOwn++; history.back(); }
    }
  }
  window.addEventListener('popstate', function (ev) {
    if (popsOwn > 0) { popsOwn--; return; } // (our own step back, shown already)
    if ((ev.state && ev.state.n || 0) > depth) { popsOwn++; history.back(); return; } // (Forward: undone)
    if (depth > 0 && back[state.step]) {
      popping = true;
      show(back[state.step]);
      popping = false;
    }
  });

  // chosen keeps what the client has picked in sight on the later steps:
  // service, master, day and time.
  function chosen(step) {
    var p = $('chosen');
    if (!p) return;
    var parts = [];
    var after = { master: 1, day: 2, time: 3, contact: 4, confirm: 5 }[step] || 0;
    if (mode === 'book' && state.items.length) {
      // A visit: each service chosen, with its master.
      var list = visitItems().map(function (it, i) {
        var last = i === state.items.length;
        return serviceName(it.service) + (last && after < 2 ? '' : ' (' + (it.master ? masterName(it.master) : T.any_master) + ')');
      });
      parts.push(fmt('visit_so_far', list.join(', ')));
    } else {
      if (mode === 'book' && after >= 1 && state.service) parts.push(serviceName(state.service));
      if (mode === 'book' && after >= 2) parts.push(state.master ? masterName(state.master) : T.any_master);
    }
    if (after >= 3 && state.day) parts.push(dayLabel(state.day));
    if (after >= 4 && state.slot) parts.push(timeOf(state.slot.starts_at));
    p.textContent = parts.join(' · ');
    p.hidden = parts.length === 0;
  }

  // Inside an iframe, tell the embedding page our height (see /widget.js).
  function resize() {
    if (window.parent !== window) {
      // The body's own height: the document's is never less than the frame's.
      window.parent.postMessage({ type: 'salon-widget:resize', height: Math.ceil(document.body.getBoundingClientRect().height) + 8 }, '*');
    }
  }
  if (window.ResizeObserver) new ResizeObserver(resize).observe(document.body);
  if (window.parent !== window) window.parent.postMessage({ type: 'salon-widget:title', title: document.title }, '*');
  window.addEventListener('load', resize);

  function choice(list, label, meta, onClick, attrs) {
    var b = el('button', Object.assign({ type: 'button', 'class': 'choice' }, attrs || {}));
    b.appendChild(el('span', { 'class': 'name' }, label));
    if (meta) b.appendChild(el('span', { 'class': 'meta' }, meta));
    b.addEventListener('click', onClick);
    var li = el('li');
    li.appendChild(b);
    list.appendChild(li);
    return b;
  }

  // --- day and time --------------------------------------------------------
  // loadSlots asks for the free times of the first days of the salon's
  // booking window (as many as one request covers); loadSlots(true), of
  // the days after those shown.
  function loadSlots(more) {
    var items = mode === 'book' ? visitItems() : [];
    if (mode !== 'book' && isVisit(state.booking)) {
      // A visit moves whole, with its masters.
      items = state.booking.items.map(function (it) { return { service: it.service_id, master: it.master_id }; });
    }
    var from = more ? state.shownDays : 0, n = Math.min(cfg.daysPerRequest || cfg.days.length, cfg.days.length - from);
    if (n <= 0) return Promise.resolve();
    var span = '&date=' + cfg.days[from] + '&days=' + n;
    var q = items.length > 1
      ? '?items=' + items.map(function (it) { return it.service + (it.master ? ':' + it.master : ''); }).join(',') + span
      : '?service_id=' + state.service + span + (state.master ? '&master_id=' + state.master : '');
    var add = $('add-service');
    if (add) add.hidden = items.length >= 5;
    var asked = state.asked = {}; // (asked again meanwhile: this answer is not wanted)
    // A booking paid with a balance moves no later than its last day.
    var pw = mode === 'manage' && state.booking && state.booking.paid_with, until = state.until = pw && pw.expires_at;
    var limit = $('move-until');
    if (limit) {
      limit.hidden = !until;
      limit.textContent = until ? fmt('move_until', lastDay(until)) : '';
    }
    // A move asks with the booking's token: its own time counts as free
    // (a move may overlap it), and its present start is left out.
    var moving = mode === 'manage' && state.booking;
    if (moving) q += '&moving=' + state.booking.id;
    return api('GET', '/salons/' + cfg.slug + '/slots' + q, undefined, moving ? { 'X-Manage-Token': state.token } : undefined).then(function (r) {
      if (r.status !== 200) throw r;
      if (state.asked !== asked) return;
      var got = until ? r.body.filter(function (s) { return Date.parse(s.starts_at) < Date.parse(until); }) : r.body;
      state.slots = more ? state.slots.concat(got) : got;
      state.shownDays = from + n;
      renderDays();
      if (!more) show('day');
    }).catch(failed);
  }
  function renderDays() {
    var days = $('days');
    days.textContent = '';
    var by = {};
    state.slots.forEach(function (s) { (by[dateOf(s.starts_at)] = by[dateOf(s.starts_at)] || []).push(s); });
    var any = false, shown = cfg.days.slice(0, state.shownDays || cfg.days.length);
    shown.forEach(function (d) {
      var n = (by[d] || []).length;
      any = any || n > 0;
      // A week strip: the weekday over the date; a day with no free time
      // says so, and cannot be chosen.
      var b = el('button', { type: 'button', 'data-date': d, 'class': n ? 'free' : 'full' });
      var at = new Date(d + 'T12:00:00Z'), locale = cfg.lang === 'ru' ? 'ru-RU' : 'en-GB';
      b.appendChild(el('span', { 'class': 'wd' }, at.toLocaleDateString(locale, { weekday: 'short', timeZone: 'UTC' }) + ' '));
      // (The day's number and its month on lines of their own: every
      // tile of the strip as tall as the others at 390 px, "10 Mar" too.)
      b.appendChild(el('span', { 'class': 'dn' }, at.toLocaleDateString(locale, { day: 'numeric', timeZone: 'UTC' }) + ' '));
      b.appendChild(el('span', { 'class': 'mo' }, at.toLocaleDateString(locale, { month: 'short', timeZone: 'UTC' })));
      if (!n) b.appendChild(el('span', { 'class': 'sr' }, ' — ' + T.day_full));
      b.disabled = n === 0;
      b.addEventListener('click', function () { state.day = d; renderTimes(by[d]); show('time'); });
      var li = el('li');
      li.appendChild(b);
      days.appendChild(li);
    });
    // (None here, but later days to ask about: only the button says so;
    // none up to a balance's last day, past which a move cannot go.)
    var open = state.until ? cfg.days.filter(function (d) { return d < dateOf(state.until); }).length : cfg.days.length;
    $('no-days').hidden = any || shown.length < open;
    // (Nor later days past a balance's last day, which a move cannot go to.)
    $('later-days').hidden = shown.length >= cfg.days.length || !!(state.until && cfg.days[shown.length] >= dateOf(state.until));
  }
  function renderTimes(slots) {
    var times = $('times');
    times.textContent = '';
    // One slot per time (for "any master" the server has chosen the
    // master), grouped by part of the day.
    var groups = {};
    [['morning', 0], ['afternoon', 12], ['evening', 17]].forEach(function (g) {
      var li = el('li', { 'class': 'group' });
      var h = el('h3', { id: 'times-' + g[0] }, T['times_' + g[0]]);
      var ul = el('ul', { 'class': 'times', 'aria-labelledby': 'times-' + g[0] });
      li.appendChild(h);
      li.appendChild(ul);
      groups[g[0]] = { li: li, ul: ul, from: g[1], n: 0 };
    });
    (slots || []).forEach(function (s) {
      var t = timeOf(s.starts_at), hour = Number(t.slice(0, 2));
      var g = hour >= 17 ? groups.evening : hour >= 12 ? groups.afternoon : groups.morning;
      var b = el('button', { type: 'button', 'data-time': t, 'data-master-id': s.master_id || s.items[0].master_id }, t);
      b.addEventListener('click', function () { pick(s); });
      var li = el('li');
      li.appendChild(b);
      g.ul.appendChild(li);
      g.n++;
    });
    ['morning', 'afternoon', 'evening'].forEach(function (k) { if (groups[k].n) times.appendChild(groups[k].li); });
  }
  function pick(slot) {
    state.slot = slot;
    state.key = newKey(); // one key per attempt: a retry of the same attempt is harmless
    if (mode === 'manage') return confirmStep();
    if (!state.client) return show('contact');
    // Back for another time, day or service: a code typed is asked about
    // again for them; one that no longer pays for them (another service,
    // past its last day) is said at its field, on the contact step.
    var code = $('client-code').value.trim();
    state.payWith = state.balance = null;
    if (!code) return confirmStep();
    checkCode(code, state.client.phone).then(function (ok) {
      if (state.slot !== slot) return; // (the client picked again meanwhile)
      if (ok) return confirmStep();
      show('contact');
      $('client-code').focus();
    }).catch(failed);
  }

  // --- confirm -------------------------------------------------------------
  function summaryInto(dl, rows) {
    dl.textContent = '';
    rows.forEach(function (r) { dl.appendChild(el('dt', {}, r[0])); dl.appendChild(el('dd', {}, r[1])); });
  }
  function confirmStep() {
    var s = state.slot;
    var svc = cfg.services.find(function (x) { return x.id === state.service; }) || {};
    var deposit = Number(svc.deposit) || 0;
    var rows, price;
    if (isVisit(s)) {
      // A visit: each service with its master and time, then the whole.
      rows = itemRows(s.items);
      rows.push([T.when, when(s.starts_at) + '–' + timeOf(s.ends_at)]);
      deposit = s.items.reduce(function (sum, it) { return sum + depositOf(it.service_id); }, 0);
      price = s.items.reduce(function (sum, it) { return sum + priceOf(it.service_id, it.master_id); }, 0);
    } else {
      rows = [[T.service, serviceName(state.service)], [T.master, masterName(s.master_id)], [T.when, when(s.starts_at) + '–' + timeOf(s.ends_at)]];
      // The price of the master the time is with (theirs may not be the
      // service's).
      price = priceOf(state.service, s.master_id);
    }
    if (mode === 'manage' && state.booking) rows.push([T.was, when(state.booking.starts_at)]); // (a move: from when)
    if (mode !== 'manage') {
      rows.push([T.price, money(price)]);
      // What of it is paid now, as the booking will reserve it: a
      // certificate pays up to the price, the deposit first; a package, a
      // visit of it for each of the visit's services it is for (the
      // lookup said which), in order, as many as it has left: their
      // prices and deposits. The rest of the deposit is paid online (or
      // at the salon), the rest of the price at the salon.
      var b = state.balance, covers = 0, visits = 0;
      if (b && b.kind === 'certificate') {
        covers = Math.min(Number(b.remaining), price);
        deposit = Math.max(deposit - covers, 0);
      } else if (b) {
        var lines = isVisit(s) ? s.items : [{ service_id: state.service, master_id: s.master_id }];
        lines.forEach(function (it) {
          if ((b.service_ids || []).indexOf(it.service_id) < 0 || visits >= Number(b.remaining)) return;
          visits++;
          covers += priceOf(it.service_id, it.master_id);
          deposit = Math.max(deposit - depositOf(it.service_id), 0);
        });
      }
      var rest = Math.max(price - covers - (cfg.onlinePay ? deposit : 0), 0);
      if (deposit > 0) rows.push([T.deposit_row, fmt(cfg.onlinePay ? 'deposit_now' : 'deposit_in_salon', money(deposit))]);
      // (The e-mail too: its confirmation goes there, a typo is caught here.)
      rows.push([T.client, [state.client.name, state.client.phone, state.client.email].filter(Boolean).join(', ')]);
      // (What it will pay, and what it will have left.)
      if (b) rows.push([T.paid_with, paidWith(b.kind === 'certificate' ? { kind: b.kind, amount: covers, remaining: Number(b.remaining) - covers, expires_at: b.expires_at }
        : { kind: b.kind, visits: visits, remaining: Number(b.remaining) - visits, expires_at: b.expires_at })]);
      if (b) rows.push([T.in_salon, rest > 0 ? money(rest) : T.in_salon_none]);
    }
    summaryInto($('summary'), rows);
    var dn = $('confirm-deposit');
    if (dn) {
      dn.hidden = mode === 'manage' || !(deposit > 0);
      dn.textContent = cfg.onlinePay ? fmt('confirm_deposit', money(deposit), cfg.holdMin) : fmt('deposit_note', money(deposit));
    }
    $('taken').hidden = true;
    $('confirm').disabled = false;
    show('confirm');
  }
  // inSalon is the row of what is left to pay at the salon of booking b
  // paid with a package or certificate, as the server says it
  // (paid_with.at_salon: the price less what the balance and the deposit
  // online pay); none when it says nothing (the booking is off).
  function inSalon(b) {
    var due = b.paid_with && b.paid_with.at_salon;
    if (due === undefined || due === null) return [];
    return [[T.in_salon, Number(due) > 0 ? money(due) : T.in_salon_none]];
  }
  // hintOf is a booking's balance's code's end, as its names take it
  // (" …CD98", kept on one line with its word; "" when not known).
  function hintOf(b) { return b.hint ? '\u00a0\u2026\u2060' + b.hint : ''; }

  // A balance (GET .../balances/CODE, or a booking's paid_with) in words.
  function paidWith(b) {
    var until = b.expires_at ? ' ' + fmt('pw_until', lastDay(b.expires_at)) : '';
    // A cancelled booking's: what its cancellation kept, and gave back.
    var settled = (b.kept ? '. ' + fmt('pw_kept', fmt('pw_name_' + b.kind + '_of', hintOf(b)), units(b, b.kept)) : '') +
      (b.returned ? '. ' + fmt('pw_returned', fmt('pw_name_' + b.kind, hintOf(b)), units(b, b.returned)) : '');
    // (A cancelled booking's took nothing in the end: what is left, and
    // what the cancellation kept and gave back.)
    var took = !(b.kept || b.returned);
    if (b.kind === 'package') {
      return (b.visits && took ? fmt('pw_package_paid', units(b, b.visits), units(b, Number(b.remaining))) : fmt('pw_package', units(b, Number(b.remaining)))) + until + settled;
    }
    // (A booking's paid_with says what it took; a balance read, only what is left.)
    // (pays: what it pays of the visit, less than it took when the booking
    // moved to a cheaper master, the rest back after the visit.)
    var paid = b.pays !== undefined ? b.pays : b.amount;
    return (b.amount && took ? fmt('pw_cert_paid', money(paid), money(b.remaining)) : fmt('pw_cert', money(b.remaining))) + until + settled +
      (b.back_after_visit ? '. ' + fmt('pw_back_after', money(b.back_after_visit)) : '');
  }
  // units is n of balance b's: visits of a package (1 визит, 2 визита, 5
  // визитов), or an amount of a certificate.
  function units(b, n) {
    if (b.kind !== 'package') return money(n);
    var form = n % 10 === 1 && n % 100 !== 11 ? 0 : (n % 10 >= 2 && n % 10 <= 4 && (n % 100 < 12 || n % 100 > 14) ? 1 : 2);
    if (cfg.lang !== 'ru') form = n === 1 ? 0 : 2;
    return fmt(['visits_one', 'visits_few', 'visits_many'][form], String(n));
  }
  // lastDay is the last day a balance is good for, as the reader writes a
  // date: the day before the end its expires_at is (at the salon's
  // midnight, so its date part is the salon's day after).
  function lastDay(expiresAt) {
    var d = new Date(expiresAt.slice(0, 10) + 'T12:00:00Z');
    d.setUTCDate(d.getUTCDate() - 1);
    return d.toLocaleDateString(cfg.lang === 'ru' ? 'ru-RU' : 'en-GB', { timeZone: 'UTC', day: cfg.lang === 'ru' ? '2-digit' : 'numeric', month: cfg.lang === 'ru' ? '2-digit' : 'short', year: 'numeric' });
  }
  function offerAlternatives(alts) {
    // (A move: none past a balance's last day.)
    if (mode === 'manage' && state.until) alts = alts.filter(function (a) { return Date.parse(a.starts_at) < Date.parse(state.until); });
    var list = $('alternatives');
    list.textContent = '';
    $('taken-text').textContent = alts.length ? T.taken : T.taken_none;
    alts.forEach(function (a) {
      var who = a.items ? a.items.map(function (it) { return masterName(it.master_id); }).join(', ') : masterName(a.master_id);
      var b = el('button', { type: 'button', 'class': 'alternative', 'data-starts-at': a.starts_at, 'data-master-id': a.master_id || a.items[0].master_id },
        when(a.starts_at) + ' · ' + who);
      b.addEventListener('click', function () { pick(a); });
      var li = el('li');
      li.appendChild(b);
      list.appendChild(li);
    });
    $('taken').hidden = false;
    $('confirm').disabled = true;
    var first = list.querySelector('button');
    if (first) first.focus();
    resize();
  }
  $('confirm').addEventListener('click', function () {
    var btn = $('confirm');
    btn.disabled = true;
    var s = state.slot;
    // A visit is booked (and moved) with the masters its time was shown with.
    var items = isVisit(s) ? s.items.map(function (it) { return { service_id: it.service_id, master_id: it.master_id }; }) : null;
    var what = items ? { items: items } : { service_id: state.service, master_id: s.master_id };
    var req = mode === 'manage'
      ? api('POST', '/bookings/' + state.booking.id + '/reschedule', items ? { starts_at: s.starts_at, items: items } : { starts_at: s.starts_at, master_id: s.master_id },
        { 'X-Manage-Token': state.token })
      : api('POST', '/salons/' + cfg.slug + '/bookings', Object.assign(what, { starts_at: s.starts_at, client: state.client }, state.payWith ? { pay_with: state.payWith } : {}),
        { 'Idempotency-Key': state.key });
    req.then(function (r) {
      if (r.status === 201 || r.status === 200) return mode === 'manage' ? moved(r.body) : booked(r.body);
      if (r.status === 409 && r.body.error === 'slot_taken') {
        // (Taken: no longer among the free times the page knows.)
        state.slots = (state.slots || []).filter(function (x) { return x.starts_at !== s.starts_at; });
        return offerAlternatives(r.body.alternatives || []);
      }
      if (mode !== 'manage' && (r.body.error === 'balance_exhausted' || (r.body.fields && r.body.fields.pay_with))) {
        btn.disabled = false;
        // (The salon's reason, in the page's language: what is left, or
        // until when it is good.)
        fieldErrors({ pay_with: r.body.error === 'balance_exhausted' ? sentence(r.body.message) || T.exhausted : sentence(r.body.fields.pay_with) });
        return show('contact');
      }
      if (r.status === 422 && r.body.fields && mode !== 'manage' && (r.body.fields['client.name'] || r.body.fields['client.phone'] || r.body.fields['client.email'])) {
        fieldErrors(capitals(r.body.fields));
        return show('contact');
      }
      throw r;
    }).catch(function (r) { btn.disabled = false; failed(r); });
  });

  function failed(r) {
    var code = r && r.body && r.body.error;
    if (code === 'rate_limited') return showError(T.rate_limited);
    if (code === 'too_late') return showError(T.too_late);
    if (code === 'conflict') return showError(T.pay_conflict);
    if (code === 'unavailable') return showError(r.body.payments_down ? T.payments_down : T.busy);
    if (code === 'invalid' && r.body.fields) {
      return showError(Object.keys(r.body.fields).map(function (k) { return capital(r.body.fields[k]); }).join('; '));
    }
    showError(T.error);
  }

  // --- booking mode --------------------------------------------------------
  function bookMode() {
    // From the gift page's "book with it": its code (and a package's
    // phone) handed over in this tab's storage, never in a URL, and
    // forgotten once filled in; left there a while (the link opened in
    // another tab), not filled in later.
    try {
      var w = JSON.parse(sessionStorage.getItem('salon-book-with-' + cfg.slug) || 'null');
      sessionStorage.removeItem('salon-book-with-' + cfg.slug);
      if (w && !(Date.now() - w.at < 10 * 60000)) w = null;
      if (w && w.code) $('client-code').value = w.code;
      if (w && w.phone && !$('client-phone').value) $('client-phone').value = w.phone;
    } catch (e) { /* storage blocked: typed by hand */ }
    $('services').querySelectorAll('button[data-service-id]').forEach(function (b) {
      b.addEventListener('click', function () { chooseService(Number(b.dataset.serviceId)).catch(failed); });
    });
    // chooseService asks for the service's masters and shows them.
    function chooseService(id) {
      state.service = id;
      return api('GET', '/salons/' + cfg.slug + '/masters?service_id=' + state.service).then(function (r) {
        if (r.status !== 200) throw r;
        state.masters = r.body;
        r.body.forEach(function (m) {
          state.names[m.id] = m.name;
          if (m.price !== undefined) state.prices[state.service + ':' + m.id] = m.price;
        });
        var list = $('masters');
        list.textContent = '';
        choice(list, T.any_master, '', function () { state.master = null; loadSlots(); }, { 'data-master-id': 'any' });
        r.body.forEach(function (m) {
          // Each master's own terms: what this client will pay and sit.
          var meta = m.price !== undefined ? (m.stay_min || m.duration_min) + ' ' + T.min + ' · ' + money(m.price) : '';
          choice(list, m.name, meta, function () { state.master = m.id; loadSlots(); }, { 'data-master-id': String(m.id) });
        });
        show('master');
      });
    }
    // Switching the language mid-booking keeps the booking in progress:
    // the choices and what was typed go to this tab's storage, and the
    // page in the other language takes them up at the step the client was.
    var keepKey = 'salon-keep-' + cfg.slug, typed = ['client-name', 'client-phone', 'client-email', 'client-code'];
    $('lang-switch').addEventListener('click', function () {
      // Booked: the booking's own page, in the other language (its
      // token in the fragment, as the manage link has it).
      if (state.booking && state.booking.manage_token) {
        var other = new URL($('manage-link').href);
        other.search = this.search;
        this.href = other.toString();
        return;
      }
      try {
        sessionStorage.setItem(keepKey, JSON.stringify({ at: Date.now(), step: state.step, items: state.items, service: state.service,
          master: state.master, day: state.day, slot: state.slot && state.slot.starts_at,
          fields: typed.map(function (id) { return $(id).value; }) }));
      } catch (e) { /* storage blocked: the page starts afresh */ }
    });
    (function resume() {
      var k = null;
      try {
        k = JSON.parse(sessionStorage.getItem(keepKey) || 'null');
        sessionStorage.removeItem(keepKey);
      } catch (e) { return; }
      if (!k || !(Date.now() - k.at < 30 * 60000)) return;
      typed.forEach(function (id, i) { if (k.fields[i] && !$(id).value) $(id).value = k.fields[i]; });
      var far = order[k.step] || 0;
      if (!k.service || far < 1 || !cfg.services.some(function (x) { return x.id === k.service; })) return;
      state.items = k.items || [];
      chooseService(k.service).then(function () {
        if (far < 2) return;
        state.master = k.master;
        return loadSlots().then(function () {
          var day = (state.slots || []).filter(function (x) { return dateOf(x.starts_at) === k.day; });
          if (far < 3 || !day.length) return;
          state.day = k.day;
          renderTimes(day);
          show('time');
          var slot = day.find(function (x) { return x.starts_at === k.slot; });
          if (far >= 4 && slot) pick(slot); // (the contact step, filled in)
        });
      }).catch(failed);
    })();
    $('contact').addEventListener('submit', function (ev) {
      ev.preventDefault();
      var name = $('client-name').value.trim();
      var phone = $('client-phone').value.trim();
      var email = $('client-email').value.trim();
      var errs = {};
      if (!name) errs['client.name'] = T.err_name;
      if (!/^[+()\d\s.-]{7,}$/.test(phone)) errs['client.phone'] = phone ? fmt('err_phone', cfg.phoneExample) : T.err_phone_empty;
      if (email && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email)) errs['client.email'] = T.err_email;
      if (fieldErrors(errs)) return;
      state.client = { name: name, phone: phone };
      if (email) state.client.email = email;
      // A code: its kind and what is left, from the salon, before confirming.
      var code = $('client-code').value.trim();
      state.payWith = state.balance = null;
      if (!code) return confirmStep();
      checkCode(code, phone).then(function (ok) { if (ok) confirmStep(); }).catch(failed);
    });
    $('again').addEventListener('click', function () {
      clearTimeout(pollTimer);
      state.booking = null;
      state.slot = null;
      state.items = [];
      show('service');
    });
    // Another service in the same visit: the one chosen joins the visit,
    // and the client picks the next.
    waitBooking();
    $('add-service').addEventListener('click', function () {
      if (visitItems().length >= 5) return showError(T.visit_full);
      state.items.push({ service: state.service, master: state.master });
      state.service = null;
      state.master = null;
      show('service');
    });
  }
  // checkCode asks the salon about a code (its kind, what is left) for the
  // services and the day chosen now, and resolves true when it pays for
  // them (state.balance and state.payWith then say it), else false, having
  // said why at the code's field. (In the body, never in a URL: the code
  // is the credential.) What it would pay for goes with it: a package for
  // another service, or another client's, is refused here, as booking
  // would refuse it.
  function checkCode(code, phone) {
    state.payWith = state.balance = null;
    var s = state.slot || {};
    var services = isVisit(s) ? s.items.map(function (it) { return it.service_id; }) : (state.service ? [state.service] : []);
    return api('POST', '/salons/' + cfg.slug + '/balances/lookup', { code: code, service_ids: services, phone: phone }).then(function (r) {
      var why = '';
      if (r.status === 404) why = T.err_code;
      else if (r.status === 422 && r.body.fields && r.body.fields.pay_with) why = sentence(r.body.fields.pay_with);
      else if (r.status !== 200) throw r;
      // Said here, before confirming: nothing left, or not good on the
      // day chosen.
      else if (!(r.body.remaining > 0)) why = T.exhausted;
      else if (r.body.expires_at && s.starts_at && Date.parse(s.starts_at) >= Date.parse(r.body.expires_at)) why = fmt('code_expired', lastDay(r.body.expires_at));
      if (why) { fieldErrors({ pay_with: why }); return false; }
      fieldErrors({});
      state.balance = r.body;
      state.payWith = {};
      state.payWith[r.body.kind] = code;
      return true;
    });
  }
  // --- the waitlist ----------------------------------------------------------
  // Nothing that suits, or the time was taken: the client waits for the
  // chosen service (or visit) and master, on the days they pick, and gets
  // the page of their place on the list (its link, with its token, is
  // theirs: keep it), where freed times appear, and their messages.
  function waitStep() {
    var items = visitItems();
    var what = items.map(function (it) {
      return serviceName(it.service) + ' (' + (it.master ? masterName(it.master) : T.any_master) + ')';
    }).join(', ');
    $('wait-what').textContent = what;
    var from = $('wait-from'), to = $('wait-to');
    [from, to].forEach(function (sel) {
      sel.textContent = '';
      cfg.days.forEach(function (d) { sel.appendChild(el('option', { value: d }, dayLabel(d))); });
    });
    var first = state.day && cfg.days.indexOf(state.day) >= 0 ? cfg.days.indexOf(state.day) : 0;
    from.value = cfg.days[first];
    to.value = cfg.days[Math.min(first + 13, cfg.days.length - 1)];
    if (state.client) {
      $('wait-name').value = state.client.name;
      $('wait-phone').value = state.client.phone;
      $('wait-email').value = state.client.email || '';
    }
    waitErrors({});
    $('wait-free').hidden = $('wait-free-actions').hidden = true;
    state.waitWarned = '';
    show('wait');
  }
  function waitErrors(fields) {
    var any = false;
    [['client.name', 'wait-name', 'err-wait-name'], ['client.phone', 'wait-phone', 'err-wait-phone'],
      ['client.email', 'wait-email', 'err-wait-email'], ['to_date', 'wait-to', 'err-wait-to']].forEach(function (f) {
      var msg = fields[f[0]] || '';
      $(f[2]).textContent = msg;
      $(f[1]).setAttribute('aria-invalid', msg ? 'true' : 'false');
      any = any || !!msg;
    });
    return any;
  }
  function entryURL(id, token) {
    var link = new URL('/w/' + cfg.slug + '/waitlist/' + id, location.href);
    link.search = 'lang=' + cfg.lang;
    link.hash = 't=' + token;
    return link.toString();
  }
  function waitBooking() {
    $('wait-book').addEventListener('click', function () {
      var free = document.querySelector('#days button.free');
      show('day');
      if (free) free.focus();
    });
    $('wait-start').addEventListener('click', waitStep);
    $('wait-taken').addEventListener('click', waitStep);
    $('wait-form').addEventListener('submit', function (ev) {
      ev.preventDefault();
      var name = $('wait-name').value.trim(), phone = $('wait-phone').value.trim(), email = $('wait-email').value.trim();
      var errs = {};
      if (!name) errs['client.name'] = T.err_name;
      if (!/^[+()\d\s.-]{7,}$/.test(phone)) errs['client.phone'] = phone ? fmt('err_phone', cfg.phoneExample) : T.err_phone_empty;
      if (email && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email)) errs['client.email'] = T.err_email;
      if ($('wait-to').value < $('wait-from').value) errs.to_date = T.w_err_to;
      if (waitErrors(errs)) return;
      // Free times on those days already (of those the page has read):
      // said once, with the way to book one; sent again, the client waits.
      var part0 = $('wait-part').value, key = $('wait-from').value + '|' + $('wait-to').value + '|' + part0;
      var free = (state.slots || []).filter(function (s) {
        var d = dateOf(s.starts_at), hm = timeOf(s.starts_at);
        return d >= $('wait-from').value && d <= $('wait-to').value &&
          (!part0 || hm >= part0.split('-')[0] && hm < part0.split('-')[1]);
      });
      if (free.length && state.waitWarned !== key) {
        state.waitWarned = key;
        $('wait-free').textContent = fmt('w_free_now', free.slice(0, 3).map(function (s) { return when(s.starts_at); }).join('; ') + (free.length > 3 ? '…' : ''));
        $('wait-free').hidden = $('wait-free-actions').hidden = false;
        resize();
        return;
      }
      var items = visitItems();
      var body = items.length > 1
        ? { items: items.map(function (it) { return it.master ? { service_id: it.service, master_id: it.master } : { service_id: it.service }; }) }
        : { service_id: state.service };
      if (items.length === 1 && state.master) body.master_id = state.master;
      body.from_date = $('wait-from').value;
      body.to_date = $('wait-to').value;
      var part = $('wait-part').value;
      if (part) body.times = [{ from: part.split('-')[0], to: part.split('-')[1] }];
      body.client = { name: name, phone: phone };
      if (email) body.client.email = email;
      var btn = $('wait-join');
      btn.disabled = true;
      api('POST', '/salons/' + cfg.slug + '/waitlist', body).then(function (r) {
        btn.disabled = false;
        if (r.status === 201) { location.href = entryURL(r.body.id, r.body.manage_token); return; }
        if (r.status === 422 && r.body.fields && waitErrors(capitals(r.body.fields))) return;
        throw r;
      }).catch(function (r) { btn.disabled = false; failed(r); });
    });
  }
  // The page of a place on the waitlist: what it waits for, the times
  // offered (each open or held one booked with a tap), leaving the list.
  // It looks again every 15 seconds while the client waits.
  var entryTimer = null;
  function waitlistMode() {
    var m = /t=([\w-]+)/.exec(location.hash);
    state.token = m ? m[1] : '';
    var lang = $('lang-switch');
    lang.href = lang.getAttribute('href') + location.hash;
    var headers = { 'X-Manage-Token': state.token };
    function load(result) {
      clearTimeout(entryTimer);
      return api('GET', '/waitlist/' + cfg.entryId, undefined, headers).then(function (r) {
        if (r.status === 404) { showError(T.w_not_found); return; }
        if (r.status !== 200) throw r;
        renderEntry(r.body, result);
        if (r.body.status === 'waiting') entryTimer = setTimeout(function () { load(); }, 15000);
      }).catch(failed);
    }
    function renderEntry(e, result) {
      var items = e.items && e.items.length ? e.items : [{ service_id: e.service_id, master_id: e.master_id }];
      summaryInto($('entry-details'), [
        [T.service, items.map(function (it) { return serviceName(it.service_id); }).join(' + ')],
        [T.master, items.map(function (it) { return it.master_id ? masterName(it.master_id) : T.any_master; }).join(', ')],
        [T.w_days, (e.from_date === e.to_date ? dayLabel(e.from_date) : dayLabel(e.from_date) + ' – ' + dayLabel(e.to_date))],
        [T.status, T['w_status_' + e.status] || e.status]
      ]);
      $('entry-note').textContent = e.status === 'waiting' ? T.w_waiting_note : '';
      var list = $('offers');
      list.textContent = '';
      e.offers.slice().reverse().forEach(function (o) {
        var li = el('li', { 'class': 'offer', 'data-offer-id': String(o.id), 'data-status': o.status });
        var label = when(o.starts_at) + ' · ' + masterName(o.master_id) + ' — ' + (T['o_status_' + o.status] || o.status);
        if (o.status === 'held' && o.expires_at) label += ' ' + fmt('w_until', timeOf(o.expires_at));
        li.appendChild(el('span', {}, label));
        if (e.status === 'waiting' && (o.status === 'open' || o.status === 'held')) {
          var b = el('button', { type: 'button', 'class': 'take', 'data-offer-id': String(o.id) }, T.o_button);
          b.addEventListener('click', function () { take(o, b); });
          li.appendChild(b);
        }
        list.appendChild(li);
      });
      $('offers-none').hidden = e.offers.length > 0;
      $('entry-actions').hidden = e.status !== 'waiting';
      $('entry-result').hidden = !result;
      $('entry-result').textContent = result || '';
      if (state.step !== 'entry') { show('entry'); } else { showError(''); }
    }
    function take(o, b) {
      b.disabled = true;
      api('POST', '/waitlist/' + cfg.entryId + '/offers/' + o.id + '/accept', {}, headers).then(function (r) {
        if (r.status === 201) {
          var link = new URL('/w/' + cfg.slug + '/manage/' + r.body.id, location.href);
          link.search = 'lang=' + cfg.lang;
          link.hash = 't=' + r.body.manage_token;
          location.href = link.toString();
          return;
        }
        if (r.status === 409) return load(r.body.error === 'slot_taken' ? T.o_lost : T.o_gone);
        throw r;
      }).catch(function (r) { b.disabled = false; failed(r); });
    }
    $('wait-leave').addEventListener('click', function () {
      api('DELETE', '/waitlist/' + cfg.entryId, undefined, headers).then(function (r) {
        if (r.status !== 200) throw r;
        renderEntry(r.body, T.w_left);
      }).catch(failed);
    });
    api('GET', '/salons/' + cfg.slug + '/masters').then(function (r) {
      state.masters = r.status === 200 ? r.body : [];
      return load();
    }).catch(failed);
  }
  // sentence is a reason the server gave ("this package is another
  // client's") as the field's error reads: a sentence.
  function sentence(s) { return s ? capital(s) + (/[.!?…]$/.test(s) ? '' : '.') : s; }
  // capital is a message the server gave as the page shows one: from a
  // capital letter; capitals, each of a request's fields'.
  function capital(s) { return s ? String(s).charAt(0).toUpperCase() + String(s).slice(1) : s; }
  function capitals(fields) {
    var out = {};
    Object.keys(fields).forEach(function (k) { out[k] = capital(fields[k]); });
    return out;
  }
  function fieldErrors(fields) {
    var any = false;
    [['client.name', 'client-name', 'err-name'], ['client.phone', 'client-phone', 'err-phone'], ['client.email', 'client-email', 'err-email'],
      ['pay_with', 'client-code', 'err-code']].forEach(function (f) {
      var msg = fields[f[0]] || '';
      $(f[2]).textContent = msg;
      $(f[1]).setAttribute('aria-invalid', msg ? 'true' : 'false');
      any = any || !!msg;
    });
    return any;
  }
  function booked(b) {
    var link = new URL('/w/' + cfg.slug + '/manage/' + b.id, location.href);
    link.search = 'lang=' + cfg.lang;
    link.hash = 't=' + b.manage_token;
    $('manage-link').href = link.toString();
    var rows = isVisit(b) ? itemRows(b.items).concat([[T.when, when(b.starts_at) + '–' + timeOf(b.ends_at)]])
      : [[T.service, serviceName(b.service_id)], [T.master, masterName(b.master_id)], [T.when, when(b.starts_at) + '–' + timeOf(b.ends_at)]];
    if (b.paid_with) rows = rows.concat([[T.paid_with, paidWith(b.paid_with)]], inSalon(b));
    summaryInto($('done-summary'), rows);
    state.items = [];
    var held = b.status === 'pending';
    $('h-done').textContent = held ? T.step_held : T.step_done;
    $('done-text').textContent = held ? T.held_text : T.done_text;
    state.booking = b;
    state.token = b.manage_token;
    $('tg-offer').hidden = true;
    if (cfg.telegram) {
      // The deep link carries a one-time token of this booking: opening it
      // in Telegram links that chat to the booking, no phone typed.
      api('POST', '/bookings/' + b.id + '/telegram', {}, { 'X-Manage-Token': b.manage_token }).then(function (r) {
        if (r.status !== 200 || state.booking !== b) return;
        $('tg-link').href = r.body.url;
        $('tg-offer').hidden = false;
      }).catch(function () {});
    }
    show('done');
    paymentInto('done', b);
    calendarLink($('ics-link'), b.id, b.manage_token);
  }

  // --- the deposit -----------------------------------------------------------
  // What the client reads about the deposit, for each booking x payment
  // state, and what they can do: pay (a button to the provider's page),
  // try again after a decline, or wait while the page looks again.
  function payState(b) {
    var p = b.payment, due = b.hold_expires_at ? when(b.hold_expires_at) : '';
    if (!(Number(b.deposit) > 0)) return null;
    if (b.status === 'confirmed' && Number(b.deposit_due) > 0) {
      // Moved to a larger deposit: the difference is due (a payment of its own).
      var rest = fmt('topup_note', money(b.deposit_due));
      if (p && p.url) return { note: rest, pay: p.url };
      if (p && (p.status === 'registering' || p.status === 'unknown')) return { note: T.pay_preparing, poll: true };
      if (p && p.status === 'authorized') return { note: fmt('paid_confirming', money(p.amount)), poll: true };
      return { note: rest, retry: true, retryLabel: T.topup_pay };
    }
    // Held for its deposit with no payment begun (the desk asked for it,
    // and sent a link): the client begins one here.
    if (!p) return cfg.onlinePay && b.status === 'pending' ? { note: fmt('pay_note', money(b.deposit), due), retry: true, retryLabel: T.pay_start, poll: true }
      : { note: fmt('deposit_note', money(b.deposit)) };
    var amount = money(p.amount), paid = Number(p.paid) || 0, back = Number(p.refunded) || 0;
    switch (p.status) {
      // The booking's totals, over all its payments (a top-up, refunds in parts).
      case 'completed':
      case 'refunded':
        // Cancelled, and still paid: the salon's rules kept it.
        if (b.status === 'cancelled' && paid > 0) return { note: back > 0 ? fmt('kept_part_note', money(paid), money(back)) : fmt('kept_note', money(paid)) };
        if (paid > 0 && back > 0) return { note: fmt('paid_part_refunded', money(paid), money(back)) };
        if (paid > 0) return { note: fmt('paid_note', money(paid)) };
        if (back > 0) return { note: fmt('refunded_note', money(back)) };
        return { note: fmt(p.status === 'completed' ? 'paid_note' : 'refunded_note', amount) };
      case 'refunding': return { note: fmt('refunding_note', amount) };
      case 'authorized': return { note: fmt('paid_confirming', amount), poll: true };
      case 'canceling': return { note: T.releasing_note, poll: b.status === 'pending' };
    }
    if (b.status === 'pending') {
      if (p.url) return { note: fmt('pay_note', amount, due), pay: p.url };
      if (p.status === 'failed' || p.status === 'canceled') return { note: fmt('pay_declined', due), retry: true };
      return { note: T.pay_preparing, poll: true }; // registering, unknown: the provider has not answered yet
    }
    if (p.status === 'canceled') return { note: T.released_note };
    return { note: b.status === 'cancelled' ? T.unpaid_note : fmt('deposit_note', amount) };
  }
  // paymentInto shows the deposit's state in a step ('done' or 'manage'),
  // and looks again a few times while it is on its way.
  var polls = 0, pollTimer = null;
  function paymentInto(step, b) {
    var ps = payState(b), pre = step === 'done' ? 'done' : 'manage';
    var note = $(pre + '-payment'), pay = $(pre + '-pay'), retry = $(pre + '-retry');
    note.hidden = !ps;
    note.textContent = ps ? ps.note : '';
    pay.hidden = !(ps && ps.pay);
    pay.dataset.url = ps && ps.pay ? ps.pay : '';
    retry.hidden = !(ps && ps.retry);
    retry.textContent = ps && ps.retryLabel ? ps.retryLabel : T.pay_again;
    clearTimeout(pollTimer);
    if (ps && ps.poll && polls < 20) {
      polls++;
      pollTimer = setTimeout(function () { reread(step); }, 3000);
    }
    resize();
  }
  // reread looks at the booking again while its payment is on its way;
  // an answer that comes after the client moved on (another step, another
  // booking) is dropped.
  function reread(step) {
    var b = state.booking;
    if (!b || state.step !== step) return;
    var req = mode === 'back' ? api('GET', '/returns/' + encodeURIComponent(cfg.returnRef))
      : api('GET', '/bookings/' + b.id, undefined, { 'X-Manage-Token': state.token });
    req.then(function (r) {
      if (r.status !== 200 || state.booking !== b || state.step !== step) return;
      if (step === 'done') {
        state.booking = r.body;
        paymentInto('done', r.body);
      } else if ($('cancel-confirm').hidden) {
        renderBooking(r.body); // (not while the client answers "cancel?")
      } else {
        paymentInto('manage', r.body);
      }
    }).catch(function () {});
  }
  function payAgain(step) {
    var b = state.booking;
    var req = mode === 'back' ? api('POST', '/returns/' + encodeURIComponent(cfg.returnRef) + '/payment', {})
      : api('POST', '/bookings/' + b.id + '/payment', {}, { 'X-Manage-Token': state.token });
    return req.then(function (r) {
      if (r.status !== 200) throw r;
      polls = 0;
      if (step === 'done') { state.booking = r.body; paymentInto('done', r.body); } else { renderBooking(r.body); }
      var url = r.body.payment && r.body.payment.url;
      if (url) window.top.location.assign(url);
    });
  }
  ['done', 'manage'].forEach(function (pre) {
    var pay = $(pre + '-pay'), retry = $(pre + '-retry');
    if (pay) pay.addEventListener('click', function () { if (pay.dataset.url) window.top.location.assign(pay.dataset.url); });
    if (retry) retry.addEventListener('click', function () {
      retry.disabled = true;
      payAgain(pre).catch(failed).then(function () { retry.disabled = false; });
    });
  });

  // --- manage mode ---------------------------------------------------------
  function manageMode() {
    var m = /t=([\w-]+)/.exec(location.hash);
    state.token = m ? m[1] : '';
    var lang = $('lang-switch');
    lang.href = lang.getAttribute('href') + location.hash; // keep the token when switching language
    Promise.all([
      api('GET', '/bookings/' + cfg.bookingId, undefined, { 'X-Manage-Token': state.token }),
      api('GET', '/salons/' + cfg.slug + '/masters')
    ]).then(function (rs) {
      if (rs[0].status === 404) { showError(T.not_found); return; }
      if (rs[0].status !== 200) throw rs[0];
      state.masters = rs[1].status === 200 ? rs[1].body : [];
      renderBooking(rs[0].body);
      // From a message's Move link: straight to the free times nearest the
      // booking's own (its day, else the first day with any).
      if (/(^#|&)move=1/.test(location.hash) && !$('manage-actions').hidden) {
        state.service = state.booking.service_id;
        state.master = state.booking.master_id;
        loadSlots().then(function () {
          var b = document.querySelector('#days button[data-date="' + dateOf(state.booking.starts_at) + '"]:not([disabled])') ||
            document.querySelector('#days button:not([disabled])');
          if (b) b.click();
        });
      }
    }).catch(failed);
    $('cancel').addEventListener('click', function () { $('manage-actions').hidden = true; $('cancel-confirm').hidden = false; $('cancel-yes').focus(); });
    $('cancel-no').addEventListener('click', function () { $('cancel-confirm').hidden = true; $('manage-actions').hidden = false; });
    $('cancel-yes').addEventListener('click', function () {
      if (!state.booking) return; // not loaded yet: nothing to act on
      api('POST', '/bookings/' + state.booking.id + '/cancel', {}, { 'X-Manage-Token': state.token }).then(function (r) {
        if (r.status !== 200) throw r;
        renderBooking(r.body, T.cancelled_done);
      }).catch(function (r) { $('cancel-confirm').hidden = true; failed(r); });
    });
    $('reschedule').addEventListener('click', function () {
      if (!state.booking) return;
      state.service = state.booking.service_id;
      state.master = state.booking.master_id;
      loadSlots();
    });
  }
  // --- back from paying ------------------------------------------------------
  // The page a payment provider sends the client back to: the booking and
  // its payment, found by the payment's return reference, which opens
  // nothing more (the manage link, with its token, is the client's own).
  function backMode() {
    api('GET', '/returns/' + encodeURIComponent(cfg.returnRef)).then(function (r) {
      if (r.status === 404) { showError(T.not_found); return; }
      if (r.status !== 200) throw r;
      return api('GET', '/salons/' + cfg.slug + '/masters').then(function (ms) {
        state.masters = ms.status === 200 ? ms.body : [];
        renderBooking(r.body);
      });
    }).catch(failed);
  }
  function moved(b) { renderBooking(b, T.moved_done); }
  function renderBooking(b, result) {
    state.booking = b;
    summaryInto($('manage-details'), (isVisit(b) ? itemRows(b.items).concat([[T.when, when(b.starts_at) + '–' + timeOf(b.ends_at)]])
      : [[T.service, serviceName(b.service_id)], [T.master, masterName(b.master_id)], [T.when, when(b.starts_at) + '–' + timeOf(b.ends_at)]]).concat([
      [T.price, money(b.price)], [T.status, T['status_' + b.status] || b.status]
    ]).concat(b.paid_with ? [[T.paid_with, paidWith(b.paid_with)]] : [], inSalon(b)));
    var active = b.status === 'pending' || b.status === 'confirmed';
    var open = b.changeable;
    $('manage-note').textContent = active ? (open ? fmt('changeable_until', when(b.changeable_until)) : T.too_late)
      : b.cancelled_by_salon ? T.salon_cancelled_note : '';
    $('manage-actions').hidden = !open || mode === 'back'; // back from paying: changes need the manage link
    if (active && state.token) { calendarLink($('manage-ics'), b.id, state.token); } else { $('manage-ics').hidden = true; }
    $('cancel-confirm').hidden = true;
    // What cancelling now would keep of the package or certificate (the
    // salon's policy), said before the client confirms.
    // (Or that all it paid goes back to it.)
    var pw = active && b.paid_with, keeps = pw && pw.cancel_keeps;
    var took = pw && (pw.kind === 'package' ? pw.visits : pw.amount);
    $('cancel-keeps').hidden = !((keeps || took) && open);
    $('cancel-keeps').textContent = keeps ? fmt('cancel_keeps', units(pw, keeps), fmt('pw_name_' + pw.kind + '_of', hintOf(pw))) +
        (took > keeps ? ' ' + fmt('cancel_keeps_back', units(pw, took - keeps)) : '')
      : took ? fmt('cancel_returns', fmt('pw_name_' + pw.kind, hintOf(pw)), units(pw, took)) : '';
    // And of the deposit paid online: refunded, or kept by the policy.
    var pay = open && b.payment || {};
    $('cancel-deposit').hidden = !(pay.cancel_refunds || pay.cancel_keeps);
    $('cancel-deposit').textContent = pay.cancel_keeps ? fmt('cancel_keeps_deposit', money(pay.cancel_keeps))
      : pay.cancel_refunds ? fmt('cancel_refunds_deposit', money(pay.cancel_refunds)) : '';
    $('manage-result').hidden = !result;
    // Off (cancelled, or never paid): the client may book anew.
    $('book-again').hidden = active || mode === 'back' && b.status !== 'cancelled';
    $('manage-result').textContent = result || '';
    if (state.step !== 'manage') { show('manage'); } else { showError(''); }
    paymentInto('manage', b);
  }

  $('later-days').addEventListener('click', function () {
    var at = state.shownDays;
    loadSlots(true).then(function () { // (the first of the days come: focus goes on to it)
      var b = document.querySelectorAll('#days button')[at];
      if (b) b.focus();
    });
  });
  if (mode === 'manage') { manageMode(); } else if (mode === 'back') { backMode(); } else if (mode === 'waitlist') { waitlistMode(); } else { bookMode(); }
})();
