// The app's attention heatmap (widgets.plot draws every figures.Heatmap with it): plotly's own
// heatmap figure dict, drawn on a canvas. Streamlit calls this function again, with the same
// parentElement, whenever a run sends new data, so a new sentence redraws in place; a plotly
// chart whose data changed is remounted (parsed, laid out and drawn anew).
//
// Reads data = {data: [trace], layout, config}:
//   trace:  z ({dtype: 'f4', bdata, shape}: plotly's typed array; NaN is empty, -inf is masked),
//           x, y (labels, escaped as plotly reads them), zmin, zmax, colorscale ([[p, colour]]),
//           reversescale, text (optional, one string per cell), meta.hover (row, column, value titles);
//   layout: title.text, height, margin {l, r, t, b}, plot_bgcolor, font.size;
//   config: filename (of the PNG); trace.meta.buttons: the titles of save-as-PNG and reset-zoom
//   (from the message catalogue).
// Hover names the cell, a drag zooms, a double click (or the reset button) zooms back out.

const INK = '#262730';
const PAD = 4;

const plain = (s) =>
  String(s ?? '').replace(/\u200b/g, '').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

function decode(z) {
  if (Array.isArray(z)) {
    const rows = z.length, cols = rows ? z[0].length : 0;
    return {rows, cols, v: Float32Array.from(z.flat(), (x) => (x === null ? NaN : x))};
  }
  const bin = atob(z.bdata), bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  const [rows, cols] = String(z.shape).split(',').map(Number);
  return {rows, cols, v: new Float32Array(bytes.buffer)};
}

function rgb(c) {
  if (c[0] === '#') {
    const n = parseInt(c.slice(1), 16);
    return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
  }
  return c.match(/[\d.]+/g).slice(0, 3).map(Number);
}

function palette(trace) {  // 256 colours, zmin to zmax
  let stops = trace.colorscale.map(([p, c]) => [Number(p), rgb(c)]);
  if (trace.reversescale) stops = stops.map(([p, c]) => [1 - p, c]).reverse();
  const out = new Uint8ClampedArray(256 * 3);
  for (let i = 0; i < 256; i++) {
    const t = i / 255;
    let j = 1;
    while (j < stops.length - 1 && stops[j][0] < t) j++;
    const [p0, c0] = stops[j - 1], [p1, c1] = stops[j];
    const f = p1 > p0 ? Math.min(1, Math.max(0, (t - p0) / (p1 - p0))) : 0;
    for (let k = 0; k < 3; k++) out[i * 3 + k] = c0[k] + f * (c1[k] - c0[k]);
  }
  return out;
}

function shade(st, z) {  // index into the palette
  const tr = st.spec.data[0], span = tr.zmax - tr.zmin || 1;
  return Math.round(Math.min(1, Math.max(0, (z - tr.zmin) / span)) * 255) * 3;
}

function cells(st) {  // one pixel per cell; empty and masked cells transparent (the plot's background shows)
  const {rows, cols, v} = st.m;
  const c = document.createElement('canvas');
  c.width = Math.max(1, cols);
  c.height = Math.max(1, rows);
  if (!rows || !cols) return c;
  const g = c.getContext('2d'), img = g.createImageData(cols, rows), px = img.data;
  for (let i = 0; i < v.length; i++) {
    if (!Number.isFinite(v[i])) continue;
    const k = shade(st, v[i]);
    px[i * 4] = st.pal[k];
    px[i * 4 + 1] = st.pal[k + 1];
    px[i * 4 + 2] = st.pal[k + 2];
    px[i * 4 + 3] = 255;
  }
  g.putImageData(img, 0, 0);
  return c;
}

function frame(st, W) {
  const L = st.spec.layout, m = L.margin || {};
  const H = L.height || 400;
  const x0 = m.l ?? 80, y0 = m.t ?? 80;
  return {W, H, x0, y0, pw: Math.max(10, W - x0 - (m.r ?? 70)), ph: Math.max(10, H - y0 - (m.b ?? 8))};
}

const fmt = (v) => (v !== 0 && Math.abs(v) < 1e-4 ? v.toExponential(3) : String(Number(v.toPrecision(4))));

