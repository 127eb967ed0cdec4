// `npm test`: type-check, check the architecture rules (scripts/arch.mjs) and the lint rules
// (scripts/lint.mjs), and run the whole suite once per storage back end — PGlite always,
// PostgreSQL when one is reachable (required when CI=true or BANK_TEST_REQUIRE_POSTGRES=1) —
// then print the slowest files and one closing line per back end and for both.
// Options (scripts/test-args.mjs; `npm test -- --help`): `npm test -- test/users` runs only
// the files under the given paths, on PGlite (`--storage pglite|postgres|both`) and without the
// checks (`--checks`); with no path the run is the whole one above, as CI runs it.
// Settings: BANK_TEST_CONCURRENCY (test processes at once, default 2), BANK_TEST_BUNDLE=0 (run
// the TypeScript through tsx instead of a bundle, as `node --import tsx --test` would),
// BANK_TEST_ASYNC_HOOK=node (node:test's own async hook, not scripts/test-context.mjs's).
//
// How the time is spent: a test process pays about a CPU-second to start Node and load the
// service's modules, a NATS server, and on PGlite a WebAssembly compilation; that used to be
// paid by every file of each pass. Now the files of a back end are dealt into a few group
// processes, each of which runs its files one after another, each file as a top-level suite
// (`<path> [<backend>]`) with its own bank as before, on the process's one private NATS
// server. Both back ends' groups run in one `node --test` at once, the type check and the
// architecture and lint checks beside them. Files that need a process of their own (see
//`ownProcess`) get one; files that mostly
// wait on processes they start (see `startsBank`) run in one more process beside the rest.
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { ensureDependencies, root } from './ensure-deps.mjs'
import { node_bundle_options } from './node-bundle.mjs'
import { defaultStorage, parseTestArgs, usage, UsageError } from './test-args.mjs'
import { unreported, unreportedText } from './test-accounting.mjs'

let options
try {
  options = parseTestArgs(process.argv.slice(2), { root })
} catch (error) {
  if (!(error instanceof UsageError)) throw error
  process.stderr.write(`npm test: ${error.message}\n${usage.split('\n')[0]}\n` +
    `(npm test -- --help lists the options)\n`)
  process.exit(2)
}
if (options.help) {
  process.stdout.write(usage)
  process.exit(0)
}
ensureDependencies()

const adminUrl = process.env.BANK_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const requirePostgres = process.env.CI === 'true' || process.env.BANK_TEST_REQUIRE_POSTGRES === '1'
const concurrency = Math.max(1, Number(process.env.BANK_TEST_CONCURRENCY ?? 2))
const groupsPerBackend = Math.max(1, Number(process.env.BANK_TEST_GROUPS ?? concurrency))
const started = Date.now()
const cacheDir = path.join(root, 'node_modules', '.cache', 'bank-test')
const durationsFile = path.join(cacheDir, 'durations.json')
const committedDurationsFile = path.join(root, 'test', 'durations.json')

