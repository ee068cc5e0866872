/* The report page's script: report_template.html's <script>, where report_template() (html_report.cpp) puts it:
   the shared helpers and a run's views; a search's views (report_search.js) go at the marker below.
   This header comment is not copied into the page. */
'use strict';
// Test and measurement hooks (tests/browser/report_browser_test.py reads them).
window.monetReport = { ready: false, errors: [] };
window.addEventListener('error', function (e) { window.monetReport.errors.push(String(e.message)); });
(function () {
const D = JSON.parse(document.getElementById('monet-data').textContent);
const $ = (tag, attrs, ...children) => {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'style') el.style.cssText = v; else if (k === 'class') el.className = v;
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v); else el.setAttribute(k, v);
  }
  for (const c of children) if (c !== null && c !== undefined) el.append(c instanceof Node ? c : String(c));
  return el;
};
const KIND_COLOURS = { conv: '#1f77b4', gemm: '#2ca02c', matmul: '#98df8a', elementwise: '#ff7f0e', pooling: '#9467bd',
  reduction: '#8c564b', softmax: '#e377c2', norm: '#bcbd22', embedding: '#17becf', loss: '#7f7f7f', view: '#c7c7c7',
  copy: '#dbdb8d' };
const CAUSE_COLOURS = { input: '#aec7e8', fetch: '#ffbb78', writeback: '#c5b0d5', spill: '#d62728', refetch: '#ff9896',
  stream: '#9edae5', offload: '#8c564b', prefetch: '#e7969c' };
// The colours of memory.svg's stacked uses (plots.cpp use_colour).
const USE_COLOURS = { 'activations': '#aec7e8', 'recomputed activations': '#ffbb78', 'weights': '#98df8a', 'gradients': '#ff9896',
  'optimizer states': '#c5b0d5', 'streaming': '#c49c94', 'other': '#dbdb8d' };
const PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];
const colourOf = (table, name, i) => table[name] || PALETTE[i % PALETTE.length];

// ------------------------------------------------------------------------------------------- formatting
function si(v, unit, digits) {
  if (v === null || v === undefined || !isFinite(v)) return String(v) + (unit ? ' ' + unit : '');
  const prefixes = [[1e15, 'P'], [1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'k'], [1, ''], [1e-3, 'm'], [1e-6, 'µ'], [1e-9, 'n'], [1e-12, 'p']];
  const a = Math.abs(v);
  let p = [1, ''];
  if (a !== 0) for (const q of prefixes) { if (a >= q[0] * 0.9995) { p = q; break; } p = q; }
  return +(v / p[0]).toPrecision(digits || 4) + ' ' + p[1] + (unit || '');
}
const int = v => (v === null || v === undefined) ? '–' : Math.round(v).toLocaleString('en-US');
const bytes = v => si(v, 'B');
const joules = pj => si(pj * 1e-12, 'J');
function cyclesText(c, freq) { return int(c) + ' cycles' + (freq > 0 ? ' = ' + si(c / freq, 's') : ''); }
function objectiveText(v, unit) {
  if (v === null || v === undefined) return 'not scheduled';
  if (unit === 'pJ') return joules(v) + ' (' + v.toPrecision(7) + ' pJ)';
  if (unit === 'cycles') return int(v) + ' cycles';
  if (unit === 'B') return bytes(v) + ' (' + int(v) + ' B)';
  return +v.toPrecision(7) + ' ' + unit;
}
const objectiveScale = unit => unit === 'pJ' ? [1e-12, 'J'] : [1, unit];
/// An axis value in a display unit: SI prefixes for J, B, cycles, s; plain digits for units that carry their own
/// prefix or power (mm2: "0.15 mm2", not "150 mmm2").
const axisText = (v, unit) => ['J', 'B', 'cycles', 's', 'Hz', ''].includes(unit) ? si(v, unit, 4) : +v.toPrecision(4) + ' ' + unit;
function ticks(lo, hi, n) {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / (n || 6), p = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map(m => m * p).find(s => s >= raw);
  const out = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) out.push(t);
  return out;
}
function lowerBound(arr, v, idx) {  // first k with arr[idx[k]] >= v
  let lo = 0, hi = idx.length;
  while (lo < hi) { const m = (lo + hi) >> 1; if (arr[idx[m]] < v) lo = m + 1; else hi = m; }
  return lo;
}

