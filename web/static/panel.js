// The panel's few behaviours that are not htmx: copying a text to the
// clipboard (data-copy="#id"), and filling a weekly template's days from its
// first (data-fill-week). Plain script, no build step.
(function () {
  'use strict';
  document.addEventListener('click', function (ev) {
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
})();
