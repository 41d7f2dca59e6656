// connector dev: renders the views the server pushes (Server-Sent Events), and sends the
// page's commands (choose a stream and limits, read again). Every text is set with
// textContent: what the API answered never becomes markup.
'use strict';

const token = new URLSearchParams(location.search).get('token') || '';
const $ = (id) => document.getElementById(id);
let view = null;
let tab = 'records';
const opened = new Set(); // the keys of the request pages the user opened

// Numbers whose text JSON.parse would change (12345678901234567890, 1.50) keep their text.
class Num { constructor(text) { this.text = text; } }
function parseJSON(text) {
  return JSON.parse(text, (k, v, ctx) =>
    typeof v === 'number' && ctx && ctx.source !== String(v) ? new Num(ctx.source) : v);
}

// el('div', {class: 'x'}, 'text', child…) makes an element; attributes starting with "on"
// are listeners.
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat(Infinity)) {
    if (c !== undefined && c !== null && c !== false) e.append(c);
  }
  return e;
}

function plural(n, word) { return n === 1 ? `1 ${word}` : `${n} ${word}s`; }

async function post(path, body) {
  const res = await fetch(path, {
    method: 'POST',
    headers: {'Content-Type': 'application/json', 'X-Connector-Token': token},
    body: JSON.stringify(body),
  });
  if (!res.ok) {
    const answer = await res.json().catch(() => ({}));
    setStatus('error', answer.error || `${res.status} ${res.statusText}`);
  }
}

function setStatus(kind, text) {
  const s = $('status');
  s.className = 'status ' + kind;
  s.textContent = text;
}

function connect() {
  const es = new EventSource('/api/events?token=' + encodeURIComponent(token));
  es.addEventListener('view', (e) => render(parseJSON(e.data)));
  es.onerror = () => setStatus('error', 'disconnected: is connector dev still running?');
}

// ---- the whole page -------------------------------------------------------------------

function render(v) {
  const first = view === null;
  view = v;
  document.body.dataset.seq = v.seq;
  document.body.dataset.round = v.round;
  $('files').textContent = [v.definition, v.values, v.state_file].filter(Boolean).join(' · ');
  renderStatus(v);
  renderStreams(v);
  renderProblems(v);
  renderStream(v, first);
}

function renderStatus(v) {
  if (v.reading) return setStatus('busy', `reading ${v.stream}…`);
  if (v.broken) return setStatus('error', 'the files have errors');
  const since = Date.now() - v.saved_at;
  setStatus('ok', v.trigger === 'save' && since < 10000 ? `up to date, ${since} ms after the save` : 'up to date');
}

function renderStreams(v) {
  const list = $('streams');
  list.replaceChildren(...v.streams.map((s) => el('li', {},
    el('button', {type: 'button', class: s.name === v.stream ? 'current' : '', 'aria-current': s.name === v.stream ? 'true' : null,
      onclick: () => post('/api/choose', {stream: s.name, limits: limitsFromForm()})},
      s.name, s.incremental ? el('span', {class: 'badge'}, 'incremental') : null))));
  const warnings = v.problems.filter((p) => p.severity === 'warning').length;
  $('warning-count').textContent = warnings ? `${plural(warnings, 'warning')} in the definition` : '';
}

function position(p) {
  return p.line ? `${p.file}:${p.line}:${p.column}` : p.file;
}

function renderProblems(v) {
  const box = $('problems');
  box.hidden = v.problems.length === 0;
  box.className = v.broken ? 'broken' : '';
  box.replaceChildren(
    v.broken ? el('h2', {}, 'The files have errors: fix them and save') : el('h2', {}, 'Definition warnings'),
    el('ul', {}, v.problems.map((p) => el('li', {class: p.severity},
      el('code', {class: 'pos'}, position(p)), ' ', el('span', {class: 'sev'}, p.severity), ' ', p.message,
      p.hint ? el('span', {class: 'hint'}, ` (${p.hint})`) : null))));
}

function limitsFromForm() {
  const f = $('limits');
  return {records: +f.records.value, pages: +f.pages.value, slices: +f.slices.value};
}