// -------------------------------------------------------------------------------------------- tooltip
const tip = document.getElementById('tooltip');
function showTip(ev, text) {
  tip.textContent = text;
  tip.hidden = false;
  const w = tip.offsetWidth, h = tip.offsetHeight;
  let x = ev.clientX + 14, y = ev.clientY + 14;
  if (x + w > window.innerWidth - 4) x = Math.max(4, ev.clientX - w - 14);
  if (y + h > window.innerHeight - 4) y = Math.max(4, ev.clientY - h - 14);
  tip.style.left = x + 'px';
  tip.style.top = y + 'px';
}
function hideTip() { tip.hidden = true; }

function hidpiCanvas(width, height) {
  const c = $('canvas');
  const r = window.devicePixelRatio || 1;
  c.width = Math.round(width * r); c.height = Math.round(height * r);
  c.style.width = width + 'px'; c.style.height = height + 'px';
  const g = c.getContext('2d');
  g.setTransform(r, 0, 0, r, 0, 0);
  return [c, g];
}
function canvasPoint(c, ev) { const b = c.getBoundingClientRect(); return [ev.clientX - b.left, ev.clientY - b.top]; }

// ---------------------------------------------------------------------------------------------- tables
function kvTable(rows) {
  const t = $('table', { class: 'kv' });
  for (const [k, v, cls] of rows) t.append($('tr', {}, $('th', {}, k), $('td', cls ? { class: cls } : {}, v)));
  return t;
}
function barTable(entries, total, colours, fmt) {
  const t = $('table', { class: 'grid' });
  t.append($('tr', {}, $('th', {}, ''), $('th', {}, 'energy'), $('th', {}, 'share'), $('th', {}, '')));
  const max = Math.max(1e-300, ...entries.map(e => e[1]));
  entries.forEach(([name, v], i) => {
    t.append($('tr', {}, $('td', {}, name), $('td', { class: 'num' }, fmt(v)),
      $('td', { class: 'num' }, total > 0 ? (100 * v / total).toFixed(1) + ' %' : '–'),
      $('td', {}, $('span', { class: 'bar', style: 'width:' + Math.max(1, 300 * v / max) + 'px;background:' + colourOf(colours, name, i) }))));
  });
  return t;
}
/// A nested JSON object as rows "a.b.c | value" (the training memory table and its units in the keys).
function flatRows(obj, prefix, out) {
  for (const [k, v] of Object.entries(obj)) {
    const key = prefix ? prefix + '.' + k : k;
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) flatRows(v, key, out);
    else {
      let text = Array.isArray(v) ? v.join(', ') : String(v);
      if (typeof v === 'number' && /bytes$/.test(k)) text = int(v) + ' B (' + bytes(v) + ')';
      else if (typeof v === 'number') text = Number.isInteger(v) ? int(v) : String(+v.toPrecision(6));
      out.push([key, text, typeof v === 'number' ? 'num' : '']);
    }
  }
  return out;
}

