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

  // Copy buttons: data-copy names the element whose text to copy.
  document.addEventListener('click', function (e) {
    var b = e.target && e.target.closest ? e.target.closest('button[data-copy]') : null;
    if (!b) return;
    var el = document.querySelector(b.dataset.copy);
    if (el && navigator.clipboard) navigator.clipboard.writeText(el.textContent.trim()).then(function () { b.textContent = 'Copied'; }, function () {});
  });

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
        value: function (u, v, si, idx) { return idx == null ? '' : data.series[i].values[idx].toFixed(4); } };
    })).reverse();
    series.unshift(series.pop());
    var ys = stacked.slice().reverse();
    if (ys.length === 0) { ys = [xs.map(function () { return 0; })]; series = [{}, { label: 'spend', stroke: '#ccd' }]; }
    var opts = {
      width: Math.max(280, box.clientWidth), height: window.innerWidth < 640 ? 220 : 280,
      series: series,
      scales: { x: { time: true }, y: { range: function (u, min, max) { return [0, max > 0 ? max * 1.1 : 1]; } } },
      axes: [{}, { size: 70, values: function (u, vals) { return vals.map(function (v) { return v === 0 ? '0' : v < 0.01 ? v.toExponential(1) : +v.toFixed(4) + ''; }); } }],
      legend: { live: true },
    };
    var plot = new uPlot(opts, [xs].concat(ys), box);
    window.addEventListener('resize', function () { plot.setSize({ width: Math.max(280, box.clientWidth), height: opts.height }); });
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', drawSpend); else drawSpend();
})();
