'use strict'
// A real Minecraft client (node-minecraft-protocol) for end-to-end tests.
// Login mode: connect, log in (offline, or online against a session server), wait until
// spawned, send plugin messages and check their echoes byte for byte, answer keep-alives,
// then quit. Ping mode: one status ping. Either way it prints ONE JSON line of results on
// stdout and exits 0 once it has a result (ok or not), 2 on bad flags.
// Run `node client.js --help` for the flags.

const { parseArgs } = require('node:util')
const crypto = require('node:crypto')
const net = require('node:net')
const mc = require('minecraft-protocol')
const { nmpRequire, emit, fail, exitWhenOrphaned, componentObject, plainText } = require('./lib')

const usage = `usage: node client.js --port N --version V [flags]
  --host H                 address to connect to (default 127.0.0.1)
  --port N                 port to connect to (required)
  --server-host NAME       hostname written in the handshake (default: --host); the proxy routes on it
  --version V              Minecraft version (one of nmp's: ${mc.supportedVersions.join(' ')})
  --ping                   status ping only (reports MOTD, version, players, latency)
  --username NAME          player name (default "Player")
  --online                 online-mode login: join through --session-server before encryption
  --session-server URL     session server base URL (POST URL/session/minecraft/join)
  --access-token T         access token sent in the join (default "e2e-token")
  --profile-id HEX         profile UUID (32 hex) sent in the join (default: offline UUID of --username)
  --channel C              plugin message channel (default "infrarust:echo")
  --sizes LIST             payload sizes to send once playing, e.g. "1,255,256,32767*10" (default none)
  --fill F                 payload bytes: random, pattern, or mixed (alternating; default)
  --keepalives N           stay until N keep-alives have been answered (default 0)
  --stay-ms N              then stay N more ms (default 0)
  --timeout-ms N           give up after N ms in all (default 20000)
  --exit-with-stdin        exit when stdin closes (the Go harness uses this)`

let args
try {
  args = parseArgs({
    options: {
      host: { type: 'string', default: '127.0.0.1' },
      port: { type: 'string' },
      'server-host': { type: 'string' },
      version: { type: 'string' },
      ping: { type: 'boolean', default: false },
      username: { type: 'string', default: 'Player' },
      online: { type: 'boolean', default: false },
      'session-server': { type: 'string' },
      'access-token': { type: 'string', default: 'e2e-token' },
      'profile-id': { type: 'string' },
      channel: { type: 'string', default: 'infrarust:echo' },
      sizes: { type: 'string', default: '' },
      fill: { type: 'string', default: 'mixed' },
      keepalives: { type: 'string', default: '0' },
      'stay-ms': { type: 'string', default: '0' },
      'timeout-ms': { type: 'string', default: '20000' },
      'exit-with-stdin': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false }
    },
    strict: true
  }).values
} catch (e) {
  fail('client', `${e.message}\n${usage}`)
}
if (args.help) {
  console.log(usage)
  process.exit(0)
}
const mode = args.ping ? 'ping' : 'login'
if (!args.port || !args.version) fail(mode, '--port and --version are required\n' + usage)
const port = intArg('port')
const timeoutMs = intArg('timeout-ms')
const wantKeepAlives = intArg('keepalives')
const stayMs = intArg('stay-ms')
const serverHost = args['server-host'] || args.host
if (!['random', 'pattern', 'mixed'].includes(args.fill)) fail(mode, '--fill must be random, pattern or mixed')
if (args.online && !args['session-server']) fail(mode, '--online needs --session-server')
const mcData = nmpRequire('minecraft-data')(args.version)
if (!mcData) fail(mode, `unknown version ${args.version}`)
const sizes = parseSizes(args.sizes)

function intArg (name) {
  const n = Number(args[name])
  if (!Number.isInteger(n) || n < 0) fail(mode, `--${name} must be a non-negative integer, got ${JSON.stringify(args[name])}`)
  return n
}

function parseSizes (list) {
  const out = []
  for (const item of list.split(',').map(s => s.trim()).filter(Boolean)) {
    const m = /^(\d+)(?:\*(\d+))?$/.exec(item)
    if (!m) fail(mode, `--sizes: bad item ${JSON.stringify(item)} (want N or N*COUNT)`)
    for (let i = 0; i < Number(m[2] || 1); i++) out.push(Number(m[1]))
  }
  return out
}

// payload builds message i: random bytes (incompressible) or a repeating pattern
// (compresses well), so both compressed and uncompressed frames are exercised.
function payload (i, size) {
  const random = args.fill === 'random' || (args.fill === 'mixed' && i % 2 === 0)
  if (random) return crypto.randomBytes(size)
  const b = Buffer.alloc(size)
  for (let j = 0; j < size; j++) b[j] = (i * 7 + j) % 251
  return b
}

if (args['exit-with-stdin']) exitWhenOrphaned()
const started = process.hrtime.bigint()
const since = () => Number((process.hrtime.bigint() - started) / 1000000n)
let finished = false

// finish prints the single result line and exits.
function finish (result) {
  if (finished) return
  finished = true
  emit({ mode, version: mcData.version.minecraftVersion, protocol: mcData.version.version, elapsed_ms: since(), ...result })
  process.exit(0)
}

const timer = setTimeout(() => {
  const r = state ? state() : {}
  finish({ ...r, ok: false, error: `timed out after ${timeoutMs} ms` + (r.error ? ` (first error: ${r.error})` : '') })
}, timeoutMs)
timer.unref()
let state = null

