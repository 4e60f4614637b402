'use strict'
// A real Minecraft backend (node-minecraft-protocol) for end-to-end tests.
// It accepts logins, spawns the player, echoes every plugin message back on the same
// channel, sends keep-alives, answers status pings, can kick, and reports what it saw
// as one JSON line per event on stdout. Run `node server.js --help` for the flags.

const { parseArgs } = require('node:util')
const crypto = require('node:crypto')
const fs = require('node:fs')
const mc = require('minecraft-protocol')
const { nmpRequire, emit, jsonLine, fail, exitWhenOrphaned } = require('./lib')

const usage = `usage: node server.js --version 1.21.4 [flags]
  --version V              Minecraft version (one of nmp's: ${mc.supportedVersions.join(' ')})
  --host H                 listen address (default 127.0.0.1)
  --port N                 listen port (default 0: any free port; see the "listening" event)
  --motd TEXT              status MOTD (default "nmp backend")
  --max-players N          status max players (default 20)
  --compression-threshold N  Set Compression threshold (default 256; -1 sends no Set Compression)
  --keepalive-ms N         keep-alive interval in play (default 1000)
  --online-mode            verify players against a session server (encryption on)
  --session-server URL     session server base URL for --online-mode (default Mojang's)
  --kick TEXT              kick players with TEXT once they are spawned (play-state Disconnect)
  --kick-users a,b         only kick these usernames (default: everyone)
  --refuse TEXT            refuse logins with TEXT (Login Disconnect instead of Login Success)
  --refuse-users a,b       only refuse these usernames (default: everyone)
  --max-online N           refuse logins with "The server is full!" while N players are on (default: no limit)
  --delay-ms N             a slow start: listen only N ms after starting (default 0)
  --events-file PATH       also append every event to PATH (for a server another program started)
  --report-alive           an "alive" event for each client.js tick: the worlds the client entered so far,
                           and what it received since it entered the last one (tick echoes, keep-alives)
  --commands               declare a vanilla-like command tree (1.13+: say <message>, tp) on join, answer
                           pre-1.13 tab completion with /say and /tp, and report every chat line and
                           command a player sends (events "command" and "chat")
  --exit-with-stdin        exit when stdin closes (the Go harness uses this so no server outlives a test);
                           a "stop" line on stdin stops the server, as a vanilla console does
Events on stdout (one JSON object per line, field "event"): starting (with --delay-ms),
listening, handshake, login, join, alive, command, chat, kick, leave, error.`

let args
try {
  args = parseArgs({
    options: {
      version: { type: 'string' },
      host: { type: 'string', default: '127.0.0.1' },
      port: { type: 'string', default: '0' },
      motd: { type: 'string', default: 'nmp backend' },
      'max-players': { type: 'string', default: '20' },
      'compression-threshold': { type: 'string', default: '256' },
      'keepalive-ms': { type: 'string', default: '1000' },
      'online-mode': { type: 'boolean', default: false },
      'session-server': { type: 'string' },
      kick: { type: 'string' },
      'kick-users': { type: 'string' },
      refuse: { type: 'string' },
      'refuse-users': { type: 'string' },
      'max-online': { type: 'string', default: '0' },
      'delay-ms': { type: 'string', default: '0' },
      'events-file': { type: 'string' },
      'report-alive': { type: 'boolean', default: false },
      commands: { type: 'boolean', default: false },
      'exit-with-stdin': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false }
    },
    strict: true
  }).values
} catch (e) {
  fail('server', `${e.message}\n${usage}`)
}
if (args.help) {
  console.log(usage)
  process.exit(0)
}
if (!args.version) fail('server', 'missing --version\n' + usage)
const mcData = nmpRequire('minecraft-data')(args.version)
if (!mcData || !mc.supportedVersions.some(v => mcData.version.minecraftVersion.startsWith(v))) {
  fail('server', `version ${args.version} is not one minecraft-protocol ${require('minecraft-protocol/package.json').version} supports (${mc.supportedVersions.join(' ')})`)
}
const threshold = intArg('compression-threshold')
const keepAliveMs = intArg('keepalive-ms')
if (keepAliveMs <= 0) fail('server', '--keepalive-ms must be positive')
const kickUsers = userSet(args['kick-users'])
const refuseUsers = userSet(args['refuse-users'])
const delayMs = intArg('delay-ms')
const eventsFile = args['events-file'] ? fs.openSync(args['events-file'], 'a') : null

// event reports one event on stdout and, with --events-file, in that file too.
function event (obj) {
  emit(obj)
  if (eventsFile !== null) fs.writeSync(eventsFile, jsonLine(obj))
}

function userSet (list) {
  return list ? new Set(list.split(',').map(s => s.trim().toLowerCase())) : null
}

function intArg (name) {
  const n = Number(args[name])
  if (!Number.isInteger(n)) fail('server', `--${name} must be an integer, got ${JSON.stringify(args[name])}`)
  return n
}

function picked (text, users, username) {
  return text !== undefined && (users === null || users.has(username.toLowerCase()))
}

