// `npm run build`: compiles the service and the operator CLI to JavaScript in dist/, so that
// neither runs its TypeScript through tsx (about 2 CPU-seconds a start): dist/main.js is the
// service (`node dist/main.js`: the Dockerfile, the systemd unit), dist/cli/main.js the CLI
// (bin/bank.js runs it when it is current) and dist/dev/start.js `npm start` (scripts/start.mjs
// builds first when the build is missing or stale). Development and the tests run the
// TypeScript itself (tsx, scripts/test.mjs).
//
// esbuild, not tsc: tsc takes 14 CPU-seconds (30 s on a busy machine) over src/, esbuild
// well under one, and `npm start` builds after each edit. Type-checking stays with
// `npm run typecheck`. One bundle per entry, the modules they share in dist/chunks/ and the
// packages of node_modules imported as they are; names kept (errors take their class's name).
//
//   node scripts/build.mjs [--out-dir <dir>] [--production] [--if-stale]
// --production leaves out the development entry (dist/dev/start.js), as the image does;
// --if-stale builds only when buildState() says the build is missing or stale.
// The build is current when its stamp (<out dir>/build.json, dated when the build began) is
// newer than every file and folder of src/ and dev/, package.json and this script.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { node_bundle_options } from './node-bundle.mjs'

const here = fileURLToPath(import.meta.url)
export const root = path.resolve(path.dirname(here), '..')
const stampName = 'build.json'

/** The newest modification time (ms) of a file, or of a folder and everything in it. */
function newestMtime(file) {
  let stat
  try {
    stat = fs.statSync(file)
  } catch {
    return 0
  }
  if (!stat.isDirectory()) return stat.mtimeMs
  let newest = stat.mtimeMs
  for (const entry of fs.readdirSync(file)) {
    newest = Math.max(newest, newestMtime(path.join(file, entry)))
  }
  return newest
}

/**
 * Whether `<checkout>/<outDir>` holds a current build: 'current', 'missing' or 'stale'.
 * A checkout without src/ (the image) has nothing to be stale against. Cheap: a few
 * hundred stat calls, a few milliseconds.
 */
export function buildState(checkout = root, outDir = path.join(checkout, 'dist')) {
  let stamp
  try {
    stamp = fs.statSync(path.join(outDir, stampName)).mtimeMs
  } catch {
    return 'missing'
  }
  if (!fs.existsSync(path.join(checkout, 'src'))) return 'current'
  const inputs = ['src', 'dev', 'package.json', 'scripts/build.mjs']
  const newest = Math.max(...inputs.map((input) => newestMtime(path.join(checkout, input))))
  return newest <= stamp ? 'current' : 'stale'
}

/** The bundles: each entry's output name (under the out dir) and its source. */
function entries(production) {
  const all = [
    { out: 'main', in: path.join(root, 'src/main.ts') },
    { out: 'cli/main', in: path.join(root, 'src/cli/main.ts') },
    { out: 'dev/start', in: path.join(root, 'dev/start.ts') },
  ]
  return production ? all.filter((entry) => !entry.out.startsWith('dev/')) : all
}

/**
 * Builds into a fresh folder beside the out dir, then puts it in place of the old one, so
 * that a CLI started meanwhile finds the old build or the new one, never half of one.
 */
export async function build({ outDir = path.join(root, 'dist'), production = false } = {}) {
  const began = new Date()
  const { build: esbuild } = await import('esbuild')
  const next = `${outDir}.next`
  const old = `${outDir}.old`
  fs.rmSync(next, { recursive: true, force: true })
  await esbuild({
    ...node_bundle_options,
    entryPoints: entries(production),
    outdir: next,
    keepNames: true,
    sourcemap: 'linked',
    chunkNames: 'chunks/[name]-[hash]',
  })
  const stamp = path.join(next, stampName)
  const about = { began: began.toISOString(), production }
  fs.writeFileSync(stamp, `${JSON.stringify(about, null, 2)}\n`)
  fs.utimesSync(stamp, began, began)
  fs.rmSync(old, { recursive: true, force: true })
  if (fs.existsSync(outDir)) fs.renameSync(outDir, old)
  fs.renameSync(next, outDir)
  fs.rmSync(old, { recursive: true, force: true })
  return { ms: Date.now() - began.getTime() }
}

async function main(argv) {
  const at = argv.indexOf('--out-dir')
  const outDir = at >= 0 ? path.resolve(argv[at + 1] ?? '') : path.join(root, 'dist')
  const production = argv.includes('--production')
  const shown = path.relative(process.cwd(), outDir) || '.'
  if (argv.includes('--if-stale')) {
    const state = buildState(root, outDir)
    if (state === 'current') return
    process.stderr.write(`build: ${shown} is ${state}; building\n`)
  }
  const { ms } = await build({ outDir, production })
  process.stderr.write(`build: ${shown} built in ${ms} ms\n`)
}

const invoked = process.argv[1] && pathToFileURL(path.resolve(process.argv[1])).href
if (invoked === pathToFileURL(here).href) {
  await main(process.argv.slice(2))
}