// Files whose subject does not depend on the storage back end — the CLI's parsing, output
// and exit codes, the documents, the contract's reachability, the calendar, the settings,
// the group committer, the PGlite dialect, the $SRV protocol, fixed NATS headers, the SDK's
// package, the decode step's fuzzing and malformed bytes (what storage may refuse is tested on both
// back ends by test/hardening/unstorable-text), the authentication and permission matrix (answered
// before any store is read; the tenancy queries are the same SQL on both) — run on one back end
// only (the last, PostgreSQL when there is one). Run directly, they run anywhere.
const storageIndependent = /^test\/(cli|docs|contract|compat)\/|^test\/calendar\/sa-calendar\.|^test\/config\.|^test\/hardening\/batch-isolation\.|^test\/transport\/(micro-protocol|fuzz|malformed-input|fixed-headers|nats-isolation-startup|nats-cluster)\.|^test\/auth\/auth-matrix\.|^test\/ledger\/ledger-cli\.|^test\/db\/pglite-dialect\.|^test\/metrics\/cpu-profile\.|^test\/client\/package-install\.|^test\/rails\/iso20022-|^test\/rails\/clearing-house|^test\/deploy\//
// Files that get a process of their own: the fuzz test, which listens for unhandled errors
// of the whole process, and the images' test (test/deploy), which spends minutes waiting on
// podman's builds and would hold a group's place meanwhile.
const ownProcess = /^test\/transport\/fuzz\.|^test\/deploy\//
// Files that test something on PostgreSQL only (they declare no tests on PGlite): on PGlite
// they join a group rather than start a process for nothing.
const postgresOnly = /^test\/chaos\/|^test\/hardening\/database-outage\./
// A file is stopped, as a failure, when it has run this long. (`node --test` stopped a file's
// process after 120 s; the fuzz test, 40 s alone, took 143 s on a machine loaded 10–20.)
const fileTimeoutMs = 240_000
// The property test runs a model of the ledger through many random histories (about two
// minutes of a loaded machine's time alone, in 2026-12): its own, longer limit, so that a slow
// hour does not stop it half way.
// The images' test (test/deploy) makes a Debian base with debootstrap once a day and builds
// four images (about four minutes cold, three warm) before it composes them.
// The recurring debit orders' test walks a sandbox clock through a year of collections (2.5
// minutes of a quiet machine's time on PGlite; a loaded one took it past four).
// The guides' test runs every page's commands, the debit-order guide's two months of
// sandbox advances among them (160 s in all on CI; a loaded machine took that one past 144 s
// and the file past four minutes).
const longFiles =
  /^test\/property\/|^test\/deploy\/|^test\/debit\/collection-recurring\.|^test\/docs\/guides\./
const longFileTimeoutMs = 600_000
// A group process is stopped after this long (BANK_TEST_PROCESS_TIMEOUT_MS, default an hour):
// a last resort, since each file has its own limit and a process that outlives its last file
// ends by itself (groupExitMs). Ten minutes stopped whole groups on a loaded machine while
// every file kept within its own limit. Files not reported when a process is stopped are
// counted as failed (test-accounting.mjs).
const processTimeoutMs = Number(process.env.BANK_TEST_PROCESS_TIMEOUT_MS ?? 60 * 60_000)
// A group process still running this long after its last file has something left open.
const groupExitMs = 10_000

const relative = (file) => path.relative(root, file).split(path.sep).join('/')
// Files that start the bank as a process of its own (test/chaos/processes.ts) and spend most
// of their time waiting: for it to start, for an outage to pass, for a killed process's
// lease. On the PostgreSQL pass (the only one they test on) they run one after another in a
// process beside the others, outside the concurrency limit, so that their waiting does not
// hold one of its places while the others queue for it. On PGlite they declare no tests
// (test/chaos/pass.ts) and join a group.
const bankProcesses = path.join(root, 'test/chaos/processes.ts')
const startsBankMemo = new Map()
const startsBank = (file) => {
  if (!startsBankMemo.has(file)) {
    const imports = [...fs.readFileSync(file, 'utf8').matchAll(/['"]([./][^'"]*processes\.ts)['"]/g)]
    startsBankMemo.set(file, imports.some((m) => path.resolve(path.dirname(file), m[1])
      === bankProcesses))
  }
  return startsBankMemo.get(file)
}

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

/** Runs a command; resolves with its exit status (and its output when `capture`). */
function run(command, args, { env = process.env, capture = false } = {}) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, env, stdio: capture
      ? ['ignore', 'pipe', 'pipe'] : ['ignore', 'inherit', 'inherit'] })
    let output = ''
    child.stdout?.on('data', (chunk) => (output += chunk))
    child.stderr?.on('data', (chunk) => (output += chunk))
    child.once('error', (error) => resolve({ status: 1, output: `${output}${error.message}\n` }))
    child.once('close', (status) => resolve({ status, output }))
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
async function bundleTests(files, extraEntries, outdir) {
  if (process.env.BANK_TEST_BUNDLE === '0') return undefined
  let esbuild
  try {
    esbuild = await import('esbuild')
  } catch {
    return undefined // esbuild comes with tsx; without it the suite runs through tsx.
  }
  const sourceUrls = {
    name: 'source-urls',
    setup(build) {
      build.onLoad({ filter: /\.ts$/ }, async (args) => {
        const text = await fs.promises.readFile(args.path, 'utf8')
        return { contents: text.replaceAll('import.meta.url',
          JSON.stringify(pathToFileURL(args.path).href)), loader: 'ts' }
      })
    },
  }
  const entries = [...files, ...extraEntries]
  const outName = (file) => {
    const rel = path.relative(root, file)
    return (rel.startsWith('..') ? path.join('outside', path.basename(file)) : rel).replace(/\.ts$/, '')
  }
  await esbuild.build({
    entryPoints: entries.map((file) => ({ in: file, out: outName(file) })),
    outdir,
    outExtension: { '.js': '.mjs' },
    ...node_bundle_options,
    sourcemap: 'inline',
    plugins: [sourceUrls],
  })
  return new Map(entries.map((file) => [file, path.join(outdir, `${outName(file)}.mjs`)]))
}

