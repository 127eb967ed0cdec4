// `npm test`: type-check, then run the whole suite once per storage back end — PGlite
// always, PostgreSQL when one is reachable (required when CI=true or
// BANK_TEST_REQUIRE_POSTGRES=1) — and print one closing line for both.
// Options: `npm test -- test/users` runs only files under the given paths.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { ensureDependencies, root } from './ensure-deps.mjs'

ensureDependencies()

const adminUrl = process.env.BANK_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const requirePostgres = process.env.CI === 'true' || process.env.BANK_TEST_REQUIRE_POSTGRES === '1'

function testFiles(paths) {
  const found = []
  const walk = (p) => {
    const stat = fs.statSync(p)
    if (stat.isDirectory()) for (const entry of fs.readdirSync(p).sort()) walk(path.join(p, entry))
    else if (p.endsWith('.test.ts')) found.push(p)
  }
  for (const p of paths.length ? paths : ['test']) walk(path.resolve(root, p))
  return found
}

function reachable(url) {
  const { hostname, port } = new URL(url)
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname, port: Number(port || 5432) })
    socket.setTimeout(1000)
    socket.once('connect', () => (socket.destroy(), resolve(true)))
    socket.once('error', () => resolve(false))
    socket.once('timeout', () => (socket.destroy(), resolve(false)))
  })
}

const typecheck = spawnSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', root], { stdio: 'inherit' })
if (typecheck.status !== 0) {
  process.stderr.write('type check failed\n')
  process.exit(1)
}

const files = testFiles(process.argv.slice(2))
const backends = ['pglite']
if (await reachable(adminUrl)) backends.push('postgres')
else if (requirePostgres) {
  process.stderr.write(`PostgreSQL is required here but does not answer at ${adminUrl}\n`)
  process.exit(1)
} else process.stderr.write(`note: no PostgreSQL at ${adminUrl}; the suite runs on PGlite only\n`)

let passed = 0
let failed = 0
const summary = []
for (const backend of backends) {
  const tap = path.join(os.tmpdir(), `bank-test-${process.pid}-${backend}.tap`)
  process.stdout.write(`\n=== storage: ${backend} (${files.length} files) ===\n`)
  const run = spawnSync(
    process.execPath,
    [
      '--import', 'tsx',
      '--test',
      '--test-concurrency=2',
      '--test-timeout=120000',
      '--test-reporter=spec', '--test-reporter-destination=stdout',
      '--test-reporter=tap', `--test-reporter-destination=${tap}`,
      ...files,
    ],
    { cwd: root, stdio: 'inherit', env: { ...process.env, BANK_TEST_STORAGE: backend } },
  )
  const text = fs.existsSync(tap) ? fs.readFileSync(tap, 'utf8') : ''
  const count = (name) => Number(new RegExp(`^# ${name} (\\d+)$`, 'm').exec(text)?.[1] ?? 0)
  let pass = count('pass')
  let fail = count('fail') + count('cancelled')
  if (run.status !== 0 && fail === 0) fail = 1
  passed += pass
  failed += fail
  summary.push(`${backend}: ${pass} passed, ${fail} failed`)
  fs.rmSync(tap, { force: true })
}
process.stdout.write(`\n${summary.join('\n')}\n`)
process.stdout.write(`all: ${passed} passed, ${failed} failed\n`)
process.exit(failed === 0 && passed > 0 ? 0 : 1)
