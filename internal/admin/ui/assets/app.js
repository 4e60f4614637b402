// The dashboard: signs in with a key (a session cookie from then on), shows
// the overview and the players, live from the event stream, and acts through
// the admin API with the session's CSRF token. A viewer sees no action.

const $ = (id) => document.getElementById(id);
let session = null; // {role, csrf}
let events = null;  // the EventSource
const players = new Map(); // name -> player

async function api(method, path, body) {
  const opts = { method, headers: {}, credentials: 'same-origin' };
  if (body !== undefined) {
    opts.headers['Content-Type'] = 'application/json';
    opts.body = JSON.stringify(body);
  }
  if (method !== 'GET' && session) opts.headers['X-CSRF-Token'] = session.csrf;
  const resp = await fetch(path, opts);
  const data = await resp.json().catch(() => ({}));
  if (!resp.ok) throw new Error((data.error && data.error.message) || resp.statusText);
  return data.data;
}

function show(signedIn) {
  $('signin').hidden = signedIn;
  $('app').hidden = !signedIn;
}

async function start() {
  try {
    session = await api('GET', '/api/v1/session');
  } catch {
    session = null;
  }
  if (!session) {
    show(false);
    $('key').focus();
    return;
  }
  show(true);
  document.body.classList.toggle('viewer', session.role !== 'admin');
  $('role').textContent = session.role === 'admin' ? 'admin' : 'viewer (read only)';
  route();
  await Promise.all([loadStats(), loadPlayers()]);
  follow();
}

$('signin-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  $('signin-error').textContent = '';
  try {
    session = await api('POST', '/api/v1/session', { key: $('key').value });
    $('key').value = '';
    await start();
  } catch (err) {
    $('signin-error').textContent = err.message;
  }
});

$('signout').addEventListener('click', async () => {
  try { await api('DELETE', '/api/v1/session'); } catch { /* signed out anyway */ }
  if (events) events.close();
  session = null;
  show(false);
});

function route() {
  const page = (location.hash || '#overview').slice(1);
  for (const name of ['overview', 'players']) {
    $('page-' + name).hidden = name !== page;
    const link = document.querySelector(`nav a[data-page="${name}"]`);
    if (name === page) link.setAttribute('aria-current', 'page'); else link.removeAttribute('aria-current');
  }
}
window.addEventListener('hashchange', route);

async function loadStats() {
  const s = await api('GET', '/api/v1/stats');
  $('stat-players').textContent = s.players_online;
  $('stat-cps').textContent = s.connections_per_sec.toFixed(1);
  $('stat-uptime').textContent = formatUptime(s.uptime_secs);
  $('stat-version').textContent = s.version || 'development';
}

function formatUptime(secs) {
  const d = Math.floor(secs / 86400), h = Math.floor(secs % 86400 / 3600), m = Math.floor(secs % 3600 / 60);
  return d ? `${d}d ${h}h` : h ? `${h}h ${m}m` : `${m}m`;
}

async function loadPlayers() {
  try {
    const list = await api('GET', '/api/v1/players');
    players.clear();
    for (const p of list) players.set(p.name, p);
    renderPlayers();
  } catch (err) {
    $('players-error').textContent = err.message;
  }
}

function renderPlayers() {
  const q = $('player-search').value.trim().toLowerCase();
  const body = $('players');
  body.replaceChildren();
  const list = [...players.values()].filter((p) => !q || p.name.toLowerCase().includes(q));
  list.sort((a, b) => a.name.localeCompare(b.name));
  for (const p of list) body.append(playerRow(p));
  $('players-empty').hidden = list.length > 0;
  $('stat-players').textContent = players.size;
}
$('player-search').addEventListener('input', renderPlayers);

function playerRow(p) {
  const tr = document.createElement('tr');
  tr.dataset.player = p.name;
  for (const text of [p.name, p.server, p.version || p.protocol, p.proxy_mode]) {
    const td = document.createElement('td');
    td.textContent = text;
    tr.append(td);
  }
  const actions = document.createElement('td');
  actions.className = 'admin-only';
  const form = document.createElement('form');
  const reason = document.createElement('input');
  reason.placeholder = 'Reason';
  reason.setAttribute('aria-label', `Kick reason for ${p.name}`);
  const kick = document.createElement('button');
  kick.type = 'submit';
  kick.textContent = 'Kick';
  kick.setAttribute('aria-label', `Kick ${p.name}`);
  form.append(reason, kick);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    $('players-error').textContent = '';
    try {
      await api('POST', `/api/v1/players/${encodeURIComponent(p.name)}/kick`, reason.value ? { reason: reason.value } : undefined);
      players.delete(p.name);
      renderPlayers();
    } catch (err) {
      $('players-error').textContent = err.message;
    }
  });
  actions.append(form);
  tr.append(actions);
  return tr;
}

// follow keeps the page live from the event stream: the cookie signs it in
// (an EventSource sends no header), no polling.
function follow() {
  if (events) events.close();
  events = new EventSource('/api/v1/events?types=player.join,player.leave,player.switch,stats.tick');
  events.addEventListener('player.join', () => loadPlayers());
  events.addEventListener('player.switch', () => loadPlayers());
  events.addEventListener('player.leave', (ev) => {
    const e = JSON.parse(ev.data);
    players.delete(e.data.username);
    renderPlayers();
  });
  events.addEventListener('stats.tick', (ev) => {
    const s = JSON.parse(ev.data).data;
    $('stat-cps').textContent = s.connections_per_sec.toFixed(1);
    $('stat-uptime').textContent = formatUptime(s.uptime_secs);
  });
}

start();
