import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, test } from 'node:test'
import { fileURLToPath, pathToFileURL } from 'node:url'

// scripts/test-context.mjs makes node:test's async hook lighter in `npm test`'s processes.
// What the hook decides must not change: a test declared in a suite's function (after an
// await, as a file imported by a group's suite declares its tests) joins that suite, an
// uncaught exception or unhandled rejection fails the test it came from, and one thrown after
// its test ended is reported as such. A script declaring those cases runs with the lighter
// hook and with node:test's own (BANK_TEST_ASYNC_HOOK=node); the two reports must agree.
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bank-test-context-'))
after(() => fs.rmSync(dir, { recursive: true, force: true }))

const script = path.join(dir, 'cases.mjs')
fs.writeFileSync(script, `
const context = await import(${JSON.stringify(pathToFileURL(path.join(root,
  'scripts/test-context.mjs')).href)})
const { after, before, describe, test } = await import('node:test')
const wait = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
describe('file', async () => {
  await wait(1)
  before(async () => { await wait(1) })
  describe('nested', () => {
    test('declares a test inside itself', async () => { await wait(1); test('inner', () => {}) })
  })
  test('throws from a timer', async () => {
    setTimeout(() => { throw new Error('thrown from a timer') }, 1)
    await wait(30)
  })
  test('leaves a rejection unhandled', async () => {
    void Promise.reject(new Error('left unhandled'))
    await wait(30)
  })
  test('throws after it ended', () => {
    setTimeout(() => { throw new Error('thrown late') }, 20)
  })
  test('passes', async () => { await wait(40) })
  after(() => console.log('# lighter hooks: ' + context.lighterHooks()))
})
`)

/** The script's TAP report, with its timings taken out. */
function report(env: Record<string, string>): Promise<string> {
  const clean: NodeJS.ProcessEnv = { ...process.env, ...env }
  delete clean.NODE_TEST_CONTEXT
  if (!env.BANK_TEST_ASYNC_HOOK) delete clean.BANK_TEST_ASYNC_HOOK
  const child = spawn(process.execPath, ['--test-reporter=tap', script],
    { env: clean, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (out += chunk))
  return new Promise((resolve) => child.once('close', () => resolve(out
    .split('\n').filter((line) => !/duration_ms|^\s+at |^\s+(stack|location):/.test(line))
    .join('\n'))))
}

/** The verdict lines (`ok` and `not ok`, indented by depth) and the errors named. */
const verdicts = (tap: string) => tap.split('\n').filter((line) =>
  /^\s*(not ok|ok) \d|error: '|generated asynchronous activity after the test ended/.test(line))

test('test context - the lighter hook places tests and their errors as node:test\'s own does', async () => {
  const [lighter, own] = await Promise.all([report({}), report({ BANK_TEST_ASYNC_HOOK: 'node' })])
  assert.match(lighter, /# lighter hooks: 1/)
  assert.match(own, /# lighter hooks: 0/)
  assert.deepEqual(verdicts(lighter), verdicts(own))
  const lines = verdicts(lighter)
  // Declared inside the suite after an await, the tests are the suite's (indented under it).
  assert.ok(lines.includes('            ok 1 - inner'), lighter)
  assert.ok(lines.includes('    not ok 2 - throws from a timer'), lighter)
  assert.ok(lines.some((line) => line.includes("error: 'thrown from a timer'")), lighter)
  assert.ok(lines.includes('    not ok 3 - leaves a rejection unhandled'), lighter)
  assert.ok(lines.some((line) => line.includes("error: 'left unhandled'")), lighter)
  assert.ok(lines.includes('    ok 4 - throws after it ended'), lighter)
  assert.ok(lines.some((line) => line.includes('Test "throws after it ended"') &&
    line.includes('generated asynchronous activity after the test ended')), lighter)
  assert.ok(lines.includes('    ok 5 - passes'), lighter)
})
