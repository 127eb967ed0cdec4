import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { guideSnippets, readmeSnippets, wrappedInFunction } from './support/guide-snippets.ts'

// The SDK as a partner gets it (issue 30): `npm run build:client` builds packages/client,
// `npm pack` makes its tarball, and a fresh project of the partner's own installs it from the
// tarball (its dependencies from the npm registry) and uses it two ways: a plain `node` script
// calls a running bank with the partner's token, and `tsc --noEmit` checks a typed file with
// node16, nodenext and bundler resolution (with nodenext, skipLibCheck off: the package's
// .d.ts files are checked too). Run on one back end only (scripts/test.mjs): the package does
// not depend on the storage.
//
// Issue 44: the guides' snippets (support/guide-snippets.ts) are type-checked against the
// installed package, as ESM (`"type": "module"`, nodenext) and as CommonJS; a CommonJS script
// loads the package with require() (Node's require(esm), 20.19 and later) and with
// `await import()`; the .d.ts files carry each method's TSDoc, and TypeScript's language
// service, asked what hovering a method shows, answers its documentation and named types.

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
import {
  BankApiError, BankClient, verifyWebhook, type Account, type JobView, type Transaction,
  type TransferRequest,
} from '@partner-bank/client'

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
export async function lastPayment(bank: BankClient, request: TransferRequest) {
  const { tx_id } = await bank.accounts.transfer(request)
  const { transaction }: { transaction: Transaction } =
    await bank.accounts.getTransaction({ tx_id })
  const account: Account = await bank.accounts.getDetails({ account_id: request.account_id })
  // @ts-expect-error: a named reply type is the contract's, not \`any\`
  return [transaction.amount, account.balance, transaction.no_such_field]
}
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

/** Writes files into `dir` of the project (its package.json first) and type-checks them there. */
async function typeCheck(dir: string, type: 'module' | 'commonjs', files: Record<string, string>) {
  fs.mkdirSync(path.join(project, dir), { recursive: true })
  write(`${dir}/package.json`, `${JSON.stringify({ private: true, type })}\n`)
  for (const [name, text] of Object.entries(files)) write(`${dir}/${name}`, text)
  const compilerOptions = {
    target: 'ES2022', module: 'nodenext', moduleResolution: 'nodenext', strict: true,
    skipLibCheck: true, noEmit: true, types: ['node'],
  }
  const config = `${dir}/tsconfig.json`
  write(config, JSON.stringify({ compilerOptions, files: Object.keys(files) }, null, 2))
  return run(process.execPath, [tsc, '-p', config], { cwd: project })
}

/** tsc's errors, one `file: TSnnnn` per error, from a failed run's message. */
function tscErrors(error: unknown): string[] {
  const text = error instanceof Error ? error.message : String(error)
  return [...text.matchAll(/^(\S+\.ts)\(\d+,\d+\): error (TS\d+)/gm)]
    .map(([, file, code]) => `${path.basename(file!)}: ${code}`)
}

const snippets = guideSnippets(root)
const fileOf = (name: string) => `${name}.ts`

test('client package - every TypeScript snippet of the guides and the README type-checks in an ESM project', async (t) => {
  const pages = new Set(snippets.map((snippet) => snippet.page))
  for (const page of ['payments', 'bulk-payments', 'cards', 'debit-orders', 'webhooks']) {
    assert.ok(pages.has(`docs/guides/${page}.md`), `no snippet of ${page}.md`)
  }
  const readme = readmeSnippets(root)
  assert.ok(readme.length >= 4, 'the README shows connecting, a payment, errors and webhooks')
  const all = [...snippets, ...readme]
  const files = Object.fromEntries(all.map((s) => [fileOf(s.name), s.text]))
  const { ms } = await typeCheck('esm', 'module', files)
  t.diagnostic(`${all.length} snippets (${[...pages].join(', ')}, README) in ${ms} ms`)
})