// =========================================================================================== a run
/// The views of one schedule: summary, Gantt chart and memory over time (one shared, zoomable time axis),
/// energy, training memory. `root` receives the sections; returns the hooks the tests use.
function renderRun(root, R, anchors) {
  const freq = R.frequency_hz;
  const hooks = {};
  const sec = (id, title) => { const s = $('section', anchors ? { id: id } : {}, $('h2', {}, title)); root.append(s); return s; };

  // Summary, every number with its unit.
  const summary = sec('summary', 'Summary');
  const coresText = R.cores.map(c => c.name + ' (' + c.type + ')').join(', ');
  const rows = [
    ['experiment', R.experiment + ' (seed ' + R.seed + ', ' + R.mode + ')'],
    ['workload', R.workload.name + ': ' + int(R.workload.operators) + ' operators, ' + int(R.workload.macs) + ' MACs, ' + int(R.workload.parameters) + ' parameters'],
    ['architecture', R.architecture + ': ' + coresText + '; off-chip ' + R.offchip.name + (freq > 0 ? '; ' + si(freq, 'Hz') : '')],
    ['latency', cyclesText(R.latency_cycles, freq)],
    ['energy', joules(R.energy_pj) + ' (' + int(R.energy_pj) + ' pJ)'],
    ['EDP', si(R.energy_pj * R.latency_cycles, 'pJ·cycles')],
    ['peak memory', R.cores.map(c => c.name + ' ' + bytes(c.peak_bytes) + ' of ' + bytes(c.capacity_bytes)).join(', ') +
      '; off chip ' + bytes(R.offchip.peak_bytes) + ' of ' + bytes(R.offchip.capacity_bytes)],
    ['off-chip traffic', 'read ' + bytes(R.offchip_read_bytes) + ', written ' + bytes(R.offchip_write_bytes) + ', spilled ' + bytes(R.spilled_bytes)],
    ['area', R.area_mm2 === null ? 'unknown (a core has no area)' : (+R.area_mm2.toPrecision(5)) + ' mm²'],
    ['schedule', int(R.cn_count) + ' computation nodes on cores, ' + int(R.transfers.start.length) + ' transfers on links'],
    ['feasible', R.feasible ? 'yes' : 'NO: ' + R.infeasible_reason, R.feasible ? '' : 'bad'],
    ['monet', R.provenance.monet_version + ' (' + R.provenance.git_commit + ')'],
  ];
  summary.append(kvTable(rows));

  // Schedule: a Gantt chart of cores and links, then memory over time, on one time axis.
  const sched = sec('schedule', 'Schedule and memory over time');
  sched.append($('p', { class: 'muted' }, 'Wheel: zoom around the pointer; drag: pan; double-click or the button: whole schedule. ' +
    'Rows with more rectangles in view than pixels are drawn per pixel column (height = share busy, or of link bandwidth; ' +
    'colour = dominant operator kind or transfer cause) and become exact as you zoom in.'));
  const view = { t0: 0, t1: Math.max(1, R.latency_cycles), full: Math.max(1, R.latency_cycles), listeners: [] };
  view.set = (t0, t1) => {
    const span = Math.min(view.full, Math.max(4, t1 - t0));
    t0 = Math.max(0, Math.min(view.full - span, t0));
    view.t0 = t0; view.t1 = t0 + span;
    view.listeners.forEach(f => f());
  };
  const status = $('span', { class: 'muted' });
  sched.append($('div', { class: 'controls' }, $('button', { onclick: () => view.set(0, view.full) }, 'whole schedule'), status));
  view.listeners.push(() => { status.textContent = 'cycles ' + int(view.t0) + ' – ' + int(view.t1) + ' (' + (100 * (view.t1 - view.t0) / view.full).toPrecision(3) + ' % of the schedule)'; });
  const width = Math.max(600, Math.min(1360, (root.clientWidth || document.body.clientWidth) - 40));
  hooks.gantt = gantt(sched, R, view, width);
  const legend = $('div', { class: 'legend' });
  R.kinds.forEach((k, i) => legend.append($('span', {}, $('i', { style: 'background:' + colourOf(KIND_COLOURS, k, i) }), k)));
  R.causes.forEach((k, i) => legend.append($('span', {}, $('i', { style: 'background:' + colourOf(CAUSE_COLOURS, k, i) }), k + ' (link)')));
  sched.append(legend);
  sched.append($('h3', {}, 'Data held in memory (capacity dashed red when within 4× of the peak; on cores by use, stacked)'));
  for (const c of R.cores) memoryPanel(sched, c.name + ' (' + c.type + ')', c, view, width);
  memoryPanel(sched, R.offchip.name + ' (off chip)', R.offchip, view, width);
  const held = Object.keys(USE_COLOURS).filter(u => R.cores.some(c => c.memory.by_use && c.memory.by_use[u]));
  if (held.length) {
    const lg = $('div', { class: 'legend' });
    held.forEach(u => lg.append($('span', {}, $('i', { style: 'background:' + USE_COLOURS[u] }), u)));
    sched.append(lg);
  }
  const comp = R.cores.filter(c => c.peak_composition_bytes);
  if (comp.length) {
    sched.append($('h3', {}, 'What each core held at its peak'));
    const parts = Object.keys(USE_COLOURS);
    const t = $('table', { class: 'grid' });
    t.append($('tr', {}, $('th', {}, 'core'), $('th', {}, 'cycle'), ...parts.map(p => $('th', {}, p)), $('th', {}, '')));
    const max = Math.max(1, ...comp.map(c => parts.reduce((s, p) => s + c.peak_composition_bytes[p], 0)));
    for (const c of comp) {
      const pc = c.peak_composition_bytes;
      const bar = $('span');
      parts.forEach(p => bar.append($('span', { class: 'bar', title: p + ' ' + bytes(pc[p]), style: 'width:' + 260 * pc[p] / max + 'px;background:' + USE_COLOURS[p] })));
      t.append($('tr', {}, $('td', {}, c.name), $('td', { class: 'num' }, int(pc.time_cycle)), ...parts.map(p => $('td', { class: 'num' }, bytes(pc[p]))), $('td', {}, bar)));
    }
    sched.append(t);
    const lg = $('div', { class: 'legend' });
    parts.forEach(p => lg.append($('span', {}, $('i', { style: 'background:' + USE_COLOURS[p] }), p)));
    sched.append(lg);
  }
  view.set(0, view.full);

  // Energy by cause, by operator kind (the CNs' own energy), by transfer cause.
  const en = sec('energy', 'Energy');
  const byCause = Object.entries(R.energy_breakdown_pj);
  const byKind = R.kinds.map(k => [k, 0]), byTransfer = R.causes.map(k => [k, 0]);
  const cns = R.cns, tr = R.transfers;
  for (let i = 0; i < cns.op.length; i++) byKind[R.ops.kind[cns.op[i]]][1] += cns.energy_pj[i];
  for (let i = 0; i < tr.start.length; i++) byTransfer[tr.cause[i]][1] += tr.energy_pj[i];
  const sum = a => a.reduce((s, e) => s + e[1], 0);
  en.append($('div', { class: 'flex' },
    $('div', {}, $('h3', {}, 'By cause (total ' + joules(R.energy_pj) + ')'), barTable(byCause, R.energy_pj, {}, joules)),
    $('div', {}, $('h3', {}, 'Computation nodes by operator kind (MACs, on-chip memory, streamed operands)'), barTable(byKind.sort((a, b) => b[1] - a[1]), sum(byKind), KIND_COLOURS, joules)),
    $('div', {}, $('h3', {}, 'Transfers by cause (read, link, write)'), barTable(byTransfer.sort((a, b) => b[1] - a[1]), sum(byTransfer), CAUSE_COLOURS, joules))));

  if (R.training) {
    const t = sec('training', 'Training step: work and memory');
    t.append(kvTable(flatRows(R.training, '', [])));
  }
  return hooks;
}