function ticks(lo, hi) {
  const span = hi - lo || 1, raw = span / 4, mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((s) => s * mag).find((s) => s >= raw);
  const out = [];
  for (let t = Math.ceil(lo / step - 1e-9) * step; t <= hi + step * 1e-9; t += step) out.push(Math.abs(t) < step * 1e-9 ? 0 : t);
  return out;
}

function paint(g, st, f, titled) {  // titled: the title on the canvas too (the PNG); on screen it is text
  const {spec, view} = st, tr = spec.data[0], L = spec.layout;
  const fs = (L.font && L.font.size) || 11, font = st.font;
  const nr = view.r1 - view.r0, nc = view.c1 - view.c0;
  const cw = f.pw / Math.max(1, nc), ch = f.ph / Math.max(1, nr);
  g.fillStyle = '#fff';
  g.fillRect(0, 0, f.W, f.H);
  g.fillStyle = L.plot_bgcolor || '#fff';
  g.fillRect(f.x0, f.y0, f.pw, f.ph);
  if (nr > 0 && nc > 0) {
    g.imageSmoothingEnabled = false;
    g.drawImage(st.image, view.c0, view.r0, nc, nr, f.x0, f.y0, f.pw, f.ph);
  }
  g.fillStyle = INK;
  g.textBaseline = 'top';
  g.textAlign = 'left';
  g.font = `13px ${font}`;
  if (titled) g.fillText(plain(L.title && L.title.text), 2, 6);
  // labels, thinned where the cells are smaller than a line of text
  g.font = `${fs}px ${font}`;
  g.textBaseline = 'middle';
  const cstep = Math.max(1, Math.ceil((fs + 2) / cw)), rstep = Math.max(1, Math.ceil((fs + 2) / ch));
  for (let j = view.c0; j < view.c1; j += cstep) {
    g.save();
    g.translate(f.x0 + (j - view.c0 + 0.5) * cw, f.y0 - PAD);
    g.rotate(-Math.PI / 2);
    g.fillText(st.cols[j], 0, 0);
    g.restore();
  }
  g.textAlign = 'right';
  for (let i = view.r0; i < view.r1; i += rstep) g.fillText(st.rows[i], f.x0 - PAD, f.y0 + (i - view.r0 + 0.5) * ch);
  // one text per cell where asked for (values, or −∞ on masked cells) and where it fits
  if (tr.text && cw >= 16 && ch >= 11) {
    g.textAlign = 'center';
    g.font = `${(tr.textfont && tr.textfont.size) || 10}px ${font}`;
    for (let i = view.r0; i < view.r1; i++) {
      for (let j = view.c0; j < view.c1; j++) {
        const s = tr.text[i] && tr.text[i][j];
        if (!s) continue;
        const z = st.m.v[i * st.m.cols + j];
        let dark = false;
        if (Number.isFinite(z)) {
          const k = shade(st, z);
          dark = 0.299 * st.pal[k] + 0.587 * st.pal[k + 1] + 0.114 * st.pal[k + 2] < 140;
        }
        g.fillStyle = dark ? '#fff' : INK;
        g.fillText(s, f.x0 + (j - view.c0 + 0.5) * cw, f.y0 + (i - view.r0 + 0.5) * ch);
      }
    }
  }
  // the colour bar
  const bh = 0.8 * f.ph, bx = f.x0 + f.pw + 12, by = f.y0 + (f.ph - bh) / 2;
  for (let k = 0; k < 256; k++) {
    g.fillStyle = `rgb(${st.pal[k * 3]},${st.pal[k * 3 + 1]},${st.pal[k * 3 + 2]})`;
    g.fillRect(bx, by + bh - ((k + 1) * bh) / 256, 10, bh / 256 + 0.6);
  }
  g.fillStyle = INK;
  g.textAlign = 'left';
  g.font = `10px ${font}`;
  const span = tr.zmax - tr.zmin || 1;
  for (const t of ticks(tr.zmin, tr.zmax)) g.fillText(fmt(t), bx + 14, by + bh - ((t - tr.zmin) / span) * bh);
}