function renderStream(v, first) {
  $('stream').hidden = !v.stream;
  if (!v.stream) return;
  const info = v.streams.find((s) => s.name === v.stream) || {};
  $('stream-name').textContent = v.stream;
  const key = (info.primary_key || []).map((p) => p.join('.')).join(', ');
  $('stream-info').textContent = [key && `primary key ${key}`, info.cursor && `cursor ${info.cursor}`].filter(Boolean).join(' · ');
  const f = $('limits');
  for (const name of ['records', 'pages', 'slices']) {
    if (first || document.activeElement !== f[name]) f[name].value = v.limits[name];
  }
  const r = v.results.find((x) => x.stream === v.stream);
  const result = $('result');
  result.classList.toggle('stale', v.broken && !!r);
  const note = $('stale-note');
  note.hidden = !(v.broken && r);
  note.textContent = r ? `The last good result, read at ${new Date(r.at).toLocaleTimeString()}:` : '';
  renderSummary(r, v);
  renderTab(r);
}

function renderSummary(r, v) {
  const box = $('summary');
  if (!r) {
    box.replaceChildren(el('p', {class: 'muted'}, v.reading ? 'Reading…' : 'No read yet.'));
    return;
  }
  const parts = [];
  if (r.error) parts.push(el('div', {class: 'failure'}, 'The read could not be made: ', r.error));
  for (const e of r.errors) parts.push(el('div', {class: 'failure'}, e));
  const facts = [plural(r.records, 'record'), plural(r.pages, 'page'), plural(r.slices, 'slice'), `${Math.round(r.took_ms)} ms`];
  if (r.limit_reached) facts.push('a test read limit was reached');
  if (r.from) facts.push(r.from === 'read' ? 'from the state of the read before' : 'from the state file');
  parts.push(el('p', {class: 'facts'}, facts.join(' · ')));
  const counts = r.check.counts || {};
  const names = {schema_mismatch: 'schema mismatch', primary_key_missing: 'missing primary key',
    primary_key_duplicate: 'repeated primary key', no_records: 'no records'};
  const chips = Object.keys(names).filter((k) => counts[k]).map((k) =>
    el('button', {type: 'button', class: 'chip warn', onclick: () => showTab('records')}, `${counts[k]} × ${names[k]}`));
  if (chips.length) parts.push(el('p', {class: 'chips'}, chips));
  box.replaceChildren(...parts);
}

// ---- tabs -----------------------------------------------------------------------------

for (const b of document.querySelectorAll('#tabs button')) {
  b.addEventListener('click', () => showTab(b.dataset.tab));
}

function showTab(name) {
  tab = name;
  renderTab(view && view.results.find((x) => x.stream === view.stream));
}

function renderTab(r) {
  for (const b of document.querySelectorAll('#tabs button')) {
    b.setAttribute('aria-selected', b.dataset.tab === tab);
  }
  const panel = $('panel');
  const main = $('main');
  const scroll = main.scrollTop;
  const read = r && r.read;
  const tabView = {records: recordsTab, requests: requestsTab, schema: schemaTab, state: stateTab, logs: logsTab}[tab];
  panel.replaceChildren(r && read ? tabView(r, read) : el('p', {class: 'muted'}, 'Nothing to show.'));
  main.scrollTop = scroll;
}

// ---- records --------------------------------------------------------------------------

function recordsTab(r, read) {
  const fields = r.fields.filter((f) => f.depth === 0 && f.inferred);
  let columns = fields.map((f) => f.path);
  const firstRecord = read.slices.flatMap((s) => s.pages.flatMap((p) => p.records))[0];
  if (!columns.length && firstRecord && typeof firstRecord === 'object') columns = Object.keys(firstRecord);
  const byRecord = new Map();
  const general = [];
  for (const w of r.check.warnings || []) {
    if (!w.record) { general.push(w); continue; }
    if (!byRecord.has(w.record)) byRecord.set(w.record, []);
    byRecord.get(w.record).push(w);
  }
  const rows = [];
  let n = 0;
  read.slices.forEach((s, si) => s.pages.forEach((p, pi) => {
    const where = `slice ${si + 1} · page ${pi + 1} · ${plural(p.records.length, 'record')}`;
    rows.push(el('tr', {class: 'group'}, el('td', {colspan: columns.length + 1}, where, descriptor(s.slice_descriptor))));
    for (const rec of p.records) {
      n++;
      const warnings = byRecord.get(n);
      rows.push(el('tr', {class: warnings ? 'warn' : '', id: `record-${n}`},
        el('td', {class: 'num'}, String(n)),
        columns.map((c) => el('td', {}, cell(rec && typeof rec === 'object' ? rec[c] : undefined)))));
      if (warnings) {
        rows.push(el('tr', {class: 'warnings'}, el('td', {}), el('td', {colspan: columns.length},
          warnings.map((w) => el('div', {}, '⚠ ', w.pointer ? el('code', {}, w.pointer) : null, w.pointer ? ' ' : '', w.message)))));
      }
    }
  }));
  const more = (r.check.counts && Object.values(r.check.counts).reduce((a, b) => a + b, 0)) - (r.check.warnings || []).length;
  return el('div', {},
    general.map((w) => el('p', {class: 'warning-line'}, '⚠ ', w.message)),
    r.schema_note ? el('p', {class: 'muted'}, r.schema_note) : null,
    more > 0 ? el('p', {class: 'muted'}, `${more} more warnings are counted but not shown.`) : null,
    el('div', {class: 'table-wrap'}, el('table', {class: 'records'},
      el('thead', {}, el('tr', {}, el('th', {}, '#'), columns.map((c) => el('th', {}, c)))),
      el('tbody', {}, rows))));
}

