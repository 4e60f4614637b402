'use strict'
// Helpers shared by server.js and client.js: loading the exact modules
// minecraft-protocol itself uses, reading chat components, one-line JSON output.

const path = require('node:path')

const nmpDir = path.dirname(require.resolve('minecraft-protocol/package.json'))

// nmpRequire loads a module the way minecraft-protocol resolves it, so a patch or a
// data lookup hits the very instance nmp uses (not a second copy).
function nmpRequire (name) {
  return require(require.resolve(name, { paths: [nmpDir] }))
}

// jsonLine is obj as one line of JSON (bigints as strings), newline included.
function jsonLine (obj) {
  return JSON.stringify(obj, (_, v) => typeof v === 'bigint' ? v.toString() : v) + '\n'
}

// emit prints one JSON line on stdout; the Go harness reads stdout line by line.
function emit (obj) {
  process.stdout.write(jsonLine(obj))
}

// fail reports a usage or setup error the way the Go side expects and exits.
function fail (mode, message) {
  emit({ mode, ok: false, error: message })
  process.exit(2)
}

// exitWhenOrphaned ends the process when its parent closes our stdin, so a test that
// dies (or is killed) never leaves node processes behind. Only with --exit-with-stdin:
// a shell's background job has /dev/null as stdin. onData, if given, sees what is typed.
function exitWhenOrphaned (onData = () => {}) {
  process.stdin.setEncoding('utf8')
  process.stdin.on('data', onData)
  process.stdin.on('end', () => process.exit(0))
  process.stdin.on('error', () => process.exit(0))
  process.stdin.resume()
}

// simplifyNbt turns nmp's typed NBT tree ({type, value}) into plain JSON.
function simplifyNbt (n) {
  if (n == null || typeof n !== 'object' || !('type' in n)) return n
  switch (n.type) {
    case 'compound': {
      const out = {}
      for (const [k, v] of Object.entries(n.value)) out[k] = simplifyNbt(v)
      return out
    }
    case 'list':
      return (n.value.value || []).map(v => simplifyNbt({ type: n.value.type, value: v }))
    default:
      return n.value
  }
}

// componentObject decodes a chat component as it came off the wire: a JSON string
// (before 1.20.3) or an NBT tree (1.20.3+).
function componentObject (raw) {
  if (raw == null) return null
  if (typeof raw === 'string') {
    try { return JSON.parse(raw) } catch { return raw }
  }
  return simplifyNbt(raw)
}

// plainText flattens a chat component (text, extra, translate+with) to its visible text.
function plainText (c) {
  if (c == null) return ''
  if (typeof c === 'string' || typeof c === 'number' || typeof c === 'boolean') return String(c)
  if (Array.isArray(c)) return c.map(plainText).join('')
  let s = ''
  if (c.text !== undefined) s += plainText(c.text)
  else if (c[''] !== undefined) s += plainText(c[''])
  if (c.translate !== undefined) {
    s += c.translate
    if (Array.isArray(c.with) && c.with.length) s += ' ' + c.with.map(plainText).join(' ')
  }
  if (Array.isArray(c.extra)) s += c.extra.map(plainText).join('')
  return s
}

module.exports = { nmpRequire, emit, jsonLine, fail, exitWhenOrphaned, componentObject, plainText }
