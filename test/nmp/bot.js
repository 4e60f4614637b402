'use strict'
// A client that obeys physics (mineflayer, whose prismarine-physics simulates
// vanilla gravity and collisions) for the bot-verification tests. It joins,
// lets physics run, types --commands once it stands on the ground, and prints
// ONE JSON line when it is kicked, leaves or times out: the positions it went
// through, the chat and titles it was shown, whether it was kicked and why.
//   node bot.js --port N --version V --username NAME [--host H] [--server-host NAME]
//               [--commands "/register a a\n..."] [--cheat teleport] [--timeout-ms N] [--exit-with-stdin]
// --cheat teleport: once spawned, the bot claims to stand on the ground at once
// --cheat hover: once spawned, the bot reports where it was put, then nothing
// --cheat replay: once spawned, the bot computes vanilla's fall from where it
//   was put (velY = (velY - 0.08) * 0.98 per tick) and sends every height of
//   it at once, then the landing: right heights, no real time
// (an impossible fall), as a bot that fakes its position would.

const { parseArgs } = require('node:util')
const mineflayer = require('mineflayer')

const { values: o } = parseArgs({
  options: {
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string' },
    'server-host': { type: 'string' },
    version: { type: 'string' },
    username: { type: 'string', default: 'Bot' },
    commands: { type: 'string', default: '' },
    cheat: { type: 'string', default: '' },
    'timeout-ms': { type: 'string', default: '30000' },
    'exit-with-stdin': { type: 'boolean', default: false }
  }
})
if (!o.port || !o.version) {
  console.error('usage: node bot.js --port N --version V [--username NAME] [--commands LIST] [--cheat teleport]')
  process.exit(2)
}

const started = Date.now()
const result = { ok: false, version: o.version, username: o.username, spawned: false, landed: false, kicked: false, kick_reason: '', error: '', chats: [], titles: [], positions: [], worlds: 0 }
let done = false
function finish () {
  if (done) return
  done = true
  result.elapsed_ms = Date.now() - started
  process.stdout.write(JSON.stringify(result) + '\n', () => process.exit(0))
}
function plain (v) {
  if (v == null) return ''
  if (typeof v === 'string') {
    try { return plain(JSON.parse(v)) } catch { return v }
  }
  if (v.type === 'string' && 'value' in v) return plain(v.value)
  if (v.type === 'compound' && v.value) return plain(Object.fromEntries(Object.entries(v.value).map(([k, x]) => [k, x.value])))
  if (v.text && typeof v.text === 'object') return plain(v.text)
  let s = typeof v.text === 'string' ? v.text : (v[''] || '')
  if (Array.isArray(v.extra)) s += v.extra.map(plain).join('')
  return s
}

const bot = mineflayer.createBot({
  host: o.host, port: Number(o.port), username: o.username, version: o.version, auth: 'offline',
  fakeHost: o['server-host'], hideErrors: true, checkTimeoutInterval: 60000
})
// connected_at (ms since the epoch) lets a caller time the login from the
// connection, without node's start-up.
bot._client.on('connect', () => { result.connected_at = Date.now() })
bot.on('login', () => { result.worlds++ })
bot._client.on('respawn', () => { result.worlds++ })
// mineflayer's 'spawn' waits for a health update a limbo never sends: the
// first position the server gives is the spawn.
bot.once('forcedMove', () => {
  result.spawned = true
  if (o.cheat === 'teleport') {
    // Claim the ground at once: the position physics sends next is on it.
    bot.entity.position.y = 65
  }
  if (o.cheat === 'hover' || o.cheat === 'replay') {
    bot.physicsEnabled = false // mineflayer has confirmed the teleport and sent the spawn position
  }
  if (o.cheat === 'replay') {
    const { x, z } = bot.entity.position
    let y = bot.entity.position.y
    let v = 0
    const send = (y, onGround) => bot._client.write('position', { x, y, z, onGround, flags: { onGround, hasHorizontalCollision: false } })
    while (true) {
      v = (v - 0.08) * 0.98
      y += v
      if (y <= 65) break
      send(y, false)
      if (result.positions.length < 200) result.positions.push(Math.round(y * 1e4) / 1e4)
    }
    send(65, true)
    result.positions.push(65)
  }
})
let typed = false
bot.on('move', () => {
  const p = bot.entity.position
  if (result.positions.length < 200) result.positions.push(Math.round(p.y * 1e4) / 1e4)
  if (bot.entity.onGround && !result.landed) {
    result.landed = true
    if (!typed) {
      typed = true
      const lines = o.commands.split('\n').filter(Boolean)
      lines.forEach((l, i) => setTimeout(() => bot.chat(l), 300 * (i + 1)))
    }
  }
})
bot.on('messagestr', (m) => { if (result.chats.length < 200) result.chats.push(m) })
bot.on('title', (t) => { if (result.titles.length < 200) result.titles.push(plain(t)) })
bot.on('kicked', (reason) => { result.kicked = true; result.kick_reason = plain(reason); result.ok = result.spawned; finish() })
bot.on('error', (e) => { result.error = String(e && e.message ? e.message : e) })
bot.on('end', () => finish())
setTimeout(() => { result.error = result.error || 'timeout'; finish() }, Number(o['timeout-ms']))
if (o['exit-with-stdin']) {
  process.stdin.on('end', () => process.exit(0))
  process.stdin.resume()
}
