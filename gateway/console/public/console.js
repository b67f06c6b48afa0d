// Model Gateway console: progressive enhancement only. Every page works without it.
(function () {
  'use strict';
  document.documentElement.classList.add('js');

  // Selects marked data-autosubmit submit their form on change.
  document.addEventListener('change', function (e) {
    var t = e.target;
    if (t && t.matches && t.matches('select[data-autosubmit]')) t.form.requestSubmit ? t.form.requestSubmit() : t.form.submit();
  });

  // Forms marked data-confirm ask first.
  document.addEventListener('submit', function (e) {
    var f = e.target;
    if (f && f.dataset && f.dataset.confirm && !window.confirm(f.dataset.confirm)) e.preventDefault();
  });

  // A refused form comes back at the top of its page, often with its errors out of sight (the key form under the
  // key list): show the first error and focus its field, so the next step is in view and under the keyboard.
  function showFirstError() {
    var err = document.querySelector('main .field-error, main .form-error');
    if (!err) return;
    var box = err.closest('.field, fieldset, form');
    var input = box && box.querySelector('input:not([type=hidden]), select, textarea');
    if (input) input.focus({ preventScroll: true });
    err.scrollIntoView({ block: 'center' });
  }

  // Copy buttons: data-copy names the element whose text to copy.
  document.addEventListener('click', function (e) {
    var b = e.target && e.target.closest ? e.target.closest('button[data-copy]') : null;
    if (!b) return;
    var el = document.querySelector(b.dataset.copy);
    if (el && navigator.clipboard) navigator.clipboard.writeText(el.textContent.trim()).then(function () { b.textContent = 'Copied'; setTimeout(function () { b.textContent = 'Copy'; }, 2000); }, function () {});
  });


  // Times: the server writes UTC; show them in the reader's zone, UTC stays in the title (hover).
  var fmt = {}, zone = '';
  try { zone = new Intl.DateTimeFormat('en-GB', { timeZoneName: 'short' }).formatToParts(new Date()).filter(function (p) { return p.type === 'timeZoneName'; })[0].value; } catch (e) { zone = ''; }
  function localTimes(root) {
    [].forEach.call((root || document).querySelectorAll('time[datetime]:not([data-local])'), function (el) {
      var d = new Date(el.getAttribute('datetime'));
      if (isNaN(d)) return;
      var sec = el.hasAttribute('data-seconds') ? 's' : 'm';
      fmt[sec] = fmt[sec] || new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: sec === 's' ? '2-digit' : undefined });
      el.textContent = fmt[sec].format(d) + (zone ? ' ' + zone : '');
      el.setAttribute('data-local', '');
    });
  }

  // Tables: every cell learns its column's name, so a narrow screen can show rows as cards.
  function labelTables(root) {
    [].forEach.call((root || document).querySelectorAll('.table-wrap table'), function (t) {
      var heads = [].map.call(t.querySelectorAll('thead th'), function (th) { return th.textContent.trim(); });
      if (!heads.length) return;
      t.classList.add('stack');
      [].forEach.call(t.querySelectorAll('tbody tr'), function (tr) {
        // A cell spanning several columns (an empty table's "No calls yet") belongs to none of them: no label.
        [].forEach.call(tr.children, function (td, i) { if (!td.hasAttribute('data-label') && !td.hasAttribute('colspan') && heads[i]) td.setAttribute('data-label', heads[i]); });
      });
    });
  }

  // Navigation: the current tab scrolled into view; edge shadows say the bar scrolls.
  function navState() {
    var nav = document.querySelector('nav.main');
    if (!nav) return;
    var cur = nav.querySelector('[aria-current="page"]');
    if (cur) nav.scrollLeft = cur.offsetLeft - (nav.clientWidth - cur.offsetWidth) / 2;
    function edges() {
      nav.classList.toggle('more-left', nav.scrollLeft > 4);
      nav.classList.toggle('more-right', nav.scrollLeft + nav.clientWidth < nav.scrollWidth - 4);
    }
    nav.addEventListener('scroll', edges, { passive: true });
    window.addEventListener('resize', edges);
    edges();
  }

  // Filter a list in place (models page): data-filter names the rows; inputs with data-filter-text / data-filter-cap drive it.
  function liveFilter() {
    var box = document.querySelector('[data-filter]');
    if (!box) return;
    var rows = document.querySelectorAll(box.getAttribute('data-filter'));
    var count = document.querySelector('[data-filter-count]');
    function apply() {
      var q = (box.querySelector('[data-filter-text]') || {}).value || '';
      q = q.trim().toLowerCase();
      var caps = [].map.call(box.querySelectorAll('[data-filter-cap]:checked'), function (c) { return c.value; });
      var kind = (box.querySelector('[data-filter-kind]') || {}).value || '';
      var shown = 0;
      [].forEach.call(rows, function (r) {
        var ok = (!q || r.getAttribute('data-search').indexOf(q) >= 0) && (!kind || r.getAttribute('data-kind') === kind) &&
          caps.every(function (c) { return (' ' + r.getAttribute('data-caps') + ' ').indexOf(' ' + c + ' ') >= 0; });
        r.hidden = !ok;
        if (ok) shown++;
      });
      if (count) count.textContent = String(shown);
    }
    box.addEventListener('input', apply);
    box.addEventListener('change', apply);
    box.addEventListener('submit', function (e) { e.preventDefault(); apply(); });
  }

  function enhance(root) { localTimes(root); labelTables(root); }
  // showFirstError last: the tables' card layout and local times change where the error sits.
  function ready() { enhance(document); navState(); liveFilter(); showFirstError(); }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', ready); else ready();
  // The whole page: a swapped tbody's parent is its table, which labelTables looks for from above.
  document.addEventListener('htmx:afterSettle', function () { enhance(document); });

  // Spend chart (uPlot, served from node_modules): stacked bars per day, one colour per model.
  function drawSpend() {
    var box = document.getElementById('spend-chart');
    var src = document.getElementById('spend-data');
    if (!box || !src || typeof window.uPlot !== 'function') return;
    var data = JSON.parse(src.textContent);
    var xs = data.days.map(function (d) { return Date.parse(d + 'T00:00:00Z') / 1000; });
    var colours = ['#4b4fd8', '#0f9d8a', '#e0802b', '#c2417a', '#6d8b1f', '#7a5af8'];
    // Stack: each series is drawn as the running sum so bars sit on each other.
    var running = xs.map(function () { return 0; });
    var stacked = data.series.map(function (s) {
      running = running.map(function (v, i) { return +(v + s.values[i]).toFixed(6); });
      return running.slice();
    });
    var bars = uPlot.paths.bars({ size: [0.7, 40] });
    var series = [{}].concat(data.series.map(function (s, i) {
      return { label: s.label, stroke: colours[i % colours.length], fill: colours[i % colours.length] + 'cc', paths: bars, points: { show: false },
        value: function (u, v, si, idx) { return idx == null ? '' : '$' + data.series[i].values[idx].toFixed(4); } };
    })).reverse();
    series.unshift(series.pop());
    var ys = stacked.slice().reverse();
    if (ys.length === 0) { ys = [xs.map(function () { return 0; })]; series = [{}, { label: 'spend', stroke: '#ccd' }]; }
    var opts = {
      width: Math.max(280, box.clientWidth), height: window.innerWidth < 640 ? 220 : 280,
      series: series,
      scales: { x: { time: true }, y: { range: function (u, min, max) { return [0, max > 0 ? max * 1.1 : 1]; } } },
      axes: [{}, { size: 70, values: function (u, vals) { return vals.map(function (v) { return v === 0 ? '$0' : v < 0.01 ? '$' + v.toExponential(1) : '$' + (+v.toFixed(4)); }); } }],
      legend: { live: true },
    };
    var plot = new uPlot(opts, [xs].concat(ys), box);
    window.addEventListener('resize', function () { plot.setSize({ width: Math.max(280, box.clientWidth), height: opts.height }); });
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', drawSpend); else drawSpend();
})();
