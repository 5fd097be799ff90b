// Embeds a salon's booking widget: put
//   <script src="https://BOOKING-HOST/widget.js" data-salon="SLUG" async></script>
// where the widget should appear. It inserts an iframe and keeps its height
// equal to the widget's content (the widget posts its height).
(function () {
  'use strict';
  var script = document.currentScript;
  if (!script || !script.dataset.salon) return;
  var origin = new URL(script.src).origin;
  var src = origin + '/w/' + encodeURIComponent(script.dataset.salon);
  if (script.dataset.lang) src += '?lang=' + encodeURIComponent(script.dataset.lang);
  var frame = document.createElement('iframe');
  frame.src = src;
  // The frame's name for assistive technology, in the page's language
  // until the widget says its own (the salon's, or data-lang).
  var lang = (script.dataset.lang || document.documentElement.lang || '').slice(0, 2).toLowerCase();
  frame.title = script.dataset.title || (lang === 'en' ? 'Online booking' : 'Онлайн-запись');
  frame.className = 'salon-widget';
  frame.style.cssText = 'display:block;width:100%;max-width:40rem;border:0;height:480px;overflow:hidden';
  frame.setAttribute('scrolling', 'no');
  script.parentNode.insertBefore(frame, script.nextSibling);
  window.addEventListener('message', function (ev) {
    if (ev.origin !== origin || ev.source !== frame.contentWindow) return;
    var d = ev.data;
    if (d && d.type === 'salon-widget:resize' && typeof d.height === 'number' && d.height > 0) {
      frame.style.height = Math.ceil(d.height) + 'px';
    }
    if (d && d.type === 'salon-widget:title' && typeof d.title === 'string' && d.title && !script.dataset.title) {
      frame.title = d.title.slice(0, 200);
    }
  });
})();