/**
 * Deals files into one group per place (`slots`, each with the time already planned for
 * it), so that the places end about together: longest first, each to the place with the
 * least so far, by the durations the last runs measured. Adds each group's time to its place.
 */
function deal(items, slots, estimate) {
  const groups = slots.map((slot) => ({ files: [], ms: 0, slot }))
  for (const file of [...items].sort((a, b) => estimate(b) - estimate(a))) {
    const group = groups.reduce((least, g) => (g.slot.ms + g.ms < least.slot.ms + least.ms ? g
      : least))
    group.files.push(file)
    group.ms += estimate(file)
  }
  for (const group of groups) group.slot.ms += group.ms
  return groups.filter((group) => group.files.length > 0).map(({ files, ms }) => ({ files, ms }))
}

/**
 * Waits for the type check, architecture and lint checks; prints what a failed one (or one
 * with more to say than its closing line) reported. Returns the summary's lines for them and
 * whether all passed. Checks left out (a run of paths without --checks) are one line.
 */
async function checkReports() {
  const [checked, arch, linted] = await Promise.all([typecheck, architecture, lint])
  if (checked.skipped) {
    return { ok: true, summary: ['checks: not run (a run of paths; --checks runs the type ' +
      'check, architecture and lint)'] }
  }
  if (checked.status !== 0) process.stdout.write(`\n${checked.output}type check failed\n`)
  // The architecture check's report: in full when it has more to say than its closing line
  // (new violations, or known ones that are fixed), which goes into the summary.
  const archLines = arch.output.trimEnd().split('\n')
  const archLast = archLines.at(-1)?.startsWith('architecture: ')
    ? archLines.at(-1).slice('architecture: '.length) : undefined
  if (arch.status !== 0 || archLines.length > 1 || !archLast) process.stdout.write(
    `\n${arch.output}`)
  // The lint check's report likewise.
  const lintLines = linted.output.trimEnd().split('\n')
  const lintLast = /^lint: (.*)$/.exec(lintLines.at(-1) ?? '')?.[1]
  if (linted.status !== 0 || lintLines.length > 1 || !lintLast) {
    process.stdout.write(`\n${linted.output}`)
  }
  const verdict = (c) => (c.status === 0 ? 'passed' : 'FAILED')
  return {
    ok: [checked, arch, linted].every((c) => c.status === 0),
    summary: [
      `type check: ${verdict(checked)}`,
      `architecture: ${verdict(arch)}${archLast ? `; ${archLast}` : ''}`,
      `lint: ${verdict(linted)}${lintLast ? `; ${lintLast}` : ''}`,
    ],
  }
}

/** CPU seconds of this process and of the children it has waited for (Linux only). */
function cpuSeconds() {
  try {
    const fields = fs.readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ')
    // utime, stime, cutime, cstime are fields 14–17 of stat(5); fields[0] here is field 3.
    return fields.slice(11, 15).reduce((sum, ticks) => sum + Number(ticks), 0) / 100
  } catch {
    return undefined
  }
}

const files = testFiles(options.paths)
if (files.length === 0) {
  process.stderr.write(`npm test: no *.test.ts file under ${options.paths.join(', ')}\n`)
  process.exit(2)
}
fs.mkdirSync(cacheDir, { recursive: true })
const outdir = path.join(cacheDir, String(process.pid))

