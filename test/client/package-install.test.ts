import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'

// The SDK as a partner gets it (issue 30): `npm run build:client` builds packages/client,
// `npm pack` makes its tarball, and a fresh project of the partner's own installs it from the
// tarball (its dependencies from the npm registry) and uses it two ways: a plain `node` script
// calls a running bank with the partner's token, and `tsc --noEmit` checks a typed file with
// node16, nodenext and bundler resolution (with nodenext, skipLibCheck off: the package's
// .d.ts files are checked too). Run on one back end only (scripts/test.mjs): the package does
// not depend on the storage.

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const tsc = path.join(root, 'node_modules/typescript/bin/tsc')
const tb = useTestBank()
let partner: TestPartner
let project: string
let timings: string

/** The environment of a partner's shell: none of npm's or Node's settings for this run. */
const cleanEnv = (): NodeJS.ProcessEnv =>
  Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(npm_|NODE_OPTIONS$)/i.test(name)))

interface Run { cwd: string; env?: NodeJS.ProcessEnv }
function run(command: string, args: string[], { cwd, env }: Run) {
  return new Promise<{ stdout: string; ms: number }>((resolve, reject) => {
    const started = Date.now()
    const options = { cwd, env: { ...cleanEnv(), ...env }, maxBuffer: 16 << 20 }
    execFile(command, args, options, (error, stdout, stderr) => {
      if (error) reject(new Error(`${command} ${args.join(' ')} failed:\n${stdout}${stderr}`))
      else resolve({ stdout, ms: Date.now() - started })
    })
  })
}

const npm = (args: string[], cwd: string) =>
  run('npm', [...args, '--no-audit', '--no-fund'], { cwd })
const write = (file: string, text: string) => fs.writeFileSync(path.join(project, file), text)

interface Packed { filename: string; size: number; entryCount: number }

before(async () => {
  project = fs.mkdtempSync(path.join(os.tmpdir(), 'bank-sdk-consumer-'))
  const build = run('npm', ['run', 'build:client'], { cwd: root })
  const [built] = await Promise.all([build, tb.ready])
  partner = await onboardPartner(tb)
  const pack = ['pack', './packages/client', '--pack-destination', project, '--json']
  const [packed] = JSON.parse((await npm(pack, root)).stdout) as Packed[]
  const { filename, size, entryCount } = packed!
  write('package.json', `${JSON.stringify({ name: 'app', private: true, type: 'module' })}\n`)
  // An npm cache of its own, so that the install is what a partner's first one is.
  const cache = path.join(project, '.npm-cache')
  const install = ['install', `./${filename}`, '@types/node@20', '--cache', cache]
  const installed = await npm(install, project)
  const kB = Math.round(size / 1024)
  timings = `build ${built.ms} ms; ${filename} ${kB} kB, ${entryCount} files; `
    + `install ${installed.ms} ms`
})
after(() => {
  if (project) fs.rmSync(project, { recursive: true, force: true })
})

const installedFiles = (dir: string) =>
  fs.readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)))
    .map((file) => file.split(path.sep).join('/'))

test('client package - the tarball holds the built SDK only: JavaScript and .d.ts importing .js', (t) => {
  t.diagnostic(timings)
  const unpacked = path.join(project, 'node_modules/@partner-bank/client')
  const files = installedFiles(unpacked)
  assert.ok(files.includes('dist/client/index.js'), files.join(', '))
  assert.ok(files.includes('dist/client/index.d.ts'), files.join(', '))
  const others = files.filter((f) => !/^dist\/.*\.(js|d\.ts)$|^package\.json$|^README\.md$/.test(f))
  assert.deepEqual(others, [], 'files other than the build')
  const sdk = /^dist\/(client|contract|nats)\/|-contract\.(js|d\.ts)$/
  assert.deepEqual(files.filter((f) => f.startsWith('dist/') && !sdk.test(f)), [], 'server code')
  const tsImport = /(from|import)\s*\(?\s*['"]\.[^'"]*\.ts['"]/
  const text = (file: string) => fs.readFileSync(path.join(unpacked, file), 'utf8')
  assert.deepEqual(files.filter((f) => tsImport.test(text(f))), [], 'files importing .ts')
})

test('client package - plain Node runs a partner script against a running bank', async () => {
  write('app.mjs', [
    `import { BankClient } from '@partner-bank/client'`,
    `const { NATS_URL: servers, PARTNER_ID: partnerId, PARTNER_TOKEN: token } = process.env`,
    `const bank = new BankClient({ servers, token, partnerId })`,
    `const { entities } = await bank.entities.list()`,
    `console.log(JSON.stringify(entities.map((entity) => entity.id)))`,
    `await bank.close()`,
    '',
  ].join('\n'))
  const { partnerId: PARTNER_ID, token: PARTNER_TOKEN } = partner
  const env = { NATS_URL: tb.natsUrl, PARTNER_ID, PARTNER_TOKEN }
  const { stdout } = await run(process.execPath, ['app.mjs'], { cwd: project, env })
  assert.deepEqual(JSON.parse(stdout), [partner.rootEntityId])
})

// A partner's typed code: the methods, their requests and replies, the errors (narrowed by
// type, with typed details), and a wrong field and error type the types must refuse (were
// they `any` or `string`, the @ts-expect-error would itself fail).
const consumer = `
import { BankApiError, BankClient, verifyWebhook, type JobView } from '@partner-bank/client'

export async function entityIds(bank: BankClient): Promise<string[]> {
  try {
    const { entities } = await bank.entities.list()
    // @ts-expect-error: entity_list takes no fields
    await bank.entities.list({ entity_id: 'x' })
    return entities.map((entity) => entity.id)
  } catch (error) {
    if (error instanceof BankApiError) {
      console.error(error.code, error.type, error.details)
      if (error.type === 'duplicate') return [error.details[0]?.tx_id ?? '']
      // @ts-expect-error: a misspelt error type does not compile
      if (error.type === 'insuficient_funds') return []
    }
    throw error
  }
}
export const client = new BankClient({ servers: 'nats://127.0.0.1:4222', token: 't', partnerId: 'p' })
export const event = verifyWebhook({}, '{}', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')
export const job: JobView | undefined = undefined
`

test('client package - TypeScript checks a typed file with node16, nodenext and bundler resolution', async () => {
  write('consumer.ts', consumer)
  const settings = { node16: 'node16', nodenext: 'nodenext', bundler: 'preserve' }
  await Promise.all(Object.entries(settings).map(async ([resolution, module]) => {
    // The .d.ts files themselves are checked once (nodenext): with zod's and Node's types it
    // is 10 CPU-seconds a run; the other two resolve and type the same files.
    const skipLibCheck = resolution !== 'nodenext'
    const compilerOptions = {
      target: 'ES2022', module, moduleResolution: resolution, strict: true,
      skipLibCheck, noEmit: true, types: ['node'],
    }
    const config = `tsconfig.${resolution}.json`
    write(config, JSON.stringify({ compilerOptions, files: ['consumer.ts'] }, null, 2))
    await run(process.execPath, [tsc, '-p', config], { cwd: project })
  }))
})
