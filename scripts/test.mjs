// `npm test`: type-check, then run the whole suite once per storage back end — PGlite
// always, PostgreSQL when one is reachable (required when CI=true or
// BANK_TEST_REQUIRE_POSTGRES=1) — and print one closing line for both.
// Options: `npm test -- test/users` runs only files under the given paths.
// Settings: BANK_TEST_CONCURRENCY (test files at once, default 2), BANK_TEST_BUNDLE=0 (run
// the TypeScript through tsx instead of a bundle, as `node --import tsx --test` would).
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { ensureDependencies, root } from './ensure-deps.mjs'

ensureDependencies()

const adminUrl = process.env.BANK_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const requirePostgres = process.env.CI === 'true' || process.env.BANK_TEST_REQUIRE_POSTGRES === '1'
const concurrency = Number(process.env.BANK_TEST_CONCURRENCY ?? 2)
const started = Date.now()

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

/**
 * Compiles the test files, with everything of this repository they import, into one
 * bundle per file (node_modules stay external). A file then loads without the tsx loader,
 * whose hooks cost each test process about a CPU-second on the hundreds of modules it
 * imports; the code run is the same TypeScript, compiled by the same esbuild tsx uses.
 * `import.meta.url` keeps naming each source file, so paths relative to it still hold.
 * Returns the compiled path of each file, or undefined to run them through tsx.
 */
async function bundleTests(files, extraEntries) {
  if (process.env.BANK_TEST_BUNDLE === '0') return undefined
  let esbuild
  try {
    esbuild = await import('esbuild')
  } catch {
    return undefined // esbuild comes with tsx; without it the suite runs through tsx.
  }
  const outdir = path.join(root, 'node_modules', '.cache', 'bank-test', String(process.pid))
  const sourceUrls = {
    name: 'source-urls',
    setup(build) {
      build.onLoad({ filter: /\.ts$/ }, async (args) => {
        const text = await fs.promises.readFile(args.path, 'utf8')
        return { contents: text.replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)), loader: 'ts' }
      })
    },
  }
  const entries = [...files, ...extraEntries]
  const outName = (file) => {
    const relative = path.relative(root, file)
    return (relative.startsWith('..') ? path.join('outside', path.basename(file)) : relative).replace(/\.ts$/, '')
  }
  await esbuild.build({
    entryPoints: entries.map((file) => ({ in: file, out: outName(file) })),
    outdir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    sourcemap: 'inline',
    sourcesContent: false,
    plugins: [sourceUrls],
    logLevel: 'warning',
  })
  const compiled = new Map(entries.map((file) => [file, path.join(outdir, `${outName(file)}.mjs`)]))
  return { outdir, compiled }
}

const typecheck = spawnSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', root], { stdio: 'inherit' })
if (typecheck.status !== 0) {
  process.stderr.write('type check failed\n')
  process.exit(1)
}

const files = testFiles(process.argv.slice(2))

// Files whose subject does not depend on the storage back end — the CLI's parsing, output
// and exit codes, the documents, the contract's reachability, the calendar, the settings,
// the group committer, the $SRV protocol, the decode step's fuzzing (what storage may
// refuse is tested on both back ends by test/hardening/unstorable-text) — run on one pass
// only (the last, PostgreSQL when there is one), which saves a hundred CLI processes and a
// dozen banks per extra pass. Run directly, they run anywhere.
const storageIndependent = /^test\/(cli|docs|contract|compat)\/|^test\/calendar\/sa-calendar\.|^test\/config\.|^test\/hardening\/batch-isolation\.|^test\/transport\/(micro-protocol|fuzz)\.|^test\/ledger\/ledger-cli\./
const filesFor = (backend, backends) =>
  backend === backends.at(-1) ? files : files.filter((file) => !storageIndependent.test(path.relative(root, file).split(path.sep).join('/')))
const templates = path.join(root, 'test/support/templates.ts')
const cli = path.join(root, 'src/cli/main.ts')
const bundle = await bundleTests(files, [templates, cli])
const runner = bundle ? ['--enable-source-maps'] : ['--import', 'tsx']
const compiled = (file) => bundle?.compiled.get(file) ?? file

const backends = ['pglite']
if (await reachable(adminUrl)) backends.push('postgres')
else if (requirePostgres) {
  process.stderr.write(`PostgreSQL is required here but does not answer at ${adminUrl}\n`)
  process.exit(1)
} else process.stderr.write(`note: no PostgreSQL at ${adminUrl}; the suite runs on PGlite only\n`)

let passed = 0
let failed = 0
const summary = []
try {
  for (const backend of backends) {
    const env = { ...process.env, BANK_TEST_STORAGE: backend }
    // The CLI tests start the CLI a hundred times; compiled, each start costs a third.
    if (bundle) env.BANK_TEST_CLI = compiled(cli)
    // The pre-migrated template of this back end, built once here rather than by the first
    // test files at once; templates of other migration sets are dropped.
    const prepare = spawnSync(
      process.execPath,
      [...runner, '--input-type=module', '-e', `await (await import(${JSON.stringify(pathToFileURL(compiled(templates)).href)})).prepareTemplates(${JSON.stringify(backend)})`],
      { cwd: root, stdio: 'inherit', env },
    )
    if (prepare.status !== 0) process.stderr.write(`note: could not prepare the ${backend} template; each test file builds it if missing\n`)
    const tap = path.join(os.tmpdir(), `bank-test-${process.pid}-${backend}.tap`)
    const passFiles = filesFor(backend, backends)
    // Without files `node --test` would look for tests by itself; a pass with none is empty.
    if (passFiles.length === 0) {
      summary.push(`${backend}: no files for this back end`)
      continue
    }
    process.stdout.write(`\n=== storage: ${backend} (${passFiles.length} files) ===\n`)
    const run = spawnSync(
      process.execPath,
      [
        ...runner,
        '--test',
        `--test-concurrency=${concurrency}`,
        '--test-timeout=120000',
        '--test-reporter=spec', '--test-reporter-destination=stdout',
        '--test-reporter=tap', `--test-reporter-destination=${tap}`,
        ...passFiles.map(compiled),
      ],
      { cwd: root, stdio: 'inherit', env },
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
} finally {
  if (bundle) fs.rmSync(bundle.outdir, { recursive: true, force: true })
}
process.stdout.write(`\n${summary.join('\n')}\n`)
process.stdout.write(`all: ${passed} passed, ${failed} failed (${Math.round((Date.now() - started) / 1000)} s)\n`)
process.exit(failed === 0 && passed > 0 ? 0 : 1)