// A CommonJS file has no top-level await, which the guides' programs use: as written they are
// ESM programs. In a CommonJS project every error is that one (TS1309), never that the package
// cannot be loaded (TS1479: ESM from require, which TypeScript 5.8 and Node 20.19 allow); with
// their code inside an async function they type-check.
test('client package - in a CommonJS project the snippets fail only on top-level await, and type-check inside a function', async () => {
  const raw = Object.fromEntries(snippets.map((s) => [fileOf(s.name), s.text]))
  const failed = await typeCheck('cjs', 'commonjs', raw).then(() => undefined, tscErrors)
  assert.ok(failed && failed.length > 0, 'the snippets use top-level await: CommonJS refuses it')
  assert.deepEqual([...new Set(failed.map((error) => error.split(': ')[1]))], ['TS1309'],
    failed.join('\n'))
  const wrapped = Object.fromEntries(snippets.map((s) => [fileOf(s.name), wrappedInFunction(s)]))
  await typeCheck('cjs-wrapped', 'commonjs', wrapped)
})

test('client package - a CommonJS script loads the package with require() and with import()', async () => {
  fs.mkdirSync(path.join(project, 'cjs-run'), { recursive: true })
  const body = [
    `const { NATS_URL: servers, PARTNER_ID: partnerId, PARTNER_TOKEN: token } = process.env`,
    `async function main(BankClient) {`,
    `  const bank = new BankClient({ servers, token, partnerId })`,
    `  const { entities } = await bank.entities.list()`,
    `  console.log(JSON.stringify(entities.map((entity) => entity.id)))`,
    `  await bank.close()`,
    `}`,
  ]
  write('cjs-run/require.cjs', [...body,
    `main(require('@partner-bank/client').BankClient)`, ''].join('\n'))
  write('cjs-run/import.cjs', [...body,
    `import('@partner-bank/client').then(({ BankClient }) => main(BankClient))`, ''].join('\n'))
  const { partnerId: PARTNER_ID, token: PARTNER_TOKEN } = partner
  const env = { NATS_URL: tb.natsUrl, PARTNER_ID, PARTNER_TOKEN }
  for (const script of ['require.cjs', 'import.cjs']) {
    const cwd = path.join(project, 'cjs-run')
    const { stdout } = await run(process.execPath, [script], { cwd, env })
    assert.deepEqual(JSON.parse(stdout), [partner.rootEntityId], script)
  }
})

/** What an editor shows on hovering `marker` in `file` (TypeScript's quick info). */
function hover(file: string, marker: string): { signature: string; docs: string; tags: string } {
  const text = fs.readFileSync(file, 'utf8')
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext, strict: true, types: ['node'],
  }
  const host: ts.LanguageServiceHost = {
    getScriptFileNames: () => [file],
    getScriptVersion: () => '1',
    getScriptSnapshot: (name) =>
      fs.existsSync(name) ? ts.ScriptSnapshot.fromString(fs.readFileSync(name, 'utf8')) : undefined,
    getCurrentDirectory: () => project,
    getCompilationSettings: () => options,
    getDefaultLibFileName: (o) => ts.getDefaultLibFilePath(o),
    fileExists: ts.sys.fileExists, readFile: ts.sys.readFile, readDirectory: ts.sys.readDirectory,
    directoryExists: ts.sys.directoryExists, getDirectories: ts.sys.getDirectories,
  }
  const info = ts.createLanguageService(host).getQuickInfoAtPosition(file, text.indexOf(marker))
  const tags = (info?.tags ?? []).map((tag) => `@${tag.name} ${ts.displayPartsToString(tag.text)}`)
  return { signature: ts.displayPartsToString(info?.displayParts),
    docs: ts.displayPartsToString(info?.documentation), tags: tags.join('\n') }
}

test('client package - the .d.ts carry TSDoc: hovering a method shows its docs and named types', () => {
  const declarations = path.join(project,
    'node_modules/@partner-bank/client/dist/client/generated/partner-methods.d.ts')
  const dts = fs.readFileSync(declarations, 'utf8')
  assert.match(dts, /^export type Transaction = /m)
  assert.match(dts, /@throws \{BankApiError\} `insufficient_funds` \(400\)/)
  write('hover.ts', [
    `import { BankClient } from '@partner-bank/client'`,
    `declare const bank: BankClient`,
    `export const reply = bank.accounts.transfer`,
    '',
  ].join('\n'))
  const shown = hover(path.join(project, 'hover.ts'), 'transfer')
  assert.match(shown.signature,
    /transfer\(request: TransferRequest\): Promise<TransferResult>/, shown.signature)
  assert.match(shown.docs, /^Pay out of an account by EFT/, shown.docs)
  assert.match(shown.tags, /@throws .*`insufficient_funds` \(400\)/, shown.tags)
  assert.match(shown.tags, /@example[\s\S]*await bank\.accounts\.transfer\(/, shown.tags)
})