/// The Gantt chart: one row per core then per link. Exact rectangles (with tooltips) while few are in view,
/// per pixel column otherwise.
function gantt(parent, R, view, width) {
  const left = Math.min(220, 12 + 7 * Math.max(...R.cores.map(c => (c.name + c.type).length + 3), ...R.links.map(l => l.name.length), 4));
  const rowH = 22, top = 6, axisH = 30;
  const nrows = R.cores.length + R.links.length;
  const height = top + nrows * rowH + axisH;
  const [c, g] = hidpiCanvas(width, height);
  c.dataset.role = 'gantt';
  parent.append(c);
  const plotW = width - left - 10;
  const cns = R.cns, tr = R.transfers;
  // Per row: item indices sorted by start, and the longest item (visible items start after t0 - longest).
  const rows = [];
  for (let r = 0; r < nrows; r++) rows.push({ idx: [], maxDur: 0, isLink: r >= R.cores.length });
  for (let i = 0; i < cns.start.length; i++) rows[cns.core[i]].idx.push(i);
  for (let i = 0; i < tr.start.length; i++) rows[R.cores.length + tr.link[i]].idx.push(i);
  for (const row of rows) {
    const a = row.isLink ? tr : cns;
    row.start = a.start; row.dur = a.dur;
    row.idx.sort((x, y) => a.start[x] - a.start[y]);
    for (const i of row.idx) row.maxDur = Math.max(row.maxDur, a.dur[i]);
  }
  const kindColour = R.kinds.map((k, i) => colourOf(KIND_COLOURS, k, i));
  const causeColour = R.causes.map((k, i) => colourOf(CAUSE_COLOURS, k, i));
  const LIMIT = 6000;  // exact rectangles drawn at most
  let drawn = [];      // exact mode: [x, y, w, h, isLink, index] for hit-testing
  let bins = null;     // aggregated mode: per row, per column: count
  const X = t => left + plotW * (t - view.t0) / (view.t1 - view.t0);
  function visible(row) {
    const from = lowerBound(row.start, view.t0 - row.maxDur, row.idx), to = lowerBound(row.start, view.t1, row.idx);
    return [from, to];
  }
  function draw() {
    g.clearRect(0, 0, width, height);
    g.font = '11px sans-serif';
    let inView = 0;
    for (const row of rows) { const [a, b] = visible(row); inView += b - a; }
    const exact = inView <= LIMIT;
    drawn = []; bins = exact ? null : [];
    let cnRects = 0, transferRects = 0;
    rows.forEach((row, r) => {
      const y = top + r * rowH;
      g.fillStyle = r % 2 ? '#f4f4f4' : '#fafafa';
      g.fillRect(left, y, plotW, rowH - 2);
      g.fillStyle = '#222'; g.textAlign = 'right'; g.textBaseline = 'middle';
      g.fillText(r < R.cores.length ? R.cores[r].name + ' (' + R.cores[r].type + ')' : R.links[r - R.cores.length].name, left - 6, y + rowH / 2);
      const [a, b] = visible(row);
      const bar = rowH - 4;
      if (exact) {
        for (let k = a; k < b; k++) {
          const i = row.idx[k];
          const s = row.start[i], e = s + row.dur[i];
          if (e <= view.t0) continue;
          const x0 = Math.max(left, X(s)), x1 = Math.min(left + plotW, X(e));
          const w = Math.max(1, x1 - x0);
          let h = bar;
          if (row.isLink) { h = Math.max(2, bar * tr.share[i]); g.fillStyle = causeColour[tr.cause[i]]; transferRects++; }
          else { g.fillStyle = kindColour[R.ops.kind[cns.op[i]]]; cnRects++; }
          g.fillRect(x0, y + 1 + bar - h, w, h);
          drawn.push([x0, y + 1 + bar - h, w, h, row.isLink, i]);
        }
      } else {
        // Per pixel column: busy share (links: bandwidth share) and the dominant category.
        const ncat = row.isLink ? R.causes.length : R.kinds.length;
        const load = new Float64Array(plotW), cat = new Float64Array(plotW * ncat), count = new Uint32Array(plotW);
        const per = (view.t1 - view.t0) / plotW;
        for (let k = a; k < b; k++) {
          const i = row.idx[k];
          const s = Math.max(view.t0, row.start[i]), e = Math.min(view.t1, row.start[i] + row.dur[i]);
          if (e <= s) continue;
          const level = row.isLink ? tr.share[i] : 1, kc = row.isLink ? tr.cause[i] : R.ops.kind[cns.op[i]];
          const c0 = Math.floor((s - view.t0) / per), c1 = Math.min(plotW - 1, Math.floor((e - view.t0) / per));
          for (let col = c0; col <= c1; col++) {
            const lo = view.t0 + col * per, part = (Math.min(lo + per, e) - Math.max(lo, s)) / per * level;
            if (part <= 0) continue;
            load[col] += part; cat[col * ncat + kc] += part; count[col]++;
          }
        }
        const colours = row.isLink ? causeColour : kindColour;
        for (let col = 0; col < plotW; col++) {
          if (load[col] <= 0) continue;
          let best = 0;
          for (let q = 1; q < ncat; q++) if (cat[col * ncat + q] > cat[col * ncat + best]) best = q;
          const h = Math.max(1, bar * Math.min(1, load[col]));
          g.fillStyle = colours[best];
          g.fillRect(left + col, y + 1 + bar - h, 1, h);
        }
        bins.push({ load: load, count: count });
      }
    });
    // Time axis.
    const ay = top + nrows * rowH;
    g.strokeStyle = '#333'; g.beginPath(); g.moveTo(left, ay); g.lineTo(left + plotW, ay); g.stroke();
    g.fillStyle = '#222'; g.textAlign = 'center'; g.textBaseline = 'top';
    for (const t of ticks(view.t0, view.t1, 8)) {
      const x = X(t);
      g.beginPath(); g.moveTo(x, ay); g.lineTo(x, ay + 4); g.stroke();
      g.fillText(si(t, '', 4).trim(), x, ay + 6);
    }
    g.textAlign = 'left';
    g.fillText('cycles', left + plotW - 40, ay + 18);
    c.dataset.mode = exact ? 'exact' : 'aggregated';
    c.dataset.cnRects = cnRects;
    c.dataset.transferRects = transferRects;
    c.dataset.inView = inView;
    c.dataset.t0 = view.t0;
    c.dataset.t1 = view.t1;
  }
  view.listeners.push(draw);
  attachZoom(c, view, () => [left, plotW]);
  function describe(isLink, i) {
    if (!isLink) {
      const op = cns.op[i], streamed = ['I1', 'I2', 'O'].filter((s, b) => cns.streamed[i] & (1 << b));
      return R.ops.name[op] + cns.tile[i] + '\n' +
        'operator kind ' + R.kinds[R.ops.kind[op]] + ', phase ' + R.phases[R.ops.phase[op]] + '\n' +
        'core ' + R.cores[cns.core[i]].name + ': cycles ' + int(cns.start[i]) + ' – ' + int(cns.start[i] + cns.dur[i]) + ' (' + int(cns.dur[i]) + ' cycles)\n' +
        'energy ' + joules(cns.energy_pj[i]) + ', ' + int(cns.macs[i]) + ' MACs, bound: ' + (R.bounds[cns.bound[i]] || '–') + '\n' +
        'operands: ' + R.ops.operands[op].map(t => R.tensors[t]).join(', ') +
        (streamed.length ? '\nstreamed from off chip: ' + streamed.join(', ') : '');
    }
    const forCn = tr.cn[i] >= 0 ? R.ops.name[cns.op[tr.cn[i]]] + cns.tile[tr.cn[i]] : '–';
    return 'transfer (' + R.causes[tr.cause[i]] + '): ' + (tr.tensor[i] >= 0 ? R.tensors[tr.tensor[i]] : '–') + '\n' +
      R.endpoints[tr.from[i]] + ' → ' + R.endpoints[tr.to[i]] + ' over ' + R.links[tr.link[i]].name + '\n' +
      'cycles ' + int(tr.start[i]) + ' – ' + int(tr.start[i] + tr.dur[i]) + ' (' + int(tr.dur[i]) + ' cycles)\n' +
      int(tr.bits[i]) + ' bits (' + bytes(tr.bits[i] / 8) + '), ' + (100 * tr.share[i]).toPrecision(3) + ' % of the link\n' +
      'energy ' + joules(tr.energy_pj[i]) + '\nfor ' + forCn;
  }
  c.addEventListener('mousemove', ev => {
    if (c.dragging) return;
    const [x, y] = canvasPoint(c, ev);
    if (bins) {
      const r = Math.floor((y - top) / rowH), col = Math.floor(x - left);
      if (r < 0 || r >= nrows || col < 0 || col >= plotW) return hideTip();
      const t = view.t0 + (col + 0.5) * (view.t1 - view.t0) / plotW;
      const b = bins[r];
      return showTip(ev, (r < R.cores.length ? R.cores[r].name : R.links[r - R.cores.length].name) + ' around cycle ' + int(t) + '\n' +
        b.count[col] + ' item(s) in this pixel column, ' + (100 * Math.min(1, b.load[col])).toFixed(0) + ' % ' +
        (r < R.cores.length ? 'busy' : 'of the bandwidth') + '\nzoom in (wheel) for each computation node and transfer');
    }
    // The rectangle under the pointer; else one within half a pixel (1-pixel slivers stay hoverable).
    for (const slack of [0, 0.5]) {
      for (let k = drawn.length - 1; k >= 0; k--) {
        const d = drawn[k];
        if (x >= d[0] - slack && x <= d[0] + d[2] + slack && y >= d[1] - 1 && y <= d[1] + d[3] + 1) return showTip(ev, describe(d[4], d[5]));
      }
    }
    hideTip();
  });
  c.addEventListener('mouseleave', hideTip);
  return {
    canvas: c,
    /// Viewport coordinates of the middle of CN i's rectangle (exact mode), or null.
    cnCenter(i) {
      const d = drawn.find(q => !q[4] && q[5] === i);
      if (!d) return null;
      const b = c.getBoundingClientRect();
      return [b.left + d[0] + d[2] / 2, b.top + d[1] + d[3] / 2];
    },
    cnName: i => R.ops.name[cns.op[i]] + cns.tile[i],
    /// The CNs drawn as rectangles now (exact mode), widest first, at most `n`.
    drawnCns: n => drawn.filter(q => !q[4]).sort((p, q) => q[2] - p[2]).slice(0, n).map(q => q[5]),
  };
}