// connect opens the TCP connection to --host:--port whatever hostname the handshake names.
function connect (client) {
  client.setSocket(net.connect(port, args.host))
}

if (mode === 'ping') {
  mc.ping({ host: serverHost, port, version: args.version, connect, noPongTimeout: timeoutMs, closeTimeout: timeoutMs })
    .then((r) => {
      const description = componentObject(r.description)
      finish({
        ok: true,
        motd: plainText(description),
        description,
        version_name: r.version && r.version.name,
        server_protocol: r.version && r.version.protocol,
        players_online: r.players && r.players.online,
        players_max: r.players && r.players.max,
        latency_ms: r.latency
      })
    })
    .catch((err) => finish({ ok: false, error: String(err && err.message ? err.message : err) }))
} else {
  login()
}

function login () {
  const options = {
    host: args.host,
    port,
    fakeHost: serverHost,
    username: args.username,
    version: args.version,
    connect,
    hideErrors: true,
    checkTimeoutInterval: timeoutMs
  }
  if (args.online) {
    // nmp's client only calls the session server's join when options.haveCredentials is
    // set and client.session holds a profile; a custom auth function provides both
    // without any Microsoft or Mojang account.
    const profileId = (args['profile-id'] || offlineUUID(args.username)).replace(/-/g, '')
    options.sessionServer = args['session-server'].replace(/\/+$/, '')
    options.auth = (client, opts) => {
      client.username = args.username
      client.session = { accessToken: args['access-token'], selectedProfile: { id: profileId, name: args.username } }
      opts.accessToken = args['access-token']
      opts.haveCredentials = true
      opts.connect(client)
    }
  } else {
    options.auth = 'offline'
  }

  const client = mc.createClient(options)
  const r = {
    username: args.username,
    online: args.online,
    uuid: null,
    login_ms: null,
    play_ms: null,
    compression_threshold: null,
    encrypted: false,
    channel: args.channel,
    payloads_sent: 0,
    payloads_echoed: 0,
    bytes_sent: 0,
    bytes_echoed: 0,
    sent_sha256: null,
    echo_sha256: null,
    mismatches: 0,
    keepalives: 0,
    kicked: false,
    kick_reason: null,
    kick_raw: null,
    end_reason: null
  }
  state = () => r
  const sentHash = crypto.createHash('sha256')
  const echoHash = crypto.createHash('sha256')
  const expected = []
  let gotLogin = false
  let gotPosition = false
  let playing = false
  let echoesDone = false
  let staying = false

  client.on('error', (err) => {
    if (!r.error) r.error = String(err && err.message ? err.message : err)
  })
  client.once('success', (p) => {
    r.login_ms = since()
    r.uuid = p.uuid
    r.compression_threshold = client.compressionThreshold
    r.encrypted = client.cipher != null
  })
  client.on('disconnect', (p) => kicked(p.reason))
  client.on('kick_disconnect', (p) => kicked(p.reason))
  client.once('login', () => { gotLogin = true; maybePlaying() })
  client.on('position', (p) => {
    if (p.teleportId !== undefined && mcData.protocol.play.toServer.types.packet_teleport_confirm) {
      client.write('teleport_confirm', { teleportId: p.teleportId })
    }
    gotPosition = true
    maybePlaying()
  })
  client.on('keep_alive', () => {
    if (!playing) return
    r.keepalives++
    maybeDone()
  })
  client.on('custom_payload', (p) => {
    if (p.channel !== args.channel) return
    const want = expected.shift()
    r.payloads_echoed++
    r.bytes_echoed += p.data.length
    echoHash.update(p.data)
    if (!want || !want.equals(p.data)) r.mismatches++
    if (expected.length === 0 && r.payloads_echoed >= sizes.length) {
      echoesDone = true
      maybeDone()
    }
  })
  client.on('end', (reason) => {
    r.end_reason = String(reason)
    if (staying) return
    if (!r.error && !r.kicked) r.error = 'connection closed before the test finished'
    report(false)
  })

  function kicked (raw) {
    r.kicked = true
    r.kick_raw = componentObject(raw)
    r.kick_reason = plainText(r.kick_raw)
  }

  function maybePlaying () {
    if (playing || !gotLogin || !gotPosition) return
    playing = true
    r.play_ms = since()
    sizes.forEach((size, i) => {
      const data = payload(i, size)
      expected.push(data)
      sentHash.update(data)
      r.payloads_sent++
      r.bytes_sent += size
      client.write('custom_payload', { channel: args.channel, data })
    })
    if (sizes.length === 0) echoesDone = true
    maybeDone()
  }

  function maybeDone () {
    if (staying || !echoesDone || r.keepalives < wantKeepAlives) return
    staying = true
    setTimeout(() => {
      client.end('done')
      report(r.mismatches === 0 && r.payloads_echoed === sizes.length)
    }, stayMs)
  }

  function report (ok) {
    if (finished) return
    r.sent_sha256 = sentHash.digest('hex')
    r.echo_sha256 = echoHash.digest('hex')
    finish({ ok: ok && !r.kicked && !r.error, ...r })
  }
}

function offlineUUID (name) {
  const h = crypto.createHash('md5').update('OfflinePlayer:' + name, 'utf8').digest()
  h[6] = (h[6] & 0x0f) | 0x30
  h[8] = (h[8] & 0x3f) | 0x80
  return h.toString('hex')
}