// stringify writes JSON as JSON.stringify does, numbers kept as the API wrote them.
function stringify(v, indent) {
  const marks = [];
  const text = JSON.stringify(v, (k, x) => x instanceof Num ? `\uE000${marks.push(x.text) - 1}\uE000` : x, indent);
  return text.replace(/"\uE000(\d+)\uE000"/g, (m, i) => marks[+i]);
}
function compact(v) { return stringify(v); }
function pretty(v) { return stringify(v, 2); }

// descriptor shows a slice's descriptor, nothing for a slice without partition or cursor.
function descriptor(d) {
  // The CDK writes the one slice of a stream without partitions as the text "{}".
  const empty = !d || d === '{}' || (typeof d === 'object' &&
    Object.values(d).every((x) => x === null || (typeof x === 'object' && !Object.keys(x).length)));
  return empty ? null : el('code', {class: 'muted'}, ' ' + compact(d));
}

// cell shows a value of a record: scalars as they are, objects and arrays folded.
function cell(v) {
  if (v === undefined) return el('span', {class: 'absent'}, '');
  if (v === null) return el('span', {class: 'null'}, 'null');
  if (v instanceof Num) return el('span', {class: 'number'}, v.text);
  if (typeof v === 'object') {
    const preview = compact(v);
    return el('details', {class: 'fold'},
      el('summary', {}, preview.length > 40 ? preview.slice(0, 39) + '…' : preview), el('pre', {}, pretty(v)));
  }
  if (typeof v === 'string' && v.length > 120) return el('span', {class: 'string', title: v}, v.slice(0, 120) + '…');
  return el('span', {class: typeof v === 'string' && v.length <= 40 ? 'string short' : typeof v}, String(v));
}

// ---- requests -------------------------------------------------------------------------

function requestsTab(r, read) {
  const out = [];
  if ((read.auxiliary_requests || []).length) {
    out.push(el('h3', {}, 'Before the slices'), read.auxiliary_requests.map((a, i) => auxiliary(a, `a${i}`)));
  }
  read.slices.forEach((s, si) => {
    out.push(el('section', {class: 'slice'},
      el('h3', {}, `Slice ${si + 1}`, descriptor(s.slice_descriptor)),
      (s.auxiliary_requests || []).map((a, i) => auxiliary(a, `s${si}a${i}`)),
      s.pages.map((p, pi) => page(p, `s${si}p${pi}`, pi)),
      s.state && s.state.length ? el('details', {class: 'state'}, el('summary', {}, 'state after the slice'), el('pre', {}, pretty(s.state[s.state.length - 1]))) : null));
  });
  return el('div', {}, out);
}

function foldable(key, summary, body) {
  const d = el('details', {class: 'exchange', ontoggle: (e) => e.target.open ? opened.add(key) : opened.delete(key)},
    el('summary', {}, summary));
  d.open = opened.has(key);
  // The body is made when first opened: a read of many pages stays quick to render.
  let made = false;
  const make = () => { if (!made && d.open) { made = true; d.append(body()); } };
  d.addEventListener('toggle', make);
  make();
  return d;
}

function requestLine(req, res) {
  return [el('span', {class: 'method'}, req ? req.http_method : '?'), ' ', el('span', {class: 'url'}, req ? req.url : ''),
    ' → ', el('span', {class: `code c${res ? String(res.status)[0] : 0}`}, res ? String(res.status) : 'no response')];
}