/// Wheel zooms around the pointer, drag pans, double-click shows everything (Gantt and memory panels alike).
function attachZoom(c, view, plotArea) {
  c.addEventListener('wheel', ev => {
    ev.preventDefault();
    const [left, plotW] = plotArea();
    const [x] = canvasPoint(c, ev);
    const f = Math.min(1, Math.max(0, (x - left) / plotW));
    const t = view.t0 + f * (view.t1 - view.t0);
    const span = (view.t1 - view.t0) * Math.pow(1.0015, ev.deltaY);
    view.set(t - f * span, t - f * span + span);
  }, { passive: false });
  let from = null;
  c.addEventListener('mousedown', ev => { from = [ev.clientX, view.t0, view.t1]; });
  window.addEventListener('mouseup', () => { from = null; c.dragging = false; });
  window.addEventListener('mousemove', ev => {
    if (!from || !c.isConnected) return;  // a chart replaced by another click keeps no effect
    const [, plotW] = plotArea();
    const dt = (ev.clientX - from[0]) / plotW * (from[2] - from[1]);
    if (Math.abs(ev.clientX - from[0]) > 2) { c.dragging = true; hideTip(); }
    view.set(from[1] - dt, from[2] - dt);
  });
  c.addEventListener('dblclick', () => view.set(0, view.full));
}