// The checks run beside the tests of a whole run, and of a run of paths with --checks; a
// check left out counts as passed and the summary says it did not run.
const notChecked = Promise.resolve({ status: 0, output: '', skipped: true })
// The type check runs beside the tests (incrementally: the next run re-checks what changed).
// A larger young generation spares tsc about a tenth of its CPU time in garbage collection.
const typecheck = !options.checks ? notChecked : run(
  process.execPath,
  ['--max-semi-space-size=32', path.join(root, 'node_modules/typescript/bin/tsc'), '-p', root,
    '--incremental', '--tsBuildInfoFile', path.join(cacheDir, 'tsconfig.tsbuildinfo')],
  { capture: true },
)
// So do the architecture rules (scripts/arch.mjs: dependency-cruiser on src/, about 2.5
// CPU-seconds): any violation fails the run (none is tolerated), named with its rule and files.
const architecture = !options.checks ? notChecked
  : run(process.execPath, [path.join(root, 'scripts/arch.mjs')], { capture: true })
// And the lint rules (scripts/lint.mjs: ESLint on every source file, about 1 CPU-second with
// its cache, 10 without): any violation fails the run (none is tolerated), named with its
// file, line and rule.
const lint = !options.checks ? notChecked
  : run(process.execPath, [path.join(root, 'scripts/lint.mjs')], { capture: true })

// The back ends: as chosen (--storage), else both for the whole suite and PGlite for paths
// (PostgreSQL when every file given tests PostgreSQL only).
const postgresOnlyFile = (file) => postgresOnly.test(relative(file)) || startsBank(file)
const storage = options.storage ?? defaultStorage(options.paths, files, postgresOnlyFile)
if (!options.storage && storage === 'postgres') process.stderr.write(
  `note: ${files.length === 1 ? 'this file tests' : 'these files test'} PostgreSQL only: ` +
    `running on PostgreSQL\n`)
const backends = storage === 'postgres' ? [] : ['pglite']
if (storage !== 'pglite') {
  if (await reachable(adminUrl)) backends.push('postgres')
  else if (requirePostgres || storage === 'postgres') {
    process.stderr.write(`PostgreSQL is required here but does not answer at ${adminUrl}` +
      ` (BANK_TEST_DATABASE_URL)\n`)
    process.exit(1)
  } else {
    process.stderr.write(`note: no PostgreSQL at ${adminUrl}; the suite runs on PGlite only\n`)
  }
}