if (args['online-mode'] && args['session-server']) {
  // nmp 1.54.0's server builds its session client as yggdrasil.server({agent}) with no
  // host option, so hasJoined always goes to Mojang; point it at the given base URL.
  const yggdrasil = nmpRequire('yggdrasil')
  const original = yggdrasil.server
  yggdrasil.server = (opts) => original({ ...opts, host: args['session-server'].replace(/\/+$/, '') })
}

if (args['exit-with-stdin']) {
  let typed = ''
  exitWhenOrphaned((chunk) => {
    typed = (typed + chunk).slice(-64)
    if (/(^|\n)stop\r?\n/.test(typed)) stop()
  })
}

if (delayMs > 0) {
  // nmp's createServer listens at once; a slow start listens later, as a big
  // server does once its world is loaded.
  const listen = mc.Server.prototype.listen
  mc.Server.prototype.listen = function (...a) {
    setTimeout(() => listen.apply(this, a), delayMs)
  }
  event({ event: 'starting', delay_ms: delayMs })
}

const server = mc.createServer({
  'online-mode': args['online-mode'],
  host: args.host,
  port: Number(args.port),
  version: args.version,
  motd: args.motd,
  maxPlayers: intArg('max-players'),
  keepAlive: true,
  checkTimeoutInterval: keepAliveMs,
  kickTimeout: 30000,
  hideErrors: true,
  errorHandler: (client, err) => {
    event({ event: 'error', username: client.username, error: String(err && err.message ? err.message : err) })
    client.end(String(err && err.message ? err.message : err))
  },
  beforeLogin
})

// beforeLogin runs between Login Start and Login Success: it refuses chosen players, and
// replaces nmp 1.54.0's fixed Set Compression threshold (256) with ours, as nmp writes
// Set Compression and sets its own compressor to 256 right after this hook.
function beforeLogin (client) {
  if (picked(args.refuse, refuseUsers, client.username)) {
    refuse(client)
    return
  }
  const maxOnline = intArg('max-online')
  if (maxOnline > 0 && online.size >= maxOnline) {
    refuse(client, 'The server is full!')
    return
  }
  if (threshold === 256) return
  client.write = function (name, params) {
    if (name !== 'compress') return Object.getPrototypeOf(client).write.call(client, name, params)
    delete client.write
    if (threshold >= 0) client.write('compress', { threshold })
  }
  Object.defineProperty(client, 'compressionThreshold', {
    configurable: true,
    get () { return -2 },
    set () {
      delete client.compressionThreshold
      if (threshold >= 0) client.compressionThreshold = threshold
    }
  })
}

// refuse sends Login Disconnect instead of Login Success. nmp carries on with its
// login steps after beforeLogin returns, so its later writes, the compression switch and
// the state change (which would re-pipe the streams before the disconnect is flushed)
// are turned into no-ops for this connection.
function refuse (client, text = args.refuse) {
  client.kickedAtLogin = true
  event({ event: 'kick', stage: 'login', username: client.username, text })
  client.end(text, JSON.stringify({ text }))
  client.write = () => {}
  Object.defineProperty(client, 'compressionThreshold', { configurable: true, get () { return -2 }, set () {} })
  Object.defineProperty(client, 'state', { configurable: true, get () { return this.protocolState }, set () {} })
}

server.on('listening', () => {
  const a = server.socketServer.address()
  event({ event: 'listening', host: a.address, port: a.port, version: mcData.version.minecraftVersion, protocol: mcData.version.version, online_mode: args['online-mode'] })
})
server.on('error', (err) => {
  event({ event: 'error', error: String(err.message || err) })
  process.exit(1)
})

server.on('connection', (client) => {
  const remote = `${client.socket.remoteAddress}:${client.socket.remotePort}`
  client.once('set_protocol', (p) => {
    event({ event: 'handshake', host: p.serverHost, port: p.serverPort, protocol: p.protocolVersion, next_state: p.nextState, remote })
  })
  client.remote = remote
  // Prepended: nmp's own login_start handler logs the player in synchronously.
  client.prependOnceListener('login_start', (p) => { client.loginStartUUID = p.playerUUID })

  // Plugin messages: hashed and echoed as they arrive. 'packet' fires before nmp's own
  // channel parser rewrites minecraft:register payloads in place.
  const hash = crypto.createHash('sha256')
  let payloads = 0
  let payloadBytes = 0
  let keepAlives = 0
  // The first answered keep-alive and the first plugin message of a connection are
  // events too, so a test can wait for them instead of sleeping.
  client.on('packet', (data, meta) => {
    if (meta.name === 'keep_alive' && keepAlives++ === 0) event({ event: 'first_keepalive', username: client.username })
    if (meta.name === 'settings') event({ event: 'client_information', username: client.username, stage: meta.state, text: data.locale })
    if (meta.name !== 'custom_payload' || !Buffer.isBuffer(data.data)) return
    if (data.channel === 'minecraft:brand') return // a vanilla server keeps the client's brand; it never echoes it
    const copy = Buffer.from(data.data)
    if (payloads === 0) event({ event: 'first_payload', username: client.username })
    if (args['report-alive'] && copy.length === 20 && copy.toString('latin1', 0, 4) === 'tick') {
      // client.js's ticks say what it received since it entered its current world.
      event({
        event: 'alive',
        username: client.username,
        tick: copy.readUInt32BE(4),
        worlds: copy.readUInt32BE(8),
        seen_echoes: copy.readUInt32BE(12),
        seen_keepalives: copy.readUInt32BE(16)
      })
    }
    payloads++
    payloadBytes += copy.length
    hash.update(copy)
    client.write('custom_payload', { channel: data.channel, data: copy })
  })

  client.once('end', (reason) => {
    event({
      event: 'leave',
      username: client.username,
      uuid: client.uuid,
      reason: String(reason),
      payloads,
      payload_bytes: payloadBytes,
      payload_sha256: hash.digest('hex'),
      keepalives: keepAlives
    })
  })
})