function draw(st) {
  const t0 = performance.now();
  const W = st.root.clientWidth || 600, f = frame(st, W), dpr = window.devicePixelRatio || 1;
  st.root.style.height = `${f.H}px`;
  const c = st.canvas;
  c.style.width = `${W}px`;
  c.style.height = `${f.H}px`;
  c.width = Math.round(W * dpr);
  c.height = Math.round(f.H * dpr);
  const g = c.getContext('2d');
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  paint(g, st, f, false);
  st.frame = f;
  st.width = W;
  st.reset.hidden = !zoomed(st);
  st.root.dataset.drawn = String(Number(st.root.dataset.drawn || 0) + 1);
  if (window.__prof) (window.__prof.charts ||= []).push([t0, performance.now()]);
}

const full = (st) => ({r0: 0, r1: st.m.rows, c0: 0, c1: st.m.cols});
const zoomed = (st) => st.view.r0 > 0 || st.view.c0 > 0 || st.view.r1 < st.m.rows || st.view.c1 < st.m.cols;

function cellAt(st, e) {  // [row, column] under the pointer (fractional), or null outside the cells
  const f = st.frame, r = st.canvas.getBoundingClientRect();
  const x = e.clientX - r.left - f.x0, y = e.clientY - r.top - f.y0;
  if (x < 0 || y < 0 || x >= f.pw || y >= f.ph) return null;
  const v = st.view;
  return [v.r0 + (y / f.ph) * (v.r1 - v.r0), v.c0 + (x / f.pw) * (v.c1 - v.c0)];
}

function hover(st, e) {
  const at = cellAt(st, e);
  if (st.drag) {
    const r = st.canvas.getBoundingClientRect(), b = st.box;
    const x = Math.max(st.frame.x0, Math.min(e.clientX - r.left, st.frame.x0 + st.frame.pw));
    const y = Math.max(st.frame.y0, Math.min(e.clientY - r.top, st.frame.y0 + st.frame.ph));
    Object.assign(b.style, {
      display: 'block', left: `${Math.min(x, st.drag.x)}px`, top: `${Math.min(y, st.drag.y)}px`,
      width: `${Math.abs(x - st.drag.x)}px`, height: `${Math.abs(y - st.drag.y)}px`,
    });
  }
  if (!at) {
    st.tip.style.display = 'none';
    return;
  }
  const [i, j] = at.map(Math.floor), z = st.m.v[i * st.m.cols + j], tr = st.spec.data[0];
  const [rt, ct, vt] = ((tr.meta && tr.meta.hover) || ['', '', '']).map(plain);
  const value = z === -Infinity ? '−∞' : Number.isFinite(z) ? fmt(z) : '';
  st.tip.textContent = `${rt}: ${st.rows[i]}\n${ct}: ${st.cols[j]}\n${vt}: ${value}`;
  const r = st.root.getBoundingClientRect();
  const left = Math.min(e.clientX - r.left + 14, r.width - st.tip.offsetWidth - 4);
  Object.assign(st.tip.style, {display: 'block', left: `${Math.max(0, left)}px`, top: `${e.clientY - r.top + 14}px`});
}

function png(st) {
  const f = st.frame, c = document.createElement('canvas');
  c.width = f.W * 2;
  c.height = f.H * 2;
  const g = c.getContext('2d');
  g.scale(2, 2);
  paint(g, st, f, true);
  c.toBlob((blob) => {
    const a = document.createElement('a');
    a.href = URL.createObjectURL(blob);
    a.download = `${(st.spec.config && st.spec.config.filename) || 'attention'}.png`;
    a.click();
    setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
  });
}

function button(bar, svg, onclick) {
  const b = document.createElement('button');
  b.type = 'button';
  b.className = 'attn-button';
  b.innerHTML = svg;
  b.addEventListener('click', onclick);
  bar.appendChild(b);
  return b;
}

const CAMERA =
  '<svg viewBox="0 0 24 24" width="16" height="16" fill="none" stroke="currentColor" stroke-width="2"><path d="M4 8h3l2-3h6l2 3h3v11H4z"/><circle cx="12" cy="13" r="3.5"/></svg>';