const templates = path.join(root, 'test/support/templates.ts')
// The chaos tests start the bank itself (`node src/main.ts`) a few times each.
const service = path.join(root, 'src/main.ts')
const startsService = files.some(startsBank)
let exitStatus = 1
try {
  const compiledFiles = await bundleTests(files, [templates, ...(startsService ? [service] : [])],
    outdir)
  // A 64 MB young generation (as the bank's image runs it, docs/performance.md) spares the
  // test processes, which allocate as a busy bank does, a tenth of their CPU time collecting.
  const runner = [...compiledFiles ? ['--enable-source-maps'] : ['--import', 'tsx'],
    '--max-semi-space-size=64']
  const compiled = (file) => compiledFiles?.get(file) ?? file
  // BANK_TEST_POOL: the files of a group process reuse its test stores, emptied between files
  // (test/support/store-pool.ts); the pool's databases are named after this run.
  const env = { ...process.env, BANK_TEST_POOL: '1', BANK_TEST_RUN_ID: String(process.pid) }
  // Compiled, each start of the bank spares the tsx loader's CPU-second (test/chaos/processes.ts).
  if (compiledFiles && startsService) env.BANK_TEST_SERVICE = compiled(service)

  // Each back end's pre-migrated template, built once here rather than by the first test
  // files at once; templates of other migration sets are dropped.
  const templatesUrl = JSON.stringify(pathToFileURL(compiled(templates)).href)
  const prepared = await Promise.all(
    backends.map((backend) =>
      run(process.execPath, [...runner, '--input-type=module', '-e',
          `await (await import(${templatesUrl})).prepareTemplates(${JSON.stringify(backend)})`], {
        env: { ...env, BANK_TEST_STORAGE: backend },
      }),
    ),
  )
  prepared.forEach(({ status }, i) => {
    if (status !== 0) process.stderr.write(`note: could not prepare the ${backends[i]} template; ` +
      `each test process builds it if missing\n`)
  })

  // Group processes: per back end, its files dealt into as many groups as run at once (by
  // the last runs' durations, so that they end together), each own-process file alone.
  // A fresh clone (CI) has no last run: it starts from the durations committed in
  // test/durations.json (`npm run test:durations` refreshes them from this machine's last
  // run), else every file would count the same and one place could end minutes after the
  // other. This machine's own last runs, where it has them, count over those.
  const readDurations = (file) => {
    try {
      return JSON.parse(fs.readFileSync(file, 'utf8'))
    } catch {
      return {}
    }
  }
  let durations = { ...readDurations(committedDurationsFile), ...readDurations(durationsFile) }
  const known = Object.values(durations).sort((a, b) => a - b)
  const typical = known.length ? known[Math.floor(known.length / 2)] : 3000
  // The processes are planned onto the places that run at once (`slots`): per back end, its
  // files dealt into one group per place (at most BANK_TEST_GROUPS), each going to the place
  // with the least planned so far, so that all places end about together. A process of its
  // own goes to the least loaded place before the last back end's groups are dealt around it.
  const slots = Array.from({ length: groupsPerBackend }, () => ({ ms: 0 }))
  const least = () => slots.reduce((a, b) => (b.ms < a.ms ? b : a))
  const groups = []
  const waiting = []
  for (const backend of backends) {
    const mine = backend === backends.at(-1) ? files
      : files.filter((file) => !storageIndependent.test(relative(file)))
    const estimate = (file) => durations[`${backend} ${relative(file)}`] ?? typical
    const onPass = (file) => !(backend === 'pglite' && (postgresOnly.test(relative(file))
      || startsBank(file)))
    const alone = (file) => ownProcess.test(relative(file)) && onPass(file)
    const beside = (file) => concurrency > 1 && onPass(file) && startsBank(file)
    for (const file of mine.filter(alone)) {
      groups.push({ backend, files: [file], ms: estimate(file), order: 2 })
      least().ms += estimate(file)
    }
    const besides = mine.filter(beside)
    if (besides.length > 0) waiting.push(
      { backend, files: besides, ms: besides.reduce((sum, f) => sum + estimate(f), 0) })
    const shared = mine.filter((f) => !alone(f) && !beside(f))
    for (const group of deal(shared, slots, estimate)) groups.push(
      { backend, ...group, order: backends.indexOf(backend) === 0 ? 0 : 1 })
  }
  // The first back end's groups first, then the last's longest first, then the processes of
  // their own: the places whose groups end first take those, as planned.
  groups.sort((a, b) => a.order - b.order || b.ms - a.ms)
  fs.mkdirSync(path.join(outdir, 'groups'), { recursive: true })
  const cpuLog = path.join(outdir, 'cpu.jsonl')
  // What the test files share: the bundle's shared chunks, or through tsx the test support.
  const shared = (compiledFiles
    ? fs.readdirSync(outdir).filter((f) => /^chunk-.*\.mjs$/.test(f)).map((f) => path.join(outdir, f))
    : [path.join(root, 'test/support/harness.ts')]
  ).map((f) => pathToFileURL(f).href)
  const groupFile = (group, i) => {
    const file = path.join(outdir, 'groups', `${group.backend}-${i + 1}.mjs`)
    // Each suite's function imports its file, whose tests and hooks then register in that
    // suite. The modules the files share are loaded first: a shared module that awaits at
    // its top level would otherwise finish the evaluation of every file waiting on it in
    // the first one's suite.
    // Each file's CPU time (this process's and its children's, such as the CLI's) is written
    // to cpu.jsonl for the table of slowest files.
    const lines = [
      `import fs from 'node:fs'`,
      `// node:test's harness made lighter before it loads (scripts/test-context.mjs).`,
      `await import(${JSON.stringify(pathToFileURL(path.join(root, 'scripts/test-context.mjs'))
        .href)})`,
      `const { after, before, describe } = await import('node:test')`,
      `// The back end is chosen before the test support is loaded.`,
      `process.env.BANK_TEST_STORAGE = ${JSON.stringify(group.backend)}`,
      ...shared.map((url) => `await import(${JSON.stringify(url)})`),
      `const cpuMs = () => { try { return fs.readFileSync('/proc/self/stat', 'utf8').split(') ` +
        `')[1].split(' ').slice(11, 15).reduce((sum, ticks) => sum + Number(ticks), 0) * 10 } ` +
        `catch { return NaN } }`,
      `// A socket still open when a file starts was left by a file before it: the first one seen`,
      `// after names it, should the socket keep the process alive at the end.`,
      `const leftBy = new WeakMap()`,
      `let previous = 'the start'`,
      `const openSockets = () => process._getActiveHandles().filter((h) => h?.remotePort !== ` +
        `undefined)`,
      `const file = (name, url, timeout) => describe(name, { timeout }, async () => {`,
      `  let cpu`,
      `  before(() => { cpu = cpuMs(); for (const h of openSockets()) if (!leftBy.has(h)) ` +
        `leftBy.set(h, previous); previous = name })`,
      `  after(() => fs.appendFileSync(${JSON.stringify(cpuLog)}, JSON.stringify({ name, cpuMs: ` +
        `cpuMs() - cpu }) + '\\n'))`,
      `  await import(url)`,
      `})`,
      ...group.files.map((f) => `file(${JSON.stringify(`${relative(f)} [${group.backend}]`)}, ` +
        `${JSON.stringify(pathToFileURL(compiled(f)).href)}, ` +
        `${longFiles.test(relative(f)) ? longFileTimeoutMs : fileTimeoutMs})`),
      `// The stores the files' banks reused (test/support/store-pool.ts) go with the process.`,
      `after(() => globalThis[Symbol.for('bank.test.closeStorePool')]?.())`,
      `// Something a file left open (a connection, a timer, a child) would keep this process`,
      `// alive until the run's limit, ten minutes on; a while after the last file it ends,`,
      `// naming what was left open. Its tests have all reported by then, so a leak is told`,
      `// (loudly, with the file after which each socket was first seen) but fails nothing.`,
      `after(() => setTimeout(() => {`,
      `  // Sockets by their addresses, which name what was left open (a NATS or HTTP connection).`,
      `  const sockets = openSockets().map((h) => \`socket \${h.localPort} → ` +
        `\${h.remoteAddress}:\${h.remotePort} (open since \${leftBy.get(h) ?? previous})\`)`,
      `  process.stderr.write(\`warning: \${${JSON.stringify(`${group.backend} group`)}}: still ` +
        `open ${groupExitMs / 1000} s after its last file: ` +
        `\${[...process.getActiveResourcesInfo(), ...sockets].join(', ')}\n\`)`,
      `  process.exit(0)`,
      `}, ${groupExitMs}).unref())`,
    ]
    fs.writeFileSync(file, `${lines.join('\n')}\n`)
    return file
  }
  const groupFiles = groups.map(groupFile)
  const waitingFiles = waiting.map((group, i) => groupFile(group, groups.length + i))

  const counts = Object.fromEntries(
    backends.map((backend) => [backend, { files: 0, pass: 0, fail: 0, skip: 0 }]))
  for (const group of [...groups, ...waiting]) counts[group.backend].files += group.files.length
  const waitingCounts = waiting.map((g) =>
    `${g.files.length} ${g.backend} files that wait on processes of their own`)
  const beside = waiting.length ? ` (and ${waitingCounts.join(', ')} in one beside them)` : ''
  process.stdout.write(
    `\n=== ${backends.map((b) => `${b}: ${counts[b].files} files`).join(', ')}; ${groups.length} ` +
      `processes, ${concurrency} at once${beside} ===\n`,
  )
  const testRun = (processes, lane, { concurrency, spec }) =>
    processes.length === 0
      ? Promise.resolve({ status: 0 })
      : run(process.execPath, [
          ...runner,
          '--test',
          `--test-concurrency=${concurrency}`,
          // Each file has its own time limit (fileTimeoutMs); this stops a process that does not
          // end after its files (something a bank left open, or a file hung outside its tests).
          `--test-timeout=${processTimeoutMs}`,
          '--test-reporter=spec', `--test-reporter-destination=${spec}`,
          `--test-reporter=${pathToFileURL(path.join(root, 'scripts/test-reporter.mjs')).href}`,
            `--test-reporter-destination=${path.join(outdir, `results-${lane}.jsonl`)}`,
          ...processes,
        ], { env })
  // The waiting files' report is printed after the others', not in the middle of them.
  const besideSpec = path.join(outdir, 'beside.txt')
  const [tests, besideTests] = await Promise.all([
    testRun(groupFiles, 'main', { concurrency, spec: 'stdout' }),
    testRun(waitingFiles, 'beside', { concurrency: 1, spec: besideSpec }),
  ])
  if (fs.existsSync(besideSpec)) process.stdout.write(`\n=== the files that wait on processes of ` +
    `their own ===\n${fs.readFileSync(besideSpec, 'utf8')}`)

  const records = ['main', 'beside']
    .map((lane) => path.join(outdir, `results-${lane}.jsonl`))
    .filter((results) => fs.existsSync(results))
    .flatMap((results) => fs.readFileSync(results, 'utf8').split('\n').filter(Boolean).map(
      (line) => JSON.parse(line)))
  for (const record of records) {
    const c = counts[record.backend]
      ?? (counts[record.backend] = { files: 0, pass: 0, fail: 0, skip: 0 })
    c.pass += record.pass
    c.fail += record.fail
    c.skip += record.skip
    // Remembered for dealing the next run's groups.
    const file = /^(.*) \[\w+\]$/.exec(record.name)?.[1]
    if (file && record.ok && !file.startsWith('../')) {
      durations[`${record.backend} ${file}`] = record.ms
    }
  }
  fs.mkdirSync(cacheDir, { recursive: true })
  fs.writeFileSync(durationsFile, `${JSON.stringify(durations, null, 1)}\n`)
  const silent = unreported([...groups, ...waiting], records, relative)
  for (const file of silent) counts[file.backend].fail += file.tests
  if (silent.length > 0) process.stdout.write(unreportedText(silent))
  const cpuOf = new Map(
    (fs.existsSync(cpuLog) ? fs.readFileSync(cpuLog, 'utf8').split('\n').filter(Boolean) : []).map(
        (line) => {
      const { name, cpuMs } = JSON.parse(line)
      return [name, cpuMs]
    }),
  )
  const timed = records.filter((r) => / \[\w+\]$/.test(r.name)).sort((a, b) => b.ms - a.ms)
  if (timed.length > 1) {
    const shown = Number(process.env.BANK_TEST_SLOWEST ?? 12)
    process.stdout.write(`\nslowest files (wall time in their process; CPU time of the process ` +
      `and its children meanwhile):\n`)
    for (const r of timed.slice(0, shown)) {
      const cpuMs = cpuOf.get(r.name)
      process.stdout.write(`${(r.ms / 1000).toFixed(1).padStart(7)} ` +
        `s ${cpuMs >= 0 ? `${(cpuMs / 1000).toFixed(1).padStart(6)} CPU-s` : ''}  ${r.name}\n`)
    }
  }

  const checks = await checkReports()
  if ((tests.status !== 0 || besideTests.status !== 0) && Object.values(counts).every(
    (c) => c.fail === 0)) counts[backends[0]].fail += 1
  const passed = Object.values(counts).reduce((sum, c) => sum + c.pass, 0)
  const failed = Object.values(counts).reduce((sum, c) => sum + c.fail, 0)
  const skipped = Object.values(counts).reduce((sum, c) => sum + c.skip, 0)
  const notRun = (b) => silent.filter((f) => f.backend === b).reduce((sum, f) => sum + f.tests, 0)
  const summary = backends.map((b) => {
    const skip = counts[b].skip ? `, ${counts[b].skip} skipped` : ''
    const unrun = notRun(b) ? ` (${notRun(b)} of them never ran)` : ''
    return `${b}: ${counts[b].pass} passed, ${counts[b].fail} failed${unrun}${skip}`
  })
  summary.push(...checks.summary)
  const cpu = cpuSeconds()
  process.stdout.write(`\n${summary.join('\n')}\n`)
  const unrunAll = backends.reduce((sum, b) => sum + notRun(b), 0)
  const unrunText = unrunAll ? ` (${unrunAll} of them never ran)` : ''
  const skippedText = skipped ? `, ${skipped} skipped` : ''
  const took =
    `${Math.round((Date.now() - started) / 1000)} s${cpu ? `, ${Math.round(cpu)} CPU-s` : ''}`
  process.stdout.write(
    `all: ${passed} passed, ${failed} failed${unrunText}${skippedText} (${took})\n`)
  exitStatus = failed === 0 && passed > 0 && checks.ok ? 0 : 1
} finally {
  fs.rmSync(outdir, { recursive: true, force: true })
}
process.exit(exitStatus)
