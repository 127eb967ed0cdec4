import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, test } from 'node:test'
import { fileURLToPath } from 'node:url'
// @ts-expect-error scripts/test-args.mjs is plain JavaScript without declarations.
import { defaultStorage, parseTestArgs, UsageError } from '../../scripts/test-args.mjs'

// `npm test`'s arguments (scripts/test-args.mjs, read by scripts/test.mjs): --help prints the
// usage, a mistake is named without a stack trace, and a run of paths runs just those files on
// PGlite without the type check, architecture and lint checks, while `npm test` alone stays the
// whole run CI makes (issue 44: `npm test -- --help` crashed; one file took 93 s).
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bank-runner-'))
after(() => fs.rmSync(dir, { recursive: true, force: true }))

type Parsed = { help: boolean; paths?: string[]; storage?: string; checks?: boolean }
const parse = (...argv: string[]): Parsed => parseTestArgs(argv, { root })
const refusal = (...argv: string[]): string => {
  try {
    parse(...argv)
  } catch (error) {
    assert.ok(error instanceof UsageError, String(error))
    return (error as Error).message
  }
  assert.fail(`${argv.join(' ')} was accepted`)
}

/** Runs scripts/test.mjs as `npm test -- <args>` would, outside this test run's settings. */
function runner(...args: string[]): Promise<{ status: number | null; out: string; err: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const key of Object.keys(env)) {
    if (/^(NODE_TEST_CONTEXT|BANK_TEST_(STORAGE|POOL|RUN_ID|SERVICE))$/.test(key)) delete env[key]
  }
  const child = spawn(process.execPath, [path.join(root, 'scripts/test.mjs'), ...args],
    { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk))
  return new Promise((resolve) => child.once('close', (status) => resolve({ status, out, err })))
}

test('test runner - no arguments is the whole run: every back end, with the checks', () => {
  assert.deepEqual(parse(), { help: false, paths: [], storage: undefined, checks: true })
  assert.equal(defaultStorage([], [], () => false), 'both')
  assert.deepEqual(parse('--no-checks'), { help: false, paths: [], storage: undefined,
    checks: false })
})

test('test runner - paths run on PGlite without the checks unless asked', () => {
  const file = 'test/ledger/row-id.test.ts'
  assert.deepEqual(parse(file), { help: false, paths: [file], storage: undefined, checks: false })
  assert.equal(defaultStorage([file], [file], () => false), 'pglite')
  assert.deepEqual(parse('--checks', '--storage', 'postgres', 'test/users'),
    { help: false, paths: ['test/users'], storage: 'postgres', checks: true })
  assert.equal(parse('--storage=both', file).storage, 'both')
  // Files that test PostgreSQL only would declare no tests on PGlite.
  assert.equal(defaultStorage(['test/chaos'], ['a', 'b'], () => true), 'postgres')
  assert.equal(defaultStorage(['test'], ['a', 'b'], (f: string) => f === 'a'), 'pglite')
})

test('test runner - a mistake in the arguments is named', () => {
  assert.equal(refusal('--frobnicate'), 'unknown option --frobnicate')
  assert.equal(refusal('--storage'), '--storage needs a value: pglite, postgres, both')
  assert.equal(refusal('--storage', 'mysql'), '--storage mysql: not one of pglite, postgres, both')
  assert.equal(refusal('test/no-such-folder'), 'test/no-such-folder: no such file or folder')
  assert.equal(refusal('test/support/harness.ts'),
    'test/support/harness.ts: not a test file (test files end in .test.ts)')
  assert.deepEqual(parse('test/x', '--help'), { help: true })
})

test('test runner - npm test -- --help prints the usage and exits 0', async () => {
  const { status, out, err } = await runner('--help')
  assert.equal(status, 0, err)
  assert.match(out, /^Usage: npm test \[-- \[options\] \[path\.\.\.\]\]/)
  for (const option of ['--storage <pglite|postgres|both>', '--checks', '--no-checks', '--help']) {
    assert.ok(out.includes(option), option)
  }
  assert.equal(err, '')
})

test('test runner - an unknown option exits 2 with a message, not a stack trace', async () => {
  const { status, out, err } = await runner('--frobnicate')
  assert.equal(status, 2)
  assert.equal(out, '')
  assert.equal(err, 'npm test: unknown option --frobnicate\n' +
    'Usage: npm test [-- [options] [path...]]\n(npm test -- --help lists the options)\n')
})

test('test runner - a file run runs that file on PGlite and skips the checks', async () => {
  const file = path.join(dir, 'trivial.test.ts')
  fs.writeFileSync(file, "import { test } from 'node:test'\ntest('one', () => {})\n")
  const { status, out, err } = await runner(file)
  assert.equal(status, 0, `${out}\n${err}`)
  assert.match(out, /=== pglite: 1 files; 1 processes/)
  assert.match(out, /^pglite: 1 passed, 0 failed$/m)
  assert.match(out, /^checks: not run \(a run of paths; --checks runs the type check, architecture and lint\)$/m)
  assert.match(out, /^all: 1 passed, 0 failed /m)
  assert.doesNotMatch(out, /^(postgres|type check|architecture|lint):/m)
})
