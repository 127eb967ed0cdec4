import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { after, before, describe, test } from 'node:test'
import { z } from 'zod'
import { ManualClock } from '../../src/clock.ts'
import { codesOf, errorTypes } from '../../src/contract/error-types.ts'
import { allOperations } from '../../src/contract/index.ts'
import { bankEnv, removeTempDirs, runBank } from '../cli/run-bank.ts'
import { useTestBank, type TestBank } from '../support/harness.ts'
import { blocksOf, commandsOf, guidePages, kindOf, type Block } from './support/guide-blocks.ts'
import {
  fixtures, installSdkAlias, type Prepared, type RunningProgram,
} from './support/guide-fixtures.ts'

// Every fenced code block of the partner guides (docs/guides/) and the operators' pages
// (docs/operators/, docs/operations.md) is run here, as the examples are (test/examples/),
// or is marked in the Markdown as not run, with the reason (the markers: guide-blocks.ts).
// `ts` blocks run as programs (`node --import tsx`) in a directory laid out as the bank's
// own (`.data/nats-url` and `.data/operator-token` of this test's bank, `@partner-bank/client`
// and `bank` installed), so that a block runs as a reader who saved it there would run it.
// `sh` blocks run each `bank …` command through the CLI and expect it to succeed. `json`
// blocks are parsed, and held to the contract's schema where they show an operation's
// request or reply. Each page that runs something gets its own sandbox bank, whose clock
// starts where the guides' stories start (Sunday 22 November 2026, 21:29 SAST).

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const guideClockStart = '2026-11-22T19:29:38Z'
const pages = guidePages(root).map((page) => ({ page, blocks: blocksOf(root, page) }))
const runs = (block: Block) => ['ts', 'sh'].includes(kindOf(block))
const checked = (block: Block) => runs(block) || kindOf(block) === 'json'
const blockTimeoutMs = 180_000

const fixtureOf = (block: Block) => fixtures[block.markers.setup?.fixture ?? '']

/** Why a block's markers are not as guide-blocks.ts describes them, if they are not. */
function markerProblems(block: Block): string[] {
  const { markers } = block
  const kind = kindOf(block)
  const subject = markers.json?.kind === 'error' ? undefined : markers.json?.subject
  const lang = block.lang || '(no language)'
  const checks: [boolean, string][] = [
    [kind === 'unknown', `a \`${lang}\` block that is not run: mark it <!-- not-run: reason -->`],
    [!!markers.setup && !fixtureOf(block), `no setup named ${markers.setup?.fixture}`],
    [!!markers.setup && !runs(block), 'a setup on a block that is not run'],
    [markers.backgroundUntil !== undefined && kind !== 'ts', 'background on a block not ts'],
    [
      !!fixtureOf(block)?.drive && markers.backgroundUntil === undefined,
      `setup ${markers.setup?.fixture} serves until stopped: say <!-- background: until "…" -->`,
    ],
    [!!markers.json && kind !== 'json', 'a json marker on a block that is not json'],
    [!!subject && !allOperations().some((op) => op.subject === subject), `no operation ${subject}`],
    [markers.exit !== undefined && kind !== 'sh', 'an exit marker on a block that is not sh'],
  ]
  const unknown = markers.unknown.map((text) => `an unknown marker <!-- ${text} -->`)
  return [...unknown, ...checks.filter(([broken]) => broken).map(([, problem]) => problem)]
}

test('guides - every code block of the guides and the operators\' pages is run, or marked with the reason it is not', (t) => {
  const all = pages.flatMap(({ blocks }) => blocks)
  const where = (block: Block) => `${block.page}:${block.line}`
  const problems = all.flatMap((block) => markerProblems(block).map((p) => `${where(block)}: ${p}`))
  assert.deepEqual(problems, [])
  for (const block of all.filter((b) => kindOf(b) === 'not-run')) {
    assert.ok(block.markers.notRun!.length > 10, `${where(block)}: say why it is not run`)
  }
  const count = (kind: string) => all.filter((block) => kindOf(block) === kind).length
  const kinds = ['ts', 'sh', 'json', 'text', 'not-run']
  t.diagnostic(`${all.length} blocks: ${kinds.map((kind) => `${kind} ${count(kind)}`).join(', ')}`)
})

