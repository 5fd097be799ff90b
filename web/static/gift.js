// The gift page (buy a certificate or a package online) and the page the
// buyer comes back to from paying. The purchase carries a claim this
// browser made: the return page shows the code only to the claim, which
// stays in this browser's tab (sessionStorage), never in a URL.
(function () {
  'use strict';
  var cfg = JSON.parse(document.getElementById('config').textContent);
  var T = cfg.i18n;
  function $(id) { return document.getElementById(id); }
  function fmt(key) {
    var args = Array.prototype.slice.call(arguments, 1), i = 0;
    return (T[key] || key).replace(/%[sd]/g, function () { return args[i++]; });
  }
  function api(method, path, body, key) {
    var h = { 'Content-Type': 'application/json', 'Accept-Language': cfg.lang };
    if (key) h['Idempotency-Key'] = key;
    return fetch('/api/v1' + path, { method: method, headers: h, body: body ? JSON.stringify(body) : undefined })
      .then(function (r) { return r.json().catch(function () { return {}; }).then(function (b) { return { status: r.status, body: b }; }); });
  }
  function random() {
    var a = new Uint8Array(24);
    crypto.getRandomValues(a);
    return btoa(String.fromCharCode.apply(null, a)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  }
  // The claim lives in this tab (sessionStorage: through the provider's
  // page and back, and reloads), and goes when the tab is closed: a
  // shared computer's next user does not find it.
  function store(k, v) { try { if (v === null) sessionStorage.removeItem(k); else sessionStorage.setItem(k, v); } catch (e) { /* storage blocked */ } }
  function stored(k) { try { return sessionStorage.getItem(k); } catch (e) { return null; } }
  try { // (claims an older version kept in localStorage: this page's moves to the tab)
    for (var i = localStorage.length - 1; i >= 0; i--) {
      var k = localStorage.key(i);
      if (k && k.indexOf('salon-claim-') === 0) { if (k === 'salon-claim-' + cfg.ref && !stored(k)) store(k, localStorage.getItem(k)); localStorage.removeItem(k); }
    }
  } catch (e) { /* storage blocked */ }
  function capital(s) { return s ? String(s).charAt(0).toUpperCase() + String(s).slice(1) : s; }
  function showError(text) { var e = $('error'); e.textContent = text; e.hidden = !text; }
  // (As the booking widget and the e-mails write money: "3,000 ₽",
  // "1 000,50 ₽": two decimals when it has any, none when whole; the
  // sign kept on the amount's line.)
  function money(v) {
    var c = Math.round(Number(v) * 100) || 0, ru = cfg.lang === 'ru';
    var s = String(Math.floor(Math.abs(c) / 100)).replace(/\B(?=(\d{3})+$)/g, ru ? '\u00a0' : ',');
    if (c % 100) s += (ru ? ',' : '.') + ('0' + Math.abs(c) % 100).slice(-2);
    if (c < 0) s = '-' + s;
    // (the currency's sign as the server writes it: booking.CurrencySign)
    return cfg.signBefore ? cfg.sign + s : s + '\u00a0' + cfg.sign;
  }

  var fields = { 'offer_id': 'offer', 'buyer': 'name', 'buyer.name': 'name', 'buyer.phone': 'phone', 'buyer.email': 'email' };

  function buy(form) {
    ['offer', 'name', 'phone', 'email'].forEach(function (f) { $('err-' + f).textContent = ''; });
    showError('');
    var picked = form.querySelector('input[name=offer]:checked');
    if (!picked) { $('err-offer').textContent = T.gift_pick; form.querySelector('input[name=offer]').focus(); return; }
    var btn = $('gift-pay');
    btn.disabled = true;
    // One purchase per press, whatever the network does: the key and the
    // claim are made once, and a retry resends them. They are kept in the
    // tab with what the form said, so that the same form sent again after
    // going back from the provider's page (a page loaded anew) is the same
    // purchase, until it is paid or declined.
    var said = JSON.stringify([picked.value, $('buyer-name').value, $('buyer-phone').value, $('buyer-email').value]);
    var pending = null;
    try { pending = JSON.parse(stored('salon-gift-pending') || 'null'); } catch (e) { /* another shape: none */ }
    if (!form.dataset.key && pending && pending.said === said) { form.dataset.key = pending.key; form.dataset.claim = pending.claim; }
    var key = form.dataset.key || (form.dataset.key = random());
    var claim = form.dataset.claim || (form.dataset.claim = random());
    store('salon-gift-pending', JSON.stringify({ said: said, key: key, claim: claim }));
    api('POST', '/salons/' + cfg.slug + '/purchases', {
      offer_id: Number(picked.value), claim: claim,
      buyer: { name: $('buyer-name').value, phone: $('buyer-phone').value, email: $('buyer-email').value, lang: cfg.lang }
    }, key).then(function (r) {
      if (r.status === 201) {
        store('salon-claim-' + r.body.ref, claim);
        var url = r.body.payment && r.body.payment.url;
        var back = '/w/' + cfg.slug + '/bought/' + r.body.ref + '?lang=' + cfg.lang;
        window.top.location.assign(url || back);
        return;
      }
      btn.disabled = false;
      var f = r.body.fields || {};
      var first = null;
      Object.keys(f).forEach(function (k) {
        var id = fields[k], msg = capital(f[k]); // (the server's words, as the page's read: from a capital letter)
        if (id && $('err-' + id)) { $('err-' + id).textContent = msg; first = first || id; } else showError(msg);
      });
      if (first) {
        var input = first === 'offer' ? form.querySelector('input[name=offer]') : $('buyer-' + first);
        if (input) { input.setAttribute('aria-invalid', 'true'); input.focus(); }
      } else if (!Object.keys(f).length) {
        showError(capital(r.body.message) || r.body.error || String(r.status));
      }
    }, function () { btn.disabled = false; showError(T.error_page); });
  }

  function detail(dl, label, value) {
    var dt = document.createElement('dt'), dd = document.createElement('dd');
    dt.textContent = label; dd.textContent = value;
    dl.appendChild(dt); dl.appendChild(dd);
  }

  var tries = 0, mailTries = 0, boughtPhone = '';
  function look() {
    var claim = stored('salon-claim-' + cfg.ref);
    api('POST', '/purchases/' + encodeURIComponent(cfg.ref), claim ? { claim: claim } : null).then(function (r) {
      var st = $('bought-status');
      if (r.status === 404) { st.textContent = T.bought_not_found; return; }
      if (r.status !== 200) {
        // Too many requests from this address (a shared network), or the
        // server busy or restarting: the page keeps looking, backing off.
        tries++;
        st.textContent = T.bought_busy;
        setTimeout(look, Math.min(5000 * tries, 60000));
        return;
      }
      var x = r.body;
      var dl = $('bought-details');
      dl.textContent = '';
      // (The owner's title, its amounts kept on one line: "3 000 ₽".)
      detail(dl, T.bought_what, x.title.replace(/(\d) (?=\d{3}\b|₽|руб|RUB|USD|EUR|€|\$)/g, '$1\u00a0'));
      if (x.amount !== undefined) detail(dl, T.bought_amount, money(x.amount));
      if (x.visits) detail(dl, T.bought_visits, String(x.visits));
      // (04.01.2027 in Russian; 4 Jan 2027 in English, which no reader takes for April.)
      if (x.valid_until) detail(dl, T.bought_valid_until, new Date(x.valid_until + 'T12:00:00Z').toLocaleDateString(cfg.lang === 'ru' ? 'ru-RU' : 'en-GB',
        cfg.lang === 'ru' ? { timeZone: 'UTC' } : { timeZone: 'UTC', day: 'numeric', month: 'short', year: 'numeric' }));
      // (A package's visits are booked with its client's phone: shown to
      // the buyer, with the code.)
      if (x.phone) detail(dl, T.bought_phone, x.phone);
      boughtPhone = x.phone || '';
      dl.hidden = false;
      $('bought-pay').hidden = true;
      // Paid, declined or refunded: the gift page's next purchase is a new one.
      if (x.status !== 'pending') store('salon-gift-pending', null);
      if (x.status === 'paid') {
        $('bought-book').hidden = false;
        if (x.code) {
          st.textContent = T.bought_paid;
          $('code-value').textContent = x.code;
          $('bought-code').hidden = false;
          $('bought-mail').textContent = x.mailed ? fmt('bought_mailed', x.email) : x.mail_failed ? T.bought_not_mailed : fmt('bought_mailing', x.email);
          // (The e-mail still on its way, as the payment's notice sends
          // it: asked again until it went or did not, for a while.)
          if (!x.mailed && !x.mail_failed && ++mailTries <= 20) setTimeout(look, 1500 * Math.ceil(mailTries / 5));
        } else {
          // (Its code is shown only in the tab that paid: the button
          // here fills nothing in, and says so.)
          st.textContent = fmt('bought_elsewhere', x.email);
          $('bought-book').textContent = T.bought_book_typed;
        }
        return;
      }
      if (x.status === 'failed') {
        st.textContent = T.bought_failed;
        store('salon-claim-' + cfg.ref, null);
        $('bought-retry').hidden = false; // (back to the gift page: a new purchase)
        return;
      }
      if (x.status === 'refunded') {
        // Refunded in part (what a booking held then came back since, or
        // was spent): how much, and, to the claim, what is left and the
        // code that still spends it.
        st.textContent = x.refunded === undefined || x.refunded >= x.price ? T.bought_refunded : fmt('bought_refunded_part', money(x.refunded), money(x.price));
        if (x.code && x.remaining) {
          st.textContent += ' ' + (x.kind === 'certificate' ? fmt('bought_left', money(x.remaining)) : fmt('bought_left_visits', String(x.remaining)));
          $('code-value').textContent = x.code;
          $('bought-code').hidden = false;
          $('bought-book').hidden = false;
        }
        return;
      }
      // Pending: its payment's page still open (the buyer left it, or has
      // not paid yet: the provider's word, which this read asks for), not
      // paid, offered again; the provider not answering; or paid, and its
      // confirmation on its way (then the code is e-mailed too).
      // (Back from the provider just now, a payment made is confirmed
      // within a look or two: until then it is not called unpaid.)
      tries++;
      var open = x.payment && x.payment.url, unpaid = open && tries > 2;
      if (unpaid) { $('bought-pay').href = x.payment.url; $('bought-pay').hidden = false; }
      var say = unpaid ? T.bought_unpaid : open ? T.bought_checking : x.payment ? T.bought_provider_wait : tries > 20 ? T.bought_still : T.bought_pending;
      if (st.textContent !== say) st.textContent = say; // (a live region: said again only when it changes)
      setTimeout(look, Math.min(2000 * Math.ceil(tries / 5), 15000));
    }, function () { setTimeout(look, 5000); });
  }

  if (cfg.ref) {
    look();
    // "Book with it": the widget fills the code in (and a package's
    // phone, whose client's visits it pays), through this tab's storage.
    $('bought-book').addEventListener('click', function () {
      var code = $('code-value').textContent;
      if (!code || $('bought-code').hidden) return;
      store('salon-book-with-' + cfg.slug, JSON.stringify({ code: code, phone: boughtPhone, at: Date.now() }));
    });
    $('code-copy').addEventListener('click', function () {
      var b = this;
      navigator.clipboard.writeText($('code-value').textContent).then(function () { b.textContent = T.bought_copied; });
    });
  } else if ($('gift-form')) {
    $('gift-form').addEventListener('submit', function (e) { e.preventDefault(); buy(this); });
    // Pressed again unchanged (after an error, a lost answer): the same
    // purchase. Changed: another one.
    $('gift-form').addEventListener('input', function () { delete this.dataset.key; delete this.dataset.claim; });
    // Whose phone a package is for: said when a package is picked.
    $('gift-form').addEventListener('change', function () {
      var picked = this.querySelector('input[name=offer]:checked');
      if ($('hint-package')) $('hint-package').hidden = !(picked && picked.dataset.package);
    });
    // Back from the provider's page (the page restored as it was): the
    // button works again, for the same purchase.
    window.addEventListener('pageshow', function () { $('gift-pay').disabled = false; });
    $('lang-switch').href = '?lang=' + (cfg.lang === 'ru' ? 'en' : 'ru');
  }
})();