/// Data held in one memory over the time in view: exact steps when few, else per pixel column its range.
function memoryPanel(parent, title, m, view, width) {
  const left = 80, plotW = width - left - 10, h = 110, top = 8;
  const t = m.memory.t, v = m.memory.bytes;
  const peak = m.peak_bytes;
  const showCap = m.capacity_bytes > 0 && (peak === 0 || m.capacity_bytes < 4 * peak);
  parent.append($('div', { class: 'muted' }, title + ' — peak ' + bytes(peak) + ', capacity ' + bytes(m.capacity_bytes) + (showCap ? ' (dashed)' : ' (off scale)')));
  const [c, g] = hidpiCanvas(width, h + top + 22);
  c.dataset.role = 'memory';
  parent.append(c);
  const ymax = Math.max(peak, showCap ? m.capacity_bytes : 0, 8) * 1.08;
  const Y = b => top + h - h * b / ymax;
  const idx = Array.from(t.keys());
  const stepAt = time => lowerBound(t, time + 1, idx) - 1;
  const valueAt = time => { const k = stepAt(time); return k >= 0 ? v[k] : 0; };
  // Cores: the bytes of each use, stacked in USE_COLOURS' order; per pixel column the step holding the most.
  const byUse = m.memory.by_use || {};
  const uses = Object.keys(USE_COLOURS).filter(u => byUse[u]);
  function drawStack(X) {
    const segs = [];  // [x0, x1, step]
    let k = stepAt(view.t0);
    const end = lowerBound(t, view.t1, idx);
    let from = left;
    if (end - k <= 2 * plotW) {
      for (let j = Math.max(k + 1, 0); j < end; j++) { const x = X(t[j]); if (k >= 0 && x > from) segs.push([from, x, k]); from = x; k = j; }
      if (k >= 0) segs.push([from, left + plotW, k]);
    } else {
      const per = (view.t1 - view.t0) / plotW;
      let j = Math.max(k + 1, 0);
      for (let col = 0; col < plotW; col++) {
        const e = view.t0 + (col + 1) * per;
        let best = k;
        for (; j < end && t[j] < e; j++) { k = j; if (best < 0 || v[j] > v[best]) best = j; }
        if (best >= 0) segs.push([left + col, left + col + 1, best]);
      }
    }
    for (const [x0, x1, s] of segs) {
      let base = 0;
      for (const u of uses) {
        const b = byUse[u][s];
        if (b > 0) { g.fillStyle = USE_COLOURS[u]; g.fillRect(x0, Y(base + b), x1 - x0 + 0.5, Y(base) - Y(base + b)); }
        base += b;
      }
    }
  }
  function draw() {
    g.clearRect(0, 0, width, h + top + 22);
    g.fillStyle = '#fafafa'; g.fillRect(left, top, plotW, h);
    g.strokeStyle = '#999'; g.strokeRect(left, top, plotW, h);
    g.font = '10px sans-serif'; g.fillStyle = '#222'; g.textAlign = 'right'; g.textBaseline = 'middle';
    for (const q of ticks(0, ymax, 4)) { g.fillText(bytes(q), left - 6, Y(q)); }
    const X = time => left + plotW * (time - view.t0) / (view.t1 - view.t0);
    if (uses.length) drawStack(X);
    g.strokeStyle = '#1f77b4'; g.lineWidth = 1.2; g.beginPath();
    let cur = valueAt(view.t0);
    g.moveTo(left, Y(cur));
    let k = lowerBound(t, view.t0 + 1e-9, idx);
    const end = lowerBound(t, view.t1, idx);
    if (end - k <= 2 * plotW) {
      for (; k < end; k++) { const x = X(t[k]); g.lineTo(x, Y(cur)); cur = v[k]; g.lineTo(x, Y(cur)); }
    } else {
      const per = (view.t1 - view.t0) / plotW;
      for (let col = 0; col < plotW; col++) {
        const e = view.t0 + (col + 1) * per;
        let lo = cur, hi = cur;
        for (; k < end && t[k] < e; k++) { cur = v[k]; lo = Math.min(lo, cur); hi = Math.max(hi, cur); }
        g.lineTo(left + col, Y(hi)); if (lo !== hi) g.lineTo(left + col, Y(lo)); g.lineTo(left + col, Y(cur));
      }
    }
    g.lineTo(left + plotW, Y(cur)); g.stroke(); g.lineWidth = 1;
    if (showCap) {
      g.strokeStyle = '#d62728'; g.setLineDash([4, 3]); g.beginPath();
      g.moveTo(left, Y(m.capacity_bytes)); g.lineTo(left + plotW, Y(m.capacity_bytes)); g.stroke(); g.setLineDash([]);
    }
    g.textAlign = 'center'; g.textBaseline = 'top'; g.fillStyle = '#222';
    for (const q of ticks(view.t0, view.t1, 8)) g.fillText(si(q, '', 4).trim(), X(q), top + h + 4);
  }
  view.listeners.push(draw);
  attachZoom(c, view, () => [left, plotW]);
  c.addEventListener('mousemove', ev => {
    if (c.dragging) return;
    const [x] = canvasPoint(c, ev);
    if (x < left || x > left + plotW) return hideTip();
    const time = view.t0 + (x - left) / plotW * (view.t1 - view.t0);
    const k = stepAt(time);
    const parts = k >= 0 ? uses.filter(u => byUse[u][k] > 0).map(u => '\n  ' + u + ' ' + bytes(byUse[u][k])).join('') : '';
    showTip(ev, title + '\ncycle ' + int(time) + ': ' + bytes(valueAt(time)) + ' held (' + int(valueAt(time)) + ' B)' + parts);
  });
  c.addEventListener('mouseleave', hideTip);
}

/*MONET_REPORT_SEARCH_SCRIPT*/
// ============================================================================================ the page
const main = document.getElementById('main');
main.replaceChildren();
document.title = D.experiment + ' — monet ' + (D.kind === 'search' ? 'search' : 'run');
document.getElementById('title').textContent = D.experiment + (D.kind === 'search' ? ': search (' + D.plugin + ')' : ': run');
const nav = document.getElementById('nav');
const links = D.kind === 'search' ? [['summary', 'Search'], ['points', 'Points and front'], ['convergence', 'Hypervolume']]
  : [['summary', 'Summary'], ['schedule', 'Schedule and memory'], ['energy', 'Energy']].concat(D.training ? [['training', 'Training']] : []);
for (const [id, text] of links) nav.append($('a', { href: '#' + id }, text));
const hooks = D.kind === 'search' ? renderSearch(main, D) : renderRun(main, D, true);
Object.assign(window.monetReport, hooks, { kind: D.kind, data: D, readyMs: performance.now(), ready: true });
})();
