import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { after, before, test } from 'node:test'
import { useTestBank } from '../support/harness.ts'

// `npm run build` (scripts/build.mjs) and what runs its output: bin/bank.js runs the compiled
// CLI when the build is current and falls back to the TypeScript through tsx when it is not;
// the image (no src/) runs dist/ as it is, the service included. Built into checkouts of
// their own in a temporary folder (bin/bank.js and package.json copied, src/, dev/, scripts/
// and node_modules linked), so that the repository's dist/ is never touched.

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const buildScript = path.join(root, 'scripts/build.mjs')
const manifest = fs.readFileSync(path.join(root, 'package.json'), 'utf8')
const version = (JSON.parse(manifest) as { version: string }).version
const tb = useTestBank()
const temp = fs.mkdtempSync(path.join(os.tmpdir(), 'bank-build-'))
after(() => fs.rmSync(temp, { recursive: true, force: true }))

interface Run { code: number, stdout: string, stderr: string }

function run(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((resolve) => {
    const options = { env: { ...process.env, ...env }, cwd: temp, timeout: 60_000 }
    execFile(process.execPath, args, options, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr })
    })
  })
}

/** A checkout of its own: bin/bank.js and package.json copied, the rest linked. */
function checkout(name: string, linked: string[]): string {
  const dir = path.join(temp, name)
  fs.mkdirSync(path.join(dir, 'bin'), { recursive: true })
  fs.copyFileSync(path.join(root, 'bin/bank.js'), path.join(dir, 'bin/bank.js'))
  fs.copyFileSync(path.join(root, 'package.json'), path.join(dir, 'package.json'))
  for (const link of linked) fs.symlinkSync(path.join(root, link), path.join(dir, link), 'dir')
  return dir
}

async function buildInto(dir: string, ...flags: string[]): Promise<void> {
  const built = await run([buildScript, '--out-dir', path.join(dir, 'dist'), ...flags])
  assert.equal(built.code, 0, built.stderr)
  assert.match(built.stderr, /^build: .*dist built in \d+ ms\n$/)
}

const dev = path.join(temp, 'dev-checkout')
const image = path.join(temp, 'image')
before(async () => {
  checkout('dev-checkout', ['src', 'dev', 'scripts', 'node_modules'])
  checkout('image', ['node_modules'])
  await Promise.all([buildInto(dev), buildInto(image, '--production')])
})

function cliEnv(): NodeJS.ProcessEnv {
  const dataDir = fs.mkdtempSync(path.join(temp, 'data-'))
  return { NATS_URL: tb.natsUrl, BANK_OPERATOR_TOKEN: tb.operatorToken, BANK_DATA_DIR: dataDir }
}

test('build - a current build: bin/bank.js runs dist/cli/main.js, --version and a real command', async () => {
  const states = await run(['--input-type=module', '-e', `
    const { buildState } = await import(${JSON.stringify(pathToFileURL(buildScript).href)})
    process.stdout.write(buildState(${JSON.stringify(dev)}))`])
  assert.equal(states.stdout, 'current', states.stderr)
  // A marker in front of the compiled CLI shows which program bin/bank.js ran.
  const cli = path.join(dev, 'dist/cli')
  fs.renameSync(path.join(cli, 'main.js'), path.join(cli, 'main-built.js'))
  const marker = 'process.stderr.write(\'compiled\\n\')\nexport * from \'./main-built.js\'\n'
  fs.writeFileSync(path.join(cli, 'main.js'), marker)
  const bin = path.join(dev, 'bin/bank.js')
  const shown = await run([bin, '--version'])
  assert.deepEqual(shown, { code: 0, stdout: `${version}\n`, stderr: 'compiled\n' })
  const listed = await run([bin, 'partner', 'list'], cliEnv())
  assert.equal(listed.code, 0, listed.stderr)
  assert.equal(listed.stderr, 'compiled\n')
  assert.deepEqual(JSON.parse(listed.stdout), await tb.operator.partners.list())
})

test('build - a stale build: bin/bank.js runs the TypeScript through tsx, silently when stderr is no terminal', async () => {
  const stale = path.join(temp, 'stale-checkout')
  fs.cpSync(dev, stale, { recursive: true, verbatimSymlinks: true })
  // Dated before the sources: as if src/ had been edited since the build.
  fs.utimesSync(path.join(stale, 'dist/build.json'), new Date(0), new Date(0))
  const broken = 'throw new Error(\'the stale build ran\')\n'
  fs.writeFileSync(path.join(stale, 'dist/cli/main.js'), broken)
  const bin = path.join(stale, 'bin/bank.js')
  assert.deepEqual(await run([bin, '--version']), { code: 0, stdout: `${version}\n`, stderr: '' })
  const listed = await run([bin, 'partner', 'list'], cliEnv())
  assert.equal(listed.code, 0, listed.stderr)
  assert.deepEqual(JSON.parse(listed.stdout), await tb.operator.partners.list())
})

test('build - the image\'s layout (no src/): the CLI and the service run dist/, without the dev entry', async () => {
  assert.ok(!fs.existsSync(path.join(image, 'dist/dev')), '--production leaves out dist/dev/')
  const shown = await run([path.join(image, 'bin/bank.js'), '--version'])
  assert.deepEqual(shown, { code: 0, stdout: `${version}\n`, stderr: '' })
  // The compiled service starts (here it finds the test bank on its NATS server and, its
  // storage being another, refuses to join it: the check that follows loading the config).
  const service = await run([path.join(image, 'dist/main.js')], cliEnv())
  assert.equal(service.code, 2, service.stderr)
  assert.match(service.stderr, /^Another .+ instance \(.+\) already serves on nats:/)
})