/** The error reply's body, as src/contract/asyncapi.ts documents it (ErrorBody). */
const errorBody = z.strictObject({
  error: z.strictObject({
    code: z.int().min(400).max(599),
    type: z.enum(Object.keys(errorTypes) as [keyof typeof errorTypes]),
    message: z.string(),
    details: z.array(z.unknown()),
  }),
})

function checkJson(block: Block): void {
  const value: unknown = JSON.parse(block.text)
  const marker = block.markers.json
  if (!marker) return
  if (marker.kind === 'error') {
    const body = errorBody.parse(value)
    const { code, type } = body.error
    assert.ok(codesOf(type).includes(code), `the code of ${type}`)
    return
  }
  const op = allOperations().find((o) => o.subject === marker.subject)!
  const parsed = (marker.kind === 'reply' ? op.response : op.request).safeParse(value)
  assert.ok(parsed.success, `not a ${marker.kind} of ${marker.subject}: ${parsed.error?.message}`)
}

/** A directory laid out as the bank's, where a reader saves a guide's program and runs it. */
function bankDirectory(tb: TestBank): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bank-guide-'))
  fs.writeFileSync(path.join(dir, 'package.json'), '{ "private": true, "type": "module" }\n')
  fs.mkdirSync(path.join(dir, 'node_modules/.bin'), { recursive: true })
  installSdkAlias(dir, root)
  fs.symlinkSync(path.join(root, 'node_modules/tsx'), path.join(dir, 'node_modules/tsx'))
  fs.symlinkSync(path.join(root, 'bin/bank.js'), path.join(dir, 'node_modules/.bin/bank'))
  fs.mkdirSync(path.join(dir, '.data'))
  fs.writeFileSync(path.join(dir, '.data/nats-url'), `${tb.natsUrl}\n`)
  fs.writeFileSync(path.join(dir, '.data/operator-token'), `${tb.operatorToken}\n`, { mode: 0o600 })
  return dir
}

/** The environment a reader's shell would give a program: no bank settings of this process's. */
function programEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const key of Object.keys(env)) if (/^(NATS_|BANK_|DATABASE_URL$|NODE_TEST_CONTEXT$)/.test(key)) delete env[key]
  return { ...env, ...extra }
}

interface Program extends RunningProgram {
  block: Block
  child: ChildProcess
  exited: Promise<number | null>
  output(): string
}

/**
 * Every program still running when this process ends is stopped: a page cut short by its time
 * limit does not get to stop its own, and one left running held its port for the next run.
 */
const running = new Set<ChildProcess>()
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL')
})

/** Starts a `ts` block as `node --import tsx <file>.ts` in the bank's directory. */
function startProgram(block: Block, dir: string, env: Record<string, string>): Program {
  const fixture = fixtureOf(block)
  const file = `${path.basename(block.page, '.md')}-${block.line}.ts`
  const program = `${fixture?.prelude ?? ''}${block.text}${fixture?.epilogue ?? ''}`
  fs.writeFileSync(path.join(dir, file), program)
  const child = spawn(process.execPath, ['--import', 'tsx', file], {
    cwd: dir,
    env: programEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  running.add(child)
  child.once('exit', () => running.delete(child))
  let stdout = ''
  let stderr = ''
  const waiting: { text: string; resolve(line: string): void }[] = []
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk
    for (const wait of waiting.splice(0)) {
      const line = stdout.split('\n').find((l) => l.includes(wait.text))
      if (line === undefined) waiting.push(wait)
      else wait.resolve(line)
    }
  })
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve))
  const output = () => `${block.page}:${block.line}\nstdout:\n${stdout}\nstderr:\n${stderr}`
  return {
    block, child, exited, output,
    waitFor: (text) =>
      new Promise<string>((resolve, reject) => {
        const line = stdout.split('\n').find((l) => l.includes(text))
        if (line !== undefined) return resolve(line)
        waiting.push({ text, resolve })
        void exited.then((code) => {
          reject(new Error(`the program ended (${code}) before printing "${text}"\n${output()}`))
        })
      }),
  }
}

