'use strict'
// A real Minecraft client (node-minecraft-protocol) for end-to-end tests.
// Login mode: connect, log in (offline, or online against a session server), wait until
// spawned, send plugin messages and check their echoes byte for byte, answer keep-alives,
// then quit. Ping mode: one status ping. Each run prints ONE JSON line of results on
// stdout. With --serve it runs jobs read from stdin instead (one JSON object of the same
// options per line, one result line each), so a test pays node's start-up and nmp's
// protocol compilation once; jobs that carry an "id" run side by side and their result
// lines carry the same "id". Run `node client.js --help` for the flags.

const { parseArgs } = require('node:util')
const crypto = require('node:crypto')
const net = require('node:net')
const readline = require('node:readline')
const mc = require('minecraft-protocol')
const { nmpRequire, emit, fail, exitWhenOrphaned, componentObject, plainText } = require('./lib')

const usage = `usage: node client.js --port N --version V [flags]
       node client.js --serve    (jobs on stdin: one JSON object of these options per line;
                                  a job with an "id" runs alongside the others, its result has that "id")
  A --serve job {"decode": {"version": V, "state": S, "packets": [HEX, ...]}} parses
  clientbound packets (id + payload, hex) with nmp's own protocol definitions and reports
  each packet's name, fields and how many bytes the definition read (a codec check).
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
  --sizes LIST             payload sizes to send once spawned, e.g. "1,255,256,32767*10" (default none)
  --fill F                 payload bytes: random, pattern, or mixed (alternating; default)
  --keepalives N           stay until N keep-alives have been answered (default 0)
  --stay-ms N              then stay N more ms (default 0)
  --tick-ms N              while staying, send a 20-byte "tick" plugin message every N ms and count
                           the echoes (ticks_sent, ticks_echoed; default 0: none)
  --until-kicked           after spawning, stay until the server disconnects us (ok = we were kicked);
                           with --tick-ms, tick all along
  --keepalive-timeout-ms N end the connection (as a timed-out vanilla client does) when no keep-alive
                           came for N ms after the last one (default: --timeout-ms)
  --commands LIST          once spawned, type these chat lines or commands ("/server b"), one per line of
                           LIST, --command-gap-ms apart (default 400); then the tab completions of
  --tab LIST               these texts, one per line ("/server "), reported in tab_results
  --command-gap-ms N       the wait before each command and completion (default 400)
  --client-info            1.20.2+: send the brand and Client Information in configuration right after
                           Login Acknowledged, as the vanilla client does (nmp's own client sends neither)
  --timeout-ms N           give up after N ms in all (default 20000)
  --exit-with-stdin        exit when stdin closes (the Go harness uses this)
  Every login also reports the root commands of the last command tree it received
  (command_roots, 1.13+) and of every tree in order (command_trees, at most 20), the titles and subtitles shown (titles, subtitles), the chat
  lines it was sent (chats), each world
  entered (worlds: a Join Game or Respawn, with the keep-alives and tick echoes counted by
  then) and the longest wait between two keep-alives (max_keepalive_gap_ms).`

const spec = {
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
  'tick-ms': { type: 'string', default: '0' },
  'until-kicked': { type: 'boolean', default: false },
  'keepalive-timeout-ms': { type: 'string', default: '0' },
  'timeout-ms': { type: 'string', default: '20000' },
  commands: { type: 'string', default: '' },
  tab: { type: 'string', default: '' },
  'command-gap-ms': { type: 'string', default: '400' },
  'client-info': { type: 'boolean', default: false }
}