function page(p, key, i) {
  return foldable(key, [`page ${i + 1} · `, requestLine(p.request, p.response), ` · ${plural(p.records.length, 'record')}`],
    () => exchange(p.request, p.response));
}

function auxiliary(a, key) {
  return foldable(key, [el('span', {class: 'badge'}, a.type || 'auxiliary'), ' ', a.title, ' · ', requestLine(a.request, a.response)],
    () => el('div', {}, a.description ? el('p', {class: 'muted'}, a.description) : null, exchange(a.request, a.response)));
}

function exchange(req, res) {
  return el('div', {class: 'pair'},
    el('div', {}, el('h4', {}, 'Request'),
      req ? [el('p', {class: 'url'}, req.http_method, ' ', req.url), headers(req.headers), req.body ? body(req.body) : null] : 'none'),
    el('div', {}, el('h4', {}, 'Response'),
      res ? [el('p', {}, `status ${res.status}`), headers(res.headers), body(res.body)] : 'none'));
}

function headers(h) {
  if (!h || !Object.keys(h).length) return null;
  return el('table', {class: 'headers'}, Object.entries(h).map(([k, v]) =>
    el('tr', {}, el('th', {}, k), el('td', {}, Array.isArray(v) ? v.join(', ') : String(v)))));
}

const CUT = 20000; // characters of a body shown before "show all"
const ITEMS = 100; // items of an array shown before "show more"

// body shows a body: JSON as a tree to fold, else text; long ones cut, with a way to see all.
function body(text) {
  if (text === undefined || text === null || text === '') return el('p', {class: 'muted'}, 'empty body');
  let json;
  try { json = parseJSON(text); } catch { json = undefined; }
  const raw = () => {
    const pre = el('pre', {class: 'raw'}, text.length > CUT ? text.slice(0, CUT) : text);
    if (text.length <= CUT) return pre;
    const all = el('button', {type: 'button', onclick: () => { pre.textContent = text; all.remove(); }},
      `show all ${Math.round(text.length / 1024)} KB`);
    return el('div', {}, pre, all);
  };
  if (json === undefined || typeof json !== 'object' || json === null) return raw();
  const holder = el('div', {class: 'json'}, tree(json, undefined, 0));
  const toggle = el('button', {type: 'button', class: 'small', onclick: () => {
    const showRaw = toggle.textContent === 'raw';
    holder.replaceChildren(showRaw ? raw() : tree(json, undefined, 0));
    toggle.textContent = showRaw ? 'tree' : 'raw';
  }}, 'raw');
  return el('div', {}, el('div', {class: 'body-tools'}, `${Math.round(text.length / 102.4) / 10} KB `, toggle), holder);
}

// tree is a JSON value as nested <details>: the first two levels open, the rest folded and
// made when opened.
function tree(v, key, depth) {
  const label = key === undefined ? null : el('span', {class: 'key'}, typeof key === 'number' ? `${key}: ` : `${JSON.stringify(key)}: `);
  if (v === null || typeof v !== 'object' || v instanceof Num) return el('div', {class: 'leaf'}, label, scalar(v));
  const entries = Array.isArray(v) ? v.map((x, i) => [i, x]) : Object.entries(v);
  const [open, close] = Array.isArray(v) ? ['[', ']'] : ['{', '}'];
  if (!entries.length) return el('div', {class: 'leaf'}, label, open + close);
  // Folded, a value shows its first characters; open, how many members it has.
  const preview = compact(v);
  const d = el('details', {}, el('summary', {}, label,
    el('span', {class: 'preview'}, preview.length > 80 ? preview.slice(0, 79) + '…' : preview),
    el('span', {class: 'count'}, `${open} ${plural(entries.length, Array.isArray(v) ? 'item' : 'key')} ${close}`)));
  const kids = el('div', {class: 'kids'});
  d.append(kids);
  let shown = 0;
  const more = () => {
    const next = entries.slice(shown, shown + ITEMS);
    kids.append(...next.map(([k, x]) => tree(x, k, depth + 1)));
    shown += next.length;
    if (shown < entries.length) {
      const b = el('button', {type: 'button', class: 'small', onclick: () => { b.remove(); more(); }}, `show ${Math.min(ITEMS, entries.length - shown)} more of ${entries.length - shown}`);
      kids.append(b);
    }
  };
  d.addEventListener('toggle', () => { if (d.open && !shown) more(); });
  d.open = depth < 2;
  if (d.open) more();
  return d;
}