async function stopProgram(program: Program): Promise<void> {
  const { child } = program
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
  await program.exited
}

/** A block's `<name>` placeholders, filled from its setup's values. */
function fill(words: string[], values: Record<string, string>, source: string): string[] {
  return words.map((word) =>
    word.replace(/<(\w+)>/g, (_, name: string) => {
      if (values[name] !== undefined) return values[name]
      throw new Error(`${source}: no value for <${name}>; name a setup that gives it`)
    }),
  )
}

/** Runs each `bank` command of an `sh` block through the CLI; each must exit as marked (0). */
async function runCommands(tb: TestBank, block: Block, prepared: Prepared): Promise<void> {
  const commands = commandsOf(block.text)
  assert.ok(commands.length > 0, 'an sh block with no command')
  for (const { words, source } of commands) {
    const args = words[0] === 'npx' ? words.slice(1) : words
    const where = `${block.page}:${block.line}`
    assert.equal(args[0], 'bank', `${where}: \`${source}\` is not a bank command: mark it not-run`)
    const filled = fill(args.slice(1), prepared.values, source)
    const run = await runBank(filled, bankEnv(tb, prepared.env))
    const output = `${source}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`
    assert.equal(run.code, block.markers.exit ?? 0, output)
  }
}

function describePage(page: string, blocks: Block[]): void {
  const clock = new ManualClock(guideClockStart)
  const tb = blocks.some(runs) ? useTestBank({ clock }) : undefined
  let dir: string | undefined
  const background: Program[] = []
  before(async () => {
    if (tb) dir = bankDirectory(await tb.ready)
  })
  after(async () => {
    await Promise.all(background.map(stopProgram))
    if (dir) fs.rmSync(dir, { recursive: true, force: true })
    removeTempDirs()
  })

  async function runBlock(block: Block): Promise<void> {
    const kind = kindOf(block)
    if (kind === 'json') return checkJson(block)
    const fixture = fixtureOf(block)
    const prepared = (await fixture?.prepare(tb!)) ?? { env: {}, values: {} }
    prepared.env = { ...prepared.env, ...block.markers.setup?.env }
    if (kind === 'sh') return runCommands(tb!, block, prepared)
    const program = startProgram(block, dir!, prepared.env)
    if (block.markers.backgroundUntil === undefined) {
      assert.equal(await program.exited, 0, program.output())
      return
    }
    const ready = await program.waitFor(block.markers.backgroundUntil)
    if (!fixture?.drive) return void background.push(program)
    try {
      await fixture.drive(tb!, prepared, program, ready)
    } finally {
      await stopProgram(program)
    }
  }

  const timeout = blockTimeoutMs
  for (const block of blocks.filter((b) => markerProblems(b).length === 0 && checked(b))) {
    test(`guides - ${block.page}:${block.line} (${block.lang}) runs as the guide says`, { timeout }, () => runBlock(block))
  }
  const besides = (b: Block) => b.markers.backgroundUntil !== undefined && !fixtureOf(b)?.drive
  if (blocks.some(besides)) {
    test(`guides - ${page}: the programs that ran beside the page's commands end well`, { timeout }, async () => {
      for (const program of background.splice(0)) {
        assert.equal(await program.exited, 0, program.output())
      }
    })
  }
}

for (const { page, blocks } of pages) {
  if (blocks.some(checked)) describe(`guides - ${page}`, () => describePage(page, blocks))
}