// options checks one run's flags (from the command line or a --serve job) and returns
// them parsed; it throws an Error that says what is wrong.
function options (raw) {
  const o = {}
  for (const [name, s] of Object.entries(spec)) {
    const v = raw[name] === undefined || raw[name] === null ? s.default : raw[name]
    o[name] = s.type === 'boolean' ? v === true || v === 'true' : (v === undefined ? undefined : String(v))
  }
  for (const name of Object.keys(raw)) {
    if (!(name in spec)) throw new Error(`unknown option ${JSON.stringify(name)}`)
  }
  o.mode = o.ping ? 'ping' : 'login'
  if (!o.port || !o.version) throw new Error('--port and --version are required')
  for (const name of ['port', 'timeout-ms', 'keepalives', 'stay-ms', 'tick-ms', 'keepalive-timeout-ms', 'command-gap-ms']) {
    const n = Number(o[name])
    if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a non-negative integer, got ${JSON.stringify(o[name])}`)
    o[name] = n
  }
  if (!['random', 'pattern', 'mixed'].includes(o.fill)) throw new Error('--fill must be random, pattern or mixed')
  if (o.online && !o['session-server']) throw new Error('--online needs --session-server')
  o.mcData = nmpRequire('minecraft-data')(o.version)
  if (!o.mcData) throw new Error(`unknown version ${o.version}`)
  o.sizes = parseSizes(o.sizes)
  o.commands = o.commands.split('\n').filter(Boolean)
  o.tab = o.tab.split('\n').filter(Boolean)
  o.serverHost = o['server-host'] || o.host
  return o
}

function parseSizes (list) {
  const out = []
  for (const item of list.split(',').map(s => s.trim()).filter(Boolean)) {
    const m = /^(\d+)(?:\*(\d+))?$/.exec(item)
    if (!m) throw new Error(`--sizes: bad item ${JSON.stringify(item)} (want N or N*COUNT)`)
    for (let i = 0; i < Number(m[2] || 1); i++) out.push(Number(m[1]))
  }
  return out
}

// payload builds message i: random bytes (incompressible) or a repeating pattern
// (compresses well), so both compressed and uncompressed frames are exercised.
function payload (fill, i, size) {
  if (fill === 'random' || (fill === 'mixed' && i % 2 === 0)) return crypto.randomBytes(size)
  const b = Buffer.alloc(size)
  for (let j = 0; j < size; j++) b[j] = (i * 7 + j) % 251
  return b
}

// maxShown bounds each list a login reports (titles, subtitles, worlds).
const maxShown = 200

// tickSize is a tick's length: "tick", its number, the worlds entered so far, then
// the tick echoes and keep-alives received since the last was entered (u32 each).
const tickSize = 20

function errText (err) {
  return String(err && err.message ? err.message : err)
}

// run performs one ping or login and resolves with its result object (never rejects).
function run (o) {
  return new Promise((resolve) => {
    const started = process.hrtime.bigint()
    const since = () => Number((process.hrtime.bigint() - started) / 1000000n)
    let done = false
    let onTimeout = () => ({})
    let cleanup = () => {}
    const finish = (result) => {
      if (done) return
      done = true
      clearTimeout(timer)
      cleanup()
      resolve({ mode: o.mode, version: o.mcData.version.minecraftVersion, protocol: o.mcData.version.version, elapsed_ms: since(), ...result })
    }
    const timer = setTimeout(() => {
      const r = onTimeout()
      finish({ ...r, ok: false, error: `timed out after ${o['timeout-ms']} ms` + (r.error ? ` (first error: ${r.error})` : '') })
    }, o['timeout-ms'])
    // connect opens the TCP connection to --host:--port whatever hostname the handshake names.
    const connect = (client) => client.setSocket(net.connect(o.port, o.host))
    const hooks = { since, finish, connect, setOnTimeout: (f) => { onTimeout = f }, setCleanup: (f) => { cleanup = f } }
    try {
      if (o.mode === 'ping') ping(o, hooks)
      else login(o, hooks)
    } catch (err) {
      finish({ ok: false, error: errText(err) })
    }
  })
}

function ping (o, { finish, connect }) {
  mc.ping({ host: o.serverHost, port: o.port, version: o.version, connect, noPongTimeout: o['timeout-ms'], closeTimeout: o['timeout-ms'] })
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
    .catch((err) => finish({ ok: false, error: errText(err) }))
}

// vanillaConfigStart sends what the vanilla client sends as soon as it is in
// configuration: its brand, then its Client Information (the fields of the
// version's packet; the defaults a fresh vanilla client has).
function vanillaConfigStart (client) {
  const brand = Buffer.from('vanilla')
  client.write('custom_payload', { channel: 'minecraft:brand', data: Buffer.concat([Buffer.from([brand.length]), brand]) })
  client.write('settings', {
    locale: 'en_us',
    viewDistance: 10,
    chatFlags: 0,
    chatColors: true,
    skinParts: 0x7f,
    mainHand: 1,
    enableTextFiltering: false,
    enableServerListing: true,
    particleStatus: 0
  })
}

function login (o, { since, finish, connect, setOnTimeout, setCleanup }) {
  const options = {
    host: o.host,
    port: o.port,
    fakeHost: o.serverHost,
    username: o.username,
    version: o.version,
    connect,
    hideErrors: true,
    checkTimeoutInterval: o['keepalive-timeout-ms'] || o['timeout-ms']
  }
  if (o.online) {
    // nmp's client only calls the session server's join when options.haveCredentials is
    // set and client.session holds a profile; a custom auth function provides both
    // without any Microsoft or Mojang account.
    const profileId = (o['profile-id'] || offlineUUID(o.username)).replace(/-/g, '')
    options.sessionServer = o['session-server'].replace(/\/+$/, '')
    options.auth = (client, opts) => {
      client.username = o.username
      client.session = { accessToken: o['access-token'], selectedProfile: { id: profileId, name: o.username } }
      opts.accessToken = o['access-token']
      opts.haveCredentials = true
      opts.connect(client)
    }
  } else {
    options.auth = 'offline'
  }

  const client = mc.createClient(options)
  const r = {
    username: o.username,
    online: o.online,
    uuid: null,
    login_ms: null,
    play_ms: null,
    compression_threshold: null,
    encrypted: false,
    channel: o.channel,
    payloads_sent: 0,
    payloads_echoed: 0,
    bytes_sent: 0,
    bytes_echoed: 0,
    sent_sha256: null,
    echo_sha256: null,
    mismatches: 0,
    keepalives: 0,
    ticks_sent: 0,
    ticks_echoed: 0,
    kicked: false,
    kick_reason: null,
    kick_raw: null,
    end_reason: null,
    titles: [],
    subtitles: [],
    chats: [],
    worlds: [],
    command_roots: null,
    command_trees: [],
    tab_results: [],
    max_keepalive_gap_ms: null
  }
  setOnTimeout(() => r)
  // Once reported (or timed out) the connection is dropped; late events are ignored.
  setCleanup(() => {
    client.on('error', () => {})
    if (client.socket) client.socket.destroy()
  })
  const sentHash = crypto.createHash('sha256')
  const echoHash = crypto.createHash('sha256')
  const expected = []
  let gotLogin = false
  let gotPosition = false
  let playing = false
  let echoesDone = false
  let staying = false
  let ticking = false // --until-kicked with --tick-ms: ticks run until the end
  let lastKeepAlive = null
  let inWorld = { echoes: 0, keepalives: 0 } // received since the current world was entered

  client.on('error', (err) => {
    if (!r.error) r.error = errText(err)
  })
  client.once('success', (p) => {
    // nmp's own listener, registered first, has written Login Acknowledged and
    // entered configuration by now.
    if (o['client-info'] && client.state === mc.states.CONFIGURATION) vanillaConfigStart(client)
    r.login_ms = since()
    r.uuid = p.uuid
    r.compression_threshold = client.compressionThreshold
    r.encrypted = client.cipher != null
  })
  client.on('disconnect', (p) => kicked(p.reason))
  client.on('kick_disconnect', (p) => kicked(p.reason))
  client.once('login', () => { gotLogin = true; maybePlaying() })
  client.on('position', (p) => {
    if (p.teleportId !== undefined && o.mcData.protocol.play.toServer.types.packet_teleport_confirm) {
      client.write('teleport_confirm', { teleportId: p.teleportId })
    }
    gotPosition = true
    maybePlaying()
  })
  client.on('keep_alive', () => {
    if (!playing) return
    const now = since()
    r.max_keepalive_gap_ms = Math.max(r.max_keepalive_gap_ms || 0, now - (lastKeepAlive === null ? r.play_ms : lastKeepAlive))
    lastKeepAlive = now
    r.keepalives++
    inWorld.keepalives++
    maybeDone()
  })
  // Each world the client is put in (a Join Game, or the Respawn a proxy turns a
  // server switch into before 1.20.2), with what it had counted by then.
  const entered = () => {
    if (r.worlds.length < maxShown) r.worlds.push({ ms: since(), keepalives: r.keepalives, ticks_echoed: r.ticks_echoed })
    inWorld = { echoes: 0, keepalives: 0 }
  }
  client.on('login', entered)
  client.on('respawn', entered)
  // Titles: one packet per text from 1.17, one packet with an action before.
  const shown = (list, raw) => {
    const text = plainText(componentObject(raw))
    if (list.length < maxShown && list[list.length - 1] !== text) list.push(text)
  }
  // Chat lines the server (or the proxy) wrote: system chat from 1.19, chat before.
  client.on('system_chat', (p) => shown(r.chats, p.content))
  client.on('chat', (p) => shown(r.chats, p.message))
  client.on('declare_commands', (p) => {
    const root = p.nodes[p.rootIndex]
    r.command_roots = root.children.map((i) => p.nodes[i].extraNodeData && p.nodes[i].extraNodeData.name).sort()
    if (r.command_trees.length < 20) r.command_trees.push(r.command_roots)
  })
  // Completions asked for (--tab) in order; before 1.13 answers carry no id.
  const tabAsked = []
  client.on('tab_complete', (p) => {
    const asked = p.transactionId !== undefined ? tabAsked.find((t) => t.id === p.transactionId) : tabAsked.find((t) => !t.done)
    if (!asked) return
    asked.done = true
    const matches = (p.matches || []).map((m) => typeof m === 'string' ? m : m.match)
    r.tab_results.push({ text: asked.text, start: p.start === undefined ? null : p.start, matches })
  })
  client.on('set_title_text', (p) => shown(r.titles, p.text))
  client.on('set_title_subtitle', (p) => shown(r.subtitles, p.text))
  client.on('title', (p) => {
    if (p.action === 0) shown(r.titles, p.text)
    if (p.action === 1) shown(r.subtitles, p.text)
  })
  client.on('custom_payload', (p) => {
    if (p.channel !== o.channel) return
    if (p.data.length === tickSize && p.data.toString('latin1', 0, 4) === 'tick') {
      r.ticks_echoed++
      inWorld.echoes++
      return
    }
    const want = expected.shift()
    r.payloads_echoed++
    r.bytes_echoed += p.data.length
    echoHash.update(p.data)
    if (!want || !want.equals(p.data)) r.mismatches++
    if (expected.length === 0 && r.payloads_echoed >= o.sizes.length) {
      echoesDone = true
      maybeDone()
    }
  })
  client.on('end', (reason) => {
    r.end_reason = String(reason)
    if (staying) return
    // nmp emits 'end' as soon as the socket's FIN is read, while packets before it may
    // still sit in its async zlib inflate (a compressed Join Game before a kick): report
    // once the deserializer has drained, or after a short grace period.
    const closed = () => {
      if (o['until-kicked']) return report(r.kicked && r.play_ms !== null)
      if (!r.error && !r.kicked) r.error = 'connection closed before the test finished'
      report(false)
    }
    client.deserializer.once('end', closed)
    client.deserializer.resume()
    setTimeout(closed, 1000).unref()
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
    o.sizes.forEach((size, i) => {
      const data = payload(o.fill, i, size)
      expected.push(data)
      sentHash.update(data)
      r.payloads_sent++
      r.bytes_sent += size
      client.write('custom_payload', { channel: o.channel, data })
    })
    if (o.sizes.length === 0) echoesDone = true
    typeCommands()
    maybeDone()
  }

  // typeCommands types --commands, then asks the --tab completions, one per gap.
  function typeCommands () {
    const steps = [
      ...o.commands.map((line) => () => client.chat(line)),
      ...o.tab.map((text, i) => () => {
        tabAsked.push({ id: i + 1, text })
        if (o.mcData.version.version >= 393) client.write('tab_complete', { transactionId: i + 1, text })
        else client.write('tab_complete', { text, assumeCommand: false, lookedAtBlock: undefined })
      })
    ]
    // A step due while the client is between servers (a /server just typed puts
    // a 1.20.2+ client in configuration) waits for it to be back in play, up to
    // 50 tries 100 ms apart, instead of being dropped: a slow machine's switch
    // must not lose a later step.
    const run = (step, tries) => {
      if (client.state !== 'play') {
        if (tries > 0) setTimeout(() => run(step, tries - 1), 100).unref()
        return
      }
      try { step() } catch (err) { if (!r.error) r.error = 'typing: ' + errText(err) }
    }
    steps.forEach((step, i) => {
      setTimeout(() => run(step, 50), o['command-gap-ms'] * (i + 1)).unref()
    })
  }

  function maybeDone () {
    if (o['until-kicked'] && playing && o['tick-ms'] > 0 && !ticking) {
      ticking = true
      startTicks()
      return
    }
    if (staying || o['until-kicked'] || !echoesDone || r.keepalives < o.keepalives) return
    staying = true
    if (o['tick-ms'] > 0) {
      const ticker = startTicks()
      setTimeout(() => clearInterval(ticker), o['stay-ms']).unref()
    }
    setTimeout(() => {
      client.end('done')
      report(r.mismatches === 0 && r.payloads_echoed === o.sizes.length)
    }, o['stay-ms'])
  }

  function startTicks () {
    // A small numbered plugin message every tick: its echoes show which server
    // answers as the player is moved between servers (the limbo answers none). It
    // also tells the server how many worlds the client entered and what it received
    // since the last (server.js --report-alive reports that).
    const ticker = setInterval(() => {
      if (client.state !== 'play') return
      const data = Buffer.alloc(tickSize)
      data.write('tick', 0, 'latin1')
      data.writeUInt32BE(r.ticks_sent, 4)
      data.writeUInt32BE(r.worlds.length, 8)
      data.writeUInt32BE(inWorld.echoes, 12)
      data.writeUInt32BE(inWorld.keepalives, 16)
      r.ticks_sent++
      client.write('custom_payload', { channel: o.channel, data })
    }, o['tick-ms'])
    client.once('end', () => clearInterval(ticker))
    return ticker
  }

  function report (ok) {
    if (r.sent_sha256 !== null) return
    r.sent_sha256 = sentHash.digest('hex')
    r.echo_sha256 = echoHash.digest('hex')
    // Kicked on purpose, the client may still have been writing (a teleport confirm,
    // a keep-alive answer) when the server closed: that write fails, and is no fault.
    const closingRace = o['until-kicked'] && r.kicked && /ended by the other party|EPIPE|ECONNRESET/.test(r.error || '')
    finish({ ok: ok && (o['until-kicked'] || !r.kicked) && (!r.error || closingRace), ...r })
  }
}

function offlineUUID (name) {
  const h = crypto.createHash('md5').update('OfflinePlayer:' + name, 'utf8').digest()
  h[6] = (h[6] & 0x0f) | 0x30
  h[8] = (h[8] & 0x3f) | 0x80
  return h.toString('hex')
}

// decode parses clientbound packets (packet id + payload, as hex) of one version and
// state the way nmp's client does and reports, per packet, its name, its fields and
// how many of its bytes the definition read: a check of another encoder against
// nmp's protocol definitions.
function decode (job) {
  const { version, state, packets } = job
  if (!nmpRequire('minecraft-data')(version)) throw new Error(`unknown version ${version}`)
  if (!Array.isArray(packets)) throw new Error('decode.packets must be an array of hex strings')
  const { createDeserializer } = nmpRequire('minecraft-protocol/src/transforms/serializer')
  const parser = createDeserializer({ state, isServer: false, version, noErrorLogging: true })
  const results = packets.map((hex) => {
    const buf = Buffer.from(hex, 'hex')
    try {
      const p = parser.parsePacketBuffer(buf)
      return { name: p.data.name, params: p.data.params, read: p.metadata.size, length: buf.length }
    } catch (err) {
      return { error: errText(err), length: buf.length }
    }
  })
  return { mode: 'decode', ok: true, version, state, results }
}

// serve runs the jobs read from stdin until it closes: one after another, except
// that a job with an "id" runs alongside the rest and its result carries the id.
async function serve () {
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity })
  const running = new Set()
  for await (const line of lines) {
    if (!line.trim()) continue
    let o
    let id
    try {
      const job = JSON.parse(line)
      id = job.id
      delete job.id
      if (job.decode) {
        emit({ ...decode(job.decode), ...tag(id) })
        continue
      }
      o = options(job)
    } catch (err) {
      emit({ ok: false, error: `bad job: ${errText(err)}`, ...tag(id) })
      continue
    }
    if (id === undefined) {
      emit(await run(o))
      continue
    }
    const p = run(o).then((r) => emit({ ...r, id }))
    running.add(p)
    p.finally(() => running.delete(p))
  }
  await Promise.all(running)
  process.exit(0)
}

function tag (id) {
  return id === undefined ? {} : { id }
}

async function main () {
  let cli
  try {
    cli = parseArgs({ options: { ...spec, serve: { type: 'boolean' }, 'exit-with-stdin': { type: 'boolean' }, help: { type: 'boolean' } }, strict: true }).values
  } catch (e) {
    fail('client', `${e.message}\n${usage}`)
  }
  if (cli.help) {
    console.log(usage)
    process.exit(0)
  }
  if (cli.serve) return serve()
  const exitWithStdin = cli['exit-with-stdin']
  delete cli.serve
  delete cli['exit-with-stdin']
  delete cli.help
  let o
  try {
    o = options(cli)
  } catch (err) {
    fail(cli.ping ? 'ping' : 'login', `${err.message}\n${usage}`)
  }
  if (exitWithStdin) exitWhenOrphaned()
  emit(await run(o))
  process.exit(0)
}

main()