const HOME =
  '<svg viewBox="0 0 24 24" width="16" height="16" fill="none" stroke="currentColor" stroke-width="2"><path d="M3 11l9-7 9 7v9h-6v-6H9v6H3z"/></svg>';

function build(parent) {
  const root = document.createElement('div');
  root.className = 'attn-heatmap';
  const canvas = document.createElement('canvas');
  const tip = document.createElement('div');
  tip.className = 'attn-tip';
  const box = document.createElement('div');
  box.className = 'attn-box';
  const bar = document.createElement('div');
  bar.className = 'attn-bar';
  const title = document.createElement('div');
  title.className = 'attn-title';
  canvas.setAttribute('role', 'img');
  root.append(title, canvas, box, tip, bar);
  parent.appendChild(root);
  const st = {root, canvas, title, tip, box, font: getComputedStyle(parent).fontFamily || 'sans-serif'};
  st.reset = button(bar, HOME, () => {
    st.view = full(st);
    draw(st);
  });
  st.save = button(bar, CAMERA, () => png(st));
  canvas.addEventListener('mousemove', (e) => hover(st, e));
  canvas.addEventListener('mouseleave', () => {
    st.tip.style.display = 'none';
  });
  canvas.addEventListener('mousedown', (e) => {
    if (!cellAt(st, e)) return;
    const r = canvas.getBoundingClientRect();
    st.drag = {x: e.clientX - r.left, y: e.clientY - r.top, at: cellAt(st, e)};
    e.preventDefault();
  });
  const up = (e) => {
    if (!st.drag) return;
    const from = st.drag, r = canvas.getBoundingClientRect();
    st.drag = null;
    st.box.style.display = 'none';
    if (Math.hypot(e.clientX - r.left - from.x, e.clientY - r.top - from.y) < 6) return;
    const f = st.frame, v = st.view;
    const clampX = Math.max(0, Math.min(e.clientX - r.left - f.x0, f.pw - 1e-6));
    const clampY = Math.max(0, Math.min(e.clientY - r.top - f.y0, f.ph - 1e-6));
    const to = [v.r0 + (clampY / f.ph) * (v.r1 - v.r0), v.c0 + (clampX / f.pw) * (v.c1 - v.c0)];
    const [a, b] = [from.at, to];
    st.view = {
      r0: Math.floor(Math.min(a[0], b[0])), r1: Math.floor(Math.max(a[0], b[0])) + 1,
      c0: Math.floor(Math.min(a[1], b[1])), c1: Math.floor(Math.max(a[1], b[1])) + 1,
    };
    draw(st);
  };
  window.addEventListener('mouseup', up);
  canvas.addEventListener('dblclick', () => {
    st.view = full(st);
    draw(st);
  });
  const resized = new ResizeObserver(() => {
    if (st.spec && root.clientWidth && root.clientWidth !== st.width) draw(st);
  });
  resized.observe(root);
  st.cleanup = () => {
    resized.disconnect();
    window.removeEventListener('mouseup', up);
  };
  root.__attn = st;
  return st;
}

export default function (component) {
  const {data, parentElement} = component;
  const old = parentElement.querySelector(':scope > .attn-heatmap');
  const st = old ? old.__attn : build(parentElement);
  const tr = data.data[0];
  const same = st.spec && st.cols.join('\n') === tr.x.map(plain).join('\n') && st.rows.join('\n') === tr.y.map(plain).join('\n');
  st.spec = data;
  st.root.__chart = data;  // read by the benchmark and the browser tests: which pieces are drawn
  st.title.textContent = plain(data.layout.title && data.layout.title.text);
  st.canvas.setAttribute('aria-label', st.title.textContent);  // what a screen reader says of the map
  st.m = decode(tr.z);
  st.cols = tr.x.map(plain);
  st.rows = tr.y.map(plain);
  st.pal = palette(tr);
  st.image = cells(st);
  if (!same || !st.view) st.view = full(st);  // a new sentence opens unzoomed; a new head of it keeps the zoom
  [st.save.title, st.reset.title] = (tr.meta && tr.meta.buttons) || ['', ''];
  draw(st);
  return st.cleanup;
}