// online is who is logged in now, for --max-online.
const online = new Set()

server.on('login', (client) => {
  if (client.kickedAtLogin) return
  online.add(client)
  client.once('end', () => online.delete(client))
  event({
    event: 'login',
    username: client.username,
    uuid: client.uuid,
    login_uuid: client.loginStartUUID,
    host: client.serverHost,
    port: client.serverPort,
    protocol: client.protocolVersion,
    online: args['online-mode'],
    compression: client.compressionThreshold,
    remote: client.remote
  })
})

server.on('playerJoin', (client) => {
  if (client.kickedAtLogin) return
  spawn(client)
  if (args.commands) commands(client)
  event({ event: 'join', username: client.username, uuid: client.uuid, protocol: client.protocolVersion })
  if (picked(args.kick, kickUsers, client.username)) {
    event({ event: 'kick', stage: 'play', username: client.username, text: args.kick })
    client.end(args.kick)
  }
})

// spawn sends what a client needs to leave the loading screen: Join Game (Login),
// the player position, and from 1.20.3 the "start waiting for level chunks" event.
function spawn (client) {
  client.write('login', loginPacket(client))
  client.write('position', {
    x: 0, y: 64, z: 0, yaw: 0, pitch: 0, flags: 0, teleportId: 1, dx: 0, dy: 0, dz: 0
  })
  const gameEvent = mcData.protocol.play.toClient.types.packet_game_state_change
  if (mcData.version.version >= 765 && gameEvent) {
    const reason = gameEvent[1][0].type
    const mapped = Array.isArray(reason) && reason[0] === 'mapper'
    client.write('game_state_change', { reason: mapped ? 'level_chunks_load_start' : 13, gameMode: 0 })
  }
}

// commands gives a player the command tree of a small vanilla server and reports
// what they type: a command the proxy kept for itself never shows up here.
function commands (client) {
  if (mcData.version.version >= 393) {
    const flagsType = mcData.protocol.types.command_node[1][0].type[1]
    const flags = (type, executable) => {
      const f = {}
      for (const field of flagsType) f[field.name] = 0
      f.command_node_type = type
      f.has_command = executable ? 1 : 0
      return f
    }
    client.write('declare_commands', {
      nodes: [
        { flags: flags(0, false), children: [1, 3] },
        { flags: flags(1, false), children: [2], extraNodeData: { name: 'say' } },
        { flags: flags(2, true), children: [], extraNodeData: { name: 'message', parser: 'brigadier:string', properties: 'GREEDY_PHRASE' } },
        { flags: flags(1, true), children: [], extraNodeData: { name: 'tp' } }
      ],
      rootIndex: 0
    })
  }
  const said = (command) => event({ event: 'command', username: client.username, command })
  client.on('chat_command', (p) => said(p.command))
  client.on('chat_command_signed', (p) => said(p.command))
  client.on('chat_message', (p) => event({ event: 'chat', username: client.username, message: p.message }))
  client.on('chat', (p) => {
    if (p.message.startsWith('/')) said(p.message.slice(1))
    else event({ event: 'chat', username: client.username, message: p.message })
  })
  client.on('tab_complete', (p) => {
    if (mcData.version.version >= 393) return
    const matches = ['/say', '/tp'].filter(m => m.startsWith(p.text))
    client.write('tab_complete', { matches })
  })
}

function loginPacket (client) {
  if (mcData.loginPacket) {
    return { ...mcData.loginPacket, entityId: client.id, maxPlayers: server.maxPlayers, enforcesSecureChat: false }
  }
  // Before 1.16 minecraft-data has no sample Join Game packet; these fields cover 1.7-1.15.
  return {
    entityId: client.id,
    gameMode: 0,
    dimension: 0,
    difficulty: 2,
    maxPlayers: server.maxPlayers,
    levelType: 'default',
    reducedDebugInfo: false,
    viewDistance: 10,
    hashedSeed: [0, 0],
    enableRespawnScreen: true
  }
}

function stop () {
  if (server.socketServer) server.close()
  process.exit(0)
}

for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, stop)
