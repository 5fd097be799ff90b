// The panel's few behaviours that are not htmx: copying a text to the
// clipboard (data-copy="#id"), filling a weekly template's days from its
// first (data-fill-week), on a phone the day grid one master at a time
// (data-show-col), and a page a form's POST rendered (refused, or showing
// a code once) put at its own address (body data-here), so a reload asks
// for the page, not the form again. Plain script, no build step.
(function () {
  'use strict';
  function here() {
    var h = document.body && document.body.dataset.here;
    if (h && h.charAt(0) === '/' && location.pathname + location.search !== h) history.replaceState(null, '', h);
  }
  if (document.body) here(); else document.addEventListener('DOMContentLoaded', here);
  var narrow = window.matchMedia('(max-width: 640px)');
  // showCol shows, on a phone, only the chosen master's column of the
  // grid (kept across the grid's refreshes); on a wider screen all.
  function showCol() {
    var col = sessionStorage.getItem('panel-col') || '0';
    document.querySelectorAll('table.grid [data-col]').forEach(function (c) {
      c.hidden = narrow.matches && c.dataset.col !== col;
    });
    document.querySelectorAll('[data-show-col]').forEach(function (b) {
      b.setAttribute('aria-pressed', b.dataset.showCol === col ? 'true' : 'false');
    });
  }
  narrow.addEventListener('change', showCol);
  document.addEventListener('DOMContentLoaded', showCol);
  document.body && showCol();
  // Today's grid opens on now when now is out of sight (a phone's screen,
  // a day begun by a night shift's last hours), once: its refreshes leave
  // the page where the reader put it.
  function toNow() {
    var row = document.querySelector('#grid tr.now');
    if (!row) return;
    var r = row.getBoundingClientRect();
    if (r.top < 0 || r.bottom > window.innerHeight) row.scrollIntoView({ block: 'center' });
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', toNow); else toNow();
  document.addEventListener('htmx:afterSwap', showCol);
  // The new booking form: the services say how long they take with the
  // chosen master and what they cost (the master's own), as the master
  // changes.
  function durations(m) {
    if (m.name !== 'master' || !m.form || !m.form.querySelector('select[name=service]')) return;
    m.form.querySelectorAll('select[name=service] option[data-terms]').forEach(function (o) {
      o.dataset.terms.split('|').forEach(function (t) {
        var f = t.split('=');
        if (f[0] === m.value) o.textContent = o.dataset.name + ' · ' + f[1] + ' ' + o.dataset.min + (f[2] ? ' · ' + f[2] : '');
      });
    });
  }
  document.addEventListener('change', function (ev) { durations(ev.target); });
  document.querySelectorAll('select[name=master]').forEach(durations);
  document.addEventListener('click', function (ev) {
    var sc = ev.target.closest('[data-show-col]');
    if (sc) {
      sessionStorage.setItem('panel-col', sc.dataset.showCol);
      showCol();
      return;
    }
    var b = ev.target.closest('[data-copy]');
    if (b) {
      var src = document.querySelector(b.dataset.copy);
      if (!src) return;
      var text = src.value !== undefined ? src.value : src.textContent;
      var done = function () { var s = b.dataset.copied; if (s) { b.textContent = s; } };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(done, function () { src.select && src.select(); });
      } else if (src.select) {
        src.select();
        document.execCommand('copy');
        done();
      }
      return;
    }
    var f = ev.target.closest('[data-fill-week]');
    if (f) {
      var form = f.closest('form');
      var rows = form.querySelectorAll('tbody tr');
      if (!rows.length) return;
      var first = rows[0].querySelectorAll('input');
      rows.forEach(function (r, i) {
        if (i === 0) return;
        r.querySelectorAll('input').forEach(function (inp, j) {
          if (inp.type === 'checkbox') { inp.checked = first[j].checked; } else { inp.value = first[j].value; }
        });
      });
    }
  });
  // On a phone the sections scroll in one row: the page's own in sight.
  var here = document.querySelector('.top nav a[aria-current]');
  if (here && here.parentNode.scrollWidth > here.parentNode.clientWidth) {
    here.parentNode.scrollLeft = here.offsetLeft - here.parentNode.offsetLeft - (here.parentNode.clientWidth - here.offsetWidth) / 2;
  }
})();