function scalar(v) {
  if (v === null) return el('span', {class: 'null'}, 'null');
  if (v instanceof Num) return el('span', {class: 'number'}, v.text);
  return el('span', {class: typeof v}, typeof v === 'string' ? JSON.stringify(v) : String(v));
}

// ---- schema ---------------------------------------------------------------------------

function schemaTab(r, read) {
  const differences = r.fields.filter((f) => f.diff).length;
  const words = {undeclared: 'not in the declared schema', unseen: 'in no record read', type: 'types differ'};
  const copy = el('button', {type: 'button', onclick: () => copyText(r.schema_yaml, copy)}, 'Copy inferred schema as schema_loader YAML');
  const formats = read.inferred_datetime_formats || {};
  return el('div', {},
    el('p', {}, r.schema_yaml ? copy : null, ' ',
      r.declared_schema ? `${plural(differences, 'difference')} from the declared schema.` : 'The stream declares no schema.'),
    r.schema_note ? el('p', {class: 'muted'}, r.schema_note) : null,
    el('table', {class: 'schema'},
      el('thead', {}, el('tr', {}, el('th', {}, 'field'), el('th', {}, 'inferred from the records'), el('th', {}, 'declared'), el('th', {}, ''))),
      el('tbody', {}, r.fields.map((f) => el('tr', {class: f.diff ? `diff ${f.diff}` : ''},
        el('td', {class: `depth${Math.min(f.depth, 6)}`}, f.path),
        el('td', {}, f.inferred), el('td', {}, f.declared), el('td', {class: 'why'}, words[f.diff] || ''))))),
    Object.keys(formats).length ? [el('h3', {}, 'Datetime formats recognised'),
      el('table', {class: 'headers'}, Object.entries(formats).map(([k, v]) => el('tr', {}, el('th', {}, k), el('td', {}, el('code', {}, v)))))] : null,
    r.schema_yaml ? el('details', {}, el('summary', {}, 'the YAML'), el('pre', {}, r.schema_yaml)) : null);
}

async function copyText(text, button) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // Outside a secure context (a page served with --addr on another interface).
    const area = el('textarea', {}, text);
    document.body.append(area);
    area.select();
    document.execCommand('copy');
    area.remove();
  }
  const was = button.textContent;
  button.textContent = 'Copied';
  setTimeout(() => { button.textContent = was; }, 1500);
}

// ---- state and logs -------------------------------------------------------------------

function stateTab(r, read) {
  return el('div', {},
    r.start_state ? [el('h3', {}, r.from === 'read' ? 'Started from the state of the read before' : 'Started from the state file'), state(r.start_state)] : null,
    el('h3', {}, 'State after the read'),
    r.state ? state(r.state) : el('p', {class: 'muted'}, 'The read ended with no state.'),
    r.state ? el('button', {type: 'button', id: 'read-from-state', onclick: () => post('/api/read', {from_state: true})}, 'Read again from this state') : null,
    read.latest_config_update ? [el('h3', {}, 'The config after the read (tokens rotated)'), el('pre', {}, pretty(read.latest_config_update))] : null);
}

// state shows a state message by what it holds (the stream's or the global state), the
// whole message folded beneath.
function state(msg) {
  const core = (msg.stream && msg.stream.stream_state) || msg.global || msg.data;
  if (!core) return el('pre', {}, pretty(msg));
  return el('div', {}, el('pre', {class: 'state-core'}, pretty(core)),
    el('details', {class: 'state'}, el('summary', {}, 'the whole state message'), el('pre', {}, pretty(msg))));
}

function logsTab(r, read) {
  const logs = read.logs || [];
  if (!logs.length) return el('p', {class: 'muted'}, 'No log messages.');
  return el('table', {class: 'logs'}, logs.map((l) => el('tr', {class: l.level.toLowerCase()},
    el('td', {}, l.level), el('td', {}, l.message, l.internal_message ? el('div', {class: 'muted'}, l.internal_message) : null))));
}

// ---- commands -------------------------------------------------------------------------

$('limits').addEventListener('submit', (e) => {
  e.preventDefault();
  if (view) post('/api/choose', {stream: view.stream, limits: limitsFromForm()});
});

connect();
