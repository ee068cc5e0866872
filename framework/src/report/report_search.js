/* The report page's views of a search (points, front, hypervolume), put at report.js's search marker by
   report_template() (html_report.cpp); it uses report.js's helpers. This header comment is not copied into the page. */
// ========================================================================================= a search
function renderSearch(root, S) {
  const P = S.points, n = P.feasible.length, m = S.objectives.length;
  const onFront = new Uint8Array(n);
  for (const i of S.front) onFront[i] = 1;
  const hooks = {};
  const sec = (id, title) => { const s = $('section', { id: id }, $('h2', {}, title)); root.append(s); return s; };
  const feasibleCount = P.feasible.reduce((a, b) => a + b, 0);
  const summary = sec('summary', 'Search');
  summary.append(kvTable([
    ['experiment', S.experiment + ' (seed ' + S.seed + ', plugin ' + S.plugin + ')'],
    ['space', S.genes.length + ' genes (' + S.genes.map(g => g.name).join(', ') + '), ' + int(S.space_size) + ' points'],
    ['objectives', S.objectives.map(o => o.key + ' [' + o.unit + ']' + (o.maximise ? ' (maximised)' : '')).join(', ') +
                       ' (the others minimised)'],
    ['constraints', S.constraints.join('; ') || '–'],
    ['evaluated', int(n) + ' distinct points in ' + int(S.hypervolume_per_batch.length) + ' batches, ' + int(feasibleCount) + ' feasible' + (S.stopped ? ' (STOPPED)' : '')],
    ['Pareto front', int(S.front.length) + ' non-dominated feasible points'],
    ['hypervolume', S.hypervolume_per_batch.length ? (+S.hypervolume_per_batch[S.hypervolume_per_batch.length - 1].toPrecision(5)) + ' (normalised by the archive, reference 1.1)' : '–'],
    ['monet', S.provenance.monet_version + ' (' + S.provenance.git_commit + ')'],
  ]));

  // Scatter: axis choice, filters by feasibility and gene values; hover = genes + objectives; click = details.
  const sc = sec('points', 'Evaluated points and the Pareto front');
  const xSel = $('select'), ySel = $('select');
  S.objectives.forEach((o, k) => { xSel.append($('option', { value: k }, o.key)); ySel.append($('option', { value: k }, o.key)); });
  ySel.value = m > 1 ? 1 : 0;
  const showInfeasible = $('input', { type: 'checkbox' }); showInfeasible.checked = true;
  const frontOnly = $('input', { type: 'checkbox' });
  const logX = $('input', { type: 'checkbox' }), logY = $('input', { type: 'checkbox' });
  const geneSel = S.genes.map(gn => {
    const s = $('select', {}, $('option', { value: -1 }, 'any'));
    gn.values.forEach((v, i) => s.append($('option', { value: i }, v)));
    return s;
  });
  const countText = $('span', { class: 'muted' });
  sc.append($('div', { class: 'controls' },
    $('label', {}, 'x ', xSel), $('label', {}, 'y ', ySel),
    $('label', {}, logX, ' log x'), $('label', {}, logY, ' log y'),
    $('label', {}, showInfeasible, ' infeasible points'), $('label', {}, frontOnly, ' front only'), countText));
  if (S.genes.length) sc.append($('div', { class: 'controls' }, 'genes: ', ...S.genes.map((gn, k) => $('label', {}, gn.name + ' ', geneSel[k]))));
  const W = Math.max(560, Math.min(900, (root.clientWidth || 900) - 40)), H = 520;
  const [c, g] = hidpiCanvas(W, H);
  c.dataset.role = 'scatter';
  sc.append(c);
  sc.append($('div', { class: 'legend' }, $('span', {}, $('i', { style: 'background:#1f77b4' }), 'Pareto front'),
    $('span', {}, $('i', { style: 'background:#9a9a9a' }), 'feasible'), $('span', {}, $('i', { style: 'background:#d62728' }), 'infeasible (cross)'),
    $('span', {}, $('i', { style: 'background:#fff;border:2px solid #000;width:7px;height:7px' }), 'kept in best/ (click it for its schedule)'),
    $('span', {}, $('i', { style: 'background:#000;border-radius:50%;width:4px;height:4px' }), 'kept in front/ (click, then open its report; shift-click a second point to compare)')));
  // With 3+ objectives, every objective at once: parallel coordinates of the same points (each axis from the best
  // shown value at the bottom to the worst at the top).
  let pc = null, pg = null;
  if (m >= 3) {
    sc.append($('h3', {}, 'All objectives (parallel coordinates of the points shown; each axis: best at the bottom)'));
    [pc, pg] = hidpiCanvas(W, 260);
    pc.dataset.role = 'parallel';
    sc.append(pc);
  }
  const details = $('div', { class: 'details', id: 'details' }, $('span', { class: 'muted' }, 'Click a point for its details.'));
  sc.append(details);
  let shown = [];  // [x, y, i] of the points drawn
  const L = 96, T = 14, PW = W - L - 20, PH = H - T - 52;
  function pointText(i) {
    const lines = S.genes.map((gn, k) => gn.name + ' = ' + gn.values[P.genes[k][i]]);
    S.objectives.forEach((o, k) => lines.push(o.key + ': ' + objectiveText(P.objectives[k][i], o.unit)));
    lines.push(P.feasible[i] ? (onFront[i] ? 'feasible, on the Pareto front' : 'feasible') : 'infeasible: ' + S.reasons[P.reason[i]]);
    return 'point ' + i + ' (batch ' + P.batch[i] + ')\n' + lines.join('\n');
  }
  function draw() {
    const a = +xSel.value, b = +ySel.value, lx = logX.checked, ly = logY.checked;
    const [xs, xu] = objectiveScale(S.objectives[a].unit), [ys, yu] = objectiveScale(S.objectives[b].unit);
    const fx = v => lx ? Math.log10(v * xs) : v * xs, fy = v => ly ? Math.log10(v * ys) : v * ys;
    const keep = [];
    for (let i = 0; i < n; i++) {
      const va = P.objectives[a][i], vb = P.objectives[b][i];
      if (va === null || vb === null || (lx && va <= 0) || (ly && vb <= 0)) continue;
      if (!P.feasible[i] && !showInfeasible.checked) continue;
      if (frontOnly.checked && !onFront[i]) continue;
      let ok = true;
      for (let k = 0; k < geneSel.length && ok; k++) { const gv = +geneSel[k].value; if (gv >= 0 && P.genes[k][i] !== gv) ok = false; }
      if (ok) keep.push(i);
    }
    let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
    for (const i of keep) {
      const x = fx(P.objectives[a][i]), y = fy(P.objectives[b][i]);
      x0 = Math.min(x0, x); x1 = Math.max(x1, x); y0 = Math.min(y0, y); y1 = Math.max(y1, y);
    }
    if (!isFinite(x0)) { x0 = 0; x1 = 1; y0 = 0; y1 = 1; }
    const padX = (x1 - x0) * 0.04 || Math.abs(x0) * 0.05 || 1, padY = (y1 - y0) * 0.04 || Math.abs(y0) * 0.05 || 1;
    x0 -= padX; x1 += padX; y0 -= padY; y1 += padY;
    const X = v => L + PW * (v - x0) / (x1 - x0), Y = v => T + PH - PH * (v - y0) / (y1 - y0);
    g.clearRect(0, 0, W, H);
    g.strokeStyle = '#999'; g.strokeRect(L, T, PW, PH);
    g.font = '10px sans-serif'; g.fillStyle = '#222';
    g.textAlign = 'center'; g.textBaseline = 'top';
    const lab = (v, log, unit) => axisText(log ? Math.pow(10, v) : v, unit);
    for (const t of ticks(x0, x1, 6)) { g.fillText(lab(t, lx, xu), X(t), T + PH + 4); }
    g.textAlign = 'right'; g.textBaseline = 'middle';
    for (const t of ticks(y0, y1, 6)) { g.fillText(lab(t, ly, yu), L - 5, Y(t)); }
    g.font = '12px sans-serif'; g.textAlign = 'center'; g.textBaseline = 'alphabetic';
    g.fillText(S.objectives[a].key, L + PW / 2, H - 8);
    g.save(); g.translate(14, T + PH / 2); g.rotate(-Math.PI / 2); g.fillText(S.objectives[b].key, 0, 0); g.restore();
    shown = [];
    let front = 0;
    for (const layer of [0, 1, 2]) {
      for (const i of keep) {
        const kind = onFront[i] ? 2 : (P.feasible[i] ? 1 : 0);
        if (kind !== layer) continue;
        const x = X(fx(P.objectives[a][i])), y = Y(fy(P.objectives[b][i]));
        shown.push([x, y, i]);
        if (kind === 0) {
          g.strokeStyle = '#d62728'; g.lineWidth = 0.9; g.beginPath();
          g.moveTo(x - 2.5, y - 2.5); g.lineTo(x + 2.5, y + 2.5); g.moveTo(x + 2.5, y - 2.5); g.lineTo(x - 2.5, y + 2.5); g.stroke();
        } else if (kind === 1) {
          g.fillStyle = 'rgba(140,140,140,0.6)'; g.beginPath(); g.arc(x, y, 2.2, 0, 6.2832); g.fill();
        } else {
          front++;
          g.fillStyle = '#1f77b4'; g.strokeStyle = '#fff'; g.lineWidth = 0.8; g.beginPath(); g.arc(x, y, 4, 0, 6.2832); g.fill(); g.stroke();
        }
      }
    }
    g.lineWidth = 1;
    if (S.best !== null) {
      const s = shown.find(q => q[2] === S.best);
      if (s) { g.strokeStyle = '#000'; g.lineWidth = 2; g.beginPath(); g.arc(s[0], s[1], 7, 0, 6.2832); g.stroke(); g.lineWidth = 1; }
    }
    for (const m of [selected, compared]) {
      const s = m === null ? null : shown.find(q => q[2] === m);
      if (s) { g.strokeStyle = '#ff7f0e'; g.lineWidth = 2; g.strokeRect(s[0] - 6, s[1] - 6, 12, 12); g.lineWidth = 1; }
    }
    // Points whose full results were kept (front/point-I/): a small black dot in their centre.
    g.fillStyle = '#000';
    for (const s of shown) if ((S.kept || {})[s[2]]) { g.beginPath(); g.arc(s[0], s[1], 1.8, 0, 6.2832); g.fill(); }
    c.dataset.points = shown.length;
    c.dataset.front = front;
    if (pg) drawParallel(keep);
    countText.textContent = int(shown.length) + ' of ' + int(n) + ' points shown, ' + front + ' on the front';
  }
  function drawParallel(keep) {
    const PL = 60, PR = 60, PT = 34, PB = 24, w = W - PL - PR, h = 260 - PT - PB;
    const lo = new Array(m).fill(Infinity), hi = new Array(m).fill(-Infinity);
    for (const i of keep) for (let k = 0; k < m; k++) { const v = P.objectives[k][i]; if (v !== null) { lo[k] = Math.min(lo[k], v); hi[k] = Math.max(hi[k], v); } }
    const AX = k => PL + w * k / (m - 1), AY = (k, v) => {
      const f = hi[k] > lo[k] ? (v - lo[k]) / (hi[k] - lo[k]) : 0.5;
      return PT + h - h * (S.objectives[k].maximise ? 1 - f : f);  // the best at the bottom, also of a maximised one
    };
    pg.clearRect(0, 0, W, 260);
    const line = (i, style, width) => {
      pg.strokeStyle = style; pg.lineWidth = width; pg.beginPath();
      for (let k = 0; k < m; k++) { const v = P.objectives[k][i]; if (v === null) return; const y = AY(k, v); if (k) pg.lineTo(AX(k), y); else pg.moveTo(AX(k), y); }
      pg.stroke();
    };
    for (const layer of [0, 1, 2]) {
      for (const i of keep) {
        const kind = onFront[i] ? 2 : (P.feasible[i] ? 1 : 0);
        if (kind === layer) line(i, ['rgba(214,39,40,0.15)', 'rgba(140,140,140,0.18)', 'rgba(31,119,180,0.9)'][kind], kind === 2 ? 1.4 : 0.7);
      }
    }
    if (selected !== null && keep.includes(selected)) line(selected, '#ff7f0e', 2.5);
    pg.lineWidth = 1; pg.font = '10px sans-serif'; pg.fillStyle = '#222'; pg.textAlign = 'center';
    for (let k = 0; k < m; k++) {
      const [scale, unit] = objectiveScale(S.objectives[k].unit);
      pg.strokeStyle = '#555'; pg.beginPath(); pg.moveTo(AX(k), PT); pg.lineTo(AX(k), PT + h); pg.stroke();
      pg.fillText(S.objectives[k].key, AX(k), 12);
      if (isFinite(lo[k])) {
        const [top, bottom] = S.objectives[k].maximise ? [lo[k], hi[k]] : [hi[k], lo[k]];
        pg.fillText(axisText(top * scale, unit), AX(k), PT - 6); pg.fillText(axisText(bottom * scale, unit), AX(k), PT + h + 14);
      }
    }
    pc.dataset.lines = keep.length;
  }
  const nearest = (x, y) => {
    let best = null, bd = 64;  // within 8 px
    for (const s of shown) { const d = (s[0] - x) ** 2 + (s[1] - y) ** 2; if (d <= bd) { bd = d; best = s; } }
    return best;
  };
  let selected = null, compared = null;
  const keptDir = i => i === S.best ? 'best' : (S.kept || {})[i];
  const reportLink = i => $('a', { href: keptDir(i) + '/report.html', target: '_blank' }, keptDir(i) + '/report.html');
  // Shift-click a second point: the two side by side, differing genes and the better objective marked.
  function compare(a, b) {
    selected = b; compared = a;
    draw();
    details.replaceChildren();
    details.append($('h3', {}, 'Point ' + a + ' and point ' + b + ' side by side'));
    const t = $('table', { class: 'grid', 'data-role': 'compare' });
    t.append($('tr', {}, $('th', {}, ''), $('th', {}, 'point ' + a), $('th', {}, 'point ' + b)));
    S.genes.forEach((gn, k) => {
      const va = gn.values[P.genes[k][a]], vb = gn.values[P.genes[k][b]];
      const cls = va === vb ? '' : 'diff';
      t.append($('tr', {}, $('td', {}, gn.name), $('td', { class: cls }, va), $('td', { class: cls }, vb)));
    });
    S.objectives.forEach((o, k) => {
      const va = P.objectives[k][a], vb = P.objectives[k][b];
      const better = (x, y) => x !== null && (y === null || x < y) ? 'better' : '';
      t.append($('tr', {}, $('td', {}, o.key + ' (' + (va !== null && vb !== null && va > 0 ? (vb / va).toPrecision(3) + '×' : '–') + ')'),
        $('td', { class: 'num ' + better(va, vb) }, objectiveText(va, o.unit)), $('td', { class: 'num ' + better(vb, va) }, objectiveText(vb, o.unit))));
    });
    t.append($('tr', {}, $('td', {}, 'feasible'), $('td', {}, P.feasible[a] ? 'yes' : 'no'), $('td', {}, P.feasible[b] ? 'yes' : 'no')));
    t.append($('tr', {}, $('td', {}, 'schedule'), $('td', {}, keptDir(a) ? reportLink(a) : 'not kept'), $('td', {}, keptDir(b) ? reportLink(b) : 'not kept')));
    details.append(t);
  }
  function select(i) {
    selected = i; compared = null;
    draw();
    details.replaceChildren();
    details.append($('h3', {}, 'Point ' + i + (onFront[i] ? ' (Pareto front)' : '') + (i === S.best ? ' — kept in best/' : keptDir(i) ? ' — kept in ' + keptDir(i) + '/' : '')));
    const rows = S.genes.map((gn, k) => [gn.name, gn.values[P.genes[k][i]]]);
    S.objectives.forEach((o, k) => rows.push([o.key, objectiveText(P.objectives[k][i], o.unit)]));
    rows.push(['feasible', P.feasible[i] ? 'yes' : 'no (violation ' + P.violation[i] + '): ' + S.reasons[P.reason[i]], P.feasible[i] ? '' : 'bad']);
    rows.push(['first asked for in batch', String(P.batch[i])]);
    details.append(kvTable(rows));
    details.append($('p', { class: 'muted' }, 'Shift-click another point to compare the two side by side.'));
    if (i !== S.best && keptDir(i)) {
      details.append($('p', {}, 'Its full results are in ' + keptDir(i) + '/ (results.json, schedule.csv, trace.json.gz …); its schedule: ', reportLink(i)));
    } else if (i === S.best && S.best_run) {
      details.append($('p', {}, 'Its full results are in best/ (results.json, schedule.csv, trace.json.gz …); its schedule:'));
      const box = $('div', { class: 'best-run' });
      details.append(box);
      window.monetReport.bestRun = renderRun(box, S.best_run, false);
    } else {
      details.append($('p', { class: 'muted' }, 'Only best/ and up to [output] front_points points of the front keep their ' +
        'schedules; to see this one, run the experiment without [space] and with these gene values (evaluations.csv has every point).'));
    }
  }
  c.addEventListener('mousemove', ev => {
    const [x, y] = canvasPoint(c, ev);
    const s = nearest(x, y);
    if (s) showTip(ev, pointText(s[2])); else hideTip();
  });
  c.addEventListener('mouseleave', hideTip);
  c.addEventListener('click', ev => {
    const [x, y] = canvasPoint(c, ev);
    const s = nearest(x, y);
    if (!s) return;
    if (ev.shiftKey && selected !== null && selected !== s[2]) compare(selected, s[2]); else select(s[2]);
  });
  for (const el of [xSel, ySel, showInfeasible, frontOnly, logX, logY, ...geneSel]) el.addEventListener('change', draw);
  draw();
  hooks.scatter = {
    canvas: c,
    pointCenter(i) {
      const s = shown.find(q => q[2] === i);
      if (!s) return null;
      const b = c.getBoundingClientRect();
      return [b.left + s[0], b.top + s[1]];
    },
    front: S.front, best: S.best,
  };

  // Hypervolume per batch.
  const hv = sec('convergence', 'Hypervolume per batch (generation)');
  const hvs = S.hypervolume_per_batch;
  const [hc, hg] = hidpiCanvas(W, 240);
  hc.dataset.role = 'hypervolume';
  hv.append(hc);
  const hL = 60, hT = 10, hW = W - hL - 20, hH = 240 - hT - 40;
  const hmax = Math.max(1e-12, ...hvs) * 1.05;
  hg.strokeStyle = '#999'; hg.strokeRect(hL, hT, hW, hH);
  hg.font = '10px sans-serif'; hg.fillStyle = '#222'; hg.textAlign = 'right'; hg.textBaseline = 'middle';
  for (const t of ticks(0, hmax, 4)) hg.fillText(+t.toPrecision(3), hL - 5, hT + hH - hH * t / hmax);
  hg.textAlign = 'center'; hg.textBaseline = 'top';
  const HX = b => hL + hW * (hvs.length > 1 ? b / (hvs.length - 1) : 0.5);
  for (const t of ticks(1, Math.max(1, hvs.length), 8)) if (Number.isInteger(t)) hg.fillText(t, HX(t - 1), hT + hH + 4);
  hg.fillText('batch', hL + hW / 2, hT + hH + 20);
  hg.strokeStyle = '#1f77b4'; hg.lineWidth = 1.6; hg.beginPath();
  hvs.forEach((v, b) => { const x = HX(b), y = hT + hH - hH * v / hmax; if (b) hg.lineTo(x, y); else hg.moveTo(x, y); });
  hg.stroke();
  hvs.forEach((v, b) => { hg.fillStyle = '#1f77b4'; hg.beginPath(); hg.arc(HX(b), hT + hH - hH * v / hmax, 2, 0, 6.2832); hg.fill(); });
  hc.addEventListener('mousemove', ev => {
    const [x] = canvasPoint(hc, ev);
    const b = Math.round(hvs.length > 1 ? (x - hL) / hW * (hvs.length - 1) : 0);
    if (b < 0 || b >= hvs.length) return hideTip();
    showTip(ev, 'batch ' + (b + 1) + ': hypervolume ' + hvs[b].toPrecision(5));
  });
  hc.addEventListener('mouseleave', hideTip);
  hooks.select = select;
  return hooks;
}

