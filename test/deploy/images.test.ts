import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, test, type TestContext } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { freePort } from '../../dev/nats-server.ts'
import { main as firstPayment } from '../../examples/first-payment.ts'
import {
  buildImages, composeWithoutRegistry, imageCacheDir, images, imageSize, missingTools,
  privatePodman, run, type BuildTimes, type Podman,
} from '../../scripts/podman-images.ts'

// The images run: the bank's image is built from the Dockerfile without a registry (a Debian
// base made by debootstrap, imported into a podman of the file's own: scripts/podman-images.ts),
// and compose.yaml runs on podman-compose — PostgreSQL, nats-init, NATS with TLS and the
// bank as its authority, two bank instances — with a first payment made through it from
// here (examples/first-payment.ts, over TLS with the operator's creds). What the machine
// needs changed in compose.yaml, and only that, is changed in a copy: the images (Debian's
// PostgreSQL and nats-server for Docker Hub's), private host ports, and sandbox mode, which
// the example needs to fund its partner. podman-compose 1.0.3 (Debian bookworm's) starts
// services without waiting for depends_on's conditions, so the test brings them up in
// compose.yaml's order: PostgreSQL, then nats-init to completion, then the rest.
// Without podman, podman-compose, debootstrap and runc, or as a user other than root, this
// fails in CI (CI=true or BANK_TEST_REQUIRE_PODMAN=1) and elsewhere says it did not run.
// BANK_IMAGE_STORAGE=<dir> keeps the podman storage in <dir> after the run, and a next run
// with it builds from its cached layers (for working on the images; CI starts empty).

const required = process.env.CI === 'true' || process.env.BANK_TEST_REQUIRE_PODMAN === '1'
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

export const imageTestLimits = {
  /** Making the images: debootstrap (once a day), then the builds (npm ci, apt-get). */
  build_timeout_ms: 540_000,
  /** The composed stack's start and the first payment through it. */
  compose_timeout_ms: 240_000,
  poll_ms: 500,
}

/** Why the images cannot be made here, or undefined when they can. */
function problem(): string | undefined {
  if (process.getuid?.() !== 0) return 'debootstrap and rootful podman need root'
  const missing = missingTools()
  if (missing.length > 0) return `install from Debian: ${missing.join(' ')}`
  return undefined
}

const cannot = problem()
const kept = process.env.BANK_IMAGE_STORAGE
const dir = kept ? path.resolve(kept) : fs.mkdtempSync(path.join(os.tmpdir(), 'bank-images-'))
const project = `bankimages${process.pid}`
let podman: Podman
let times: BuildTimes
let built: Error | undefined

/** Whether the images can be made here; when they cannot, fails in CI and says why elsewhere. */
function available(t: TestContext): boolean {
  if (!cannot) return true
  const message = `not run: ${cannot}`
  if (required) assert.fail(`${message}; CI=true or BANK_TEST_REQUIRE_PODMAN=1 requires it`)
  t.diagnostic(message)
  return false
}

before(async () => {
  if (cannot) return
  podman = privatePodman(dir)
  try {
    times = await buildImages(podman, dir)
  } catch (error) {
    built = error as Error
  }
}, { timeout: imageTestLimits.build_timeout_ms })

after(async () => {
  if (!podman) return fs.rmSync(dir, { recursive: true, force: true })
  // The log outlives the run, for a failure's whole story.
  fs.copyFileSync(podman.log, path.join(imageCacheDir(), 'podman-last-run.log'))
  const quietly = (...args: string[]) => run(podman, 'podman', args).catch(() => {})
  await quietly('rm', '--all', '--force', '--time', '2')
  await quietly('volume', 'prune', '--force')
  await quietly('network', 'prune', '--force')
  if (kept) return
  await quietly('system', 'reset', '--force')
  fs.rmSync(dir, { recursive: true, force: true })
})

/** The images were made; otherwise fails saying why (podman's own words) and where the log is. */
function assertBuilt(): void {
  if (built) assert.fail(`podman could not make the images (log: ${imageCacheDir()}/` +
    `podman-last-run.log): ${built.message}`)
}

test('images - the bank\'s image builds from the Dockerfile without a registry and runs', async (t) => {
  if (!available(t)) return
  assertBuilt()
  const seconds = (ms: number) => `${(ms / 1000).toFixed(0)} s`
  t.diagnostic(`made in: ${Object.entries(times).map(([name, ms]) => `${name} ${seconds(ms)}`)
    .join(', ')}`)
  for (const image of Object.values(images)) {
    t.diagnostic(`${image}: ${((await imageSize(podman, image)) / 1e6).toFixed(0)} MB`)
  }
  // The compiled service and CLI, run as the image's `node` user: no TypeScript in it.
  const inImage = (...command: string[]) =>
    run(podman, 'podman', ['run', '--rm', '--network', 'none', images.bank, ...command])
  assert.equal((await inImage('id', '-un')).trim(), 'node')
  assert.match(await inImage('node', '--version'), /^v20\./)
  assert.equal((await inImage('find', '/app', '-name', '*.ts', '-not', '-name', '*.d.ts',
    '-not', '-path', '/app/node_modules/*')).trim(), '')
  assert.match(await inImage('node', 'bin/bank.js', '--help'), /nats init/)
})

/** The compose project's command. */
const compose = (file: string, ...args: string[]) =>
  run(podman, 'podman-compose', ['-p', project, '-f', file, ...args], { cwd: dir })
const container = (service: string) => `${project}_${service}_1`

/** Polls `probe` until it returns a value, up to the compose limit. */
async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + imageTestLimits.compose_timeout_ms
  for (;;) {
    const value = await probe().catch(() => undefined)
    if (value !== undefined) return value
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what} (log: ${podman.log})`)
    await delay(imageTestLimits.poll_ms)
  }
}

const execIn = (service: string, ...command: string[]) =>
  run(podman, 'podman', ['exec', container(service), ...command])

/** Both instances ready: their /readyz, on the published metrics ports, answers 200. */
async function instancesReady(ports: number[]): Promise<void> {
  for (const port of ports) {
    await until(`the instance on ${port}`, async () => {
      const response = await fetch(`http://127.0.0.1:${port}/readyz`)
      await response.body?.cancel()
      return response.status === 200 ? true : undefined
    })
  }
}

test('images - compose.yaml runs on podman-compose and a first payment settles through it', {
  timeout: imageTestLimits.compose_timeout_ms + 60_000,
}, async (t) => {
  if (!available(t)) return
  assertBuilt()
  const ports = { nats: await freePort(), metrics1: await freePort(), metrics2: await freePort() }
  const file = path.join(dir, 'compose.yaml')
  fs.writeFileSync(file, composeWithoutRegistry(fs.readFileSync(path.join(root, 'compose.yaml'),
    'utf8'), {
    ports: { 'nats': [`127.0.0.1:${ports.nats}:4222`],
      'bank-1': [`127.0.0.1:${ports.metrics1}:9464`],
      'bank-2': [`127.0.0.1:${ports.metrics2}:9464`] },
    environment: { 'bank-1': { BANK_SANDBOX: 'true' }, 'bank-2': { BANK_SANDBOX: 'true' } },
  }))
  podman.env.BANK_SECRETS_KEY = Buffer.alloc(32, 7).toString('base64')
  const started = Date.now()
  await compose(file, 'up', '-d', '--no-build', 'postgres')
  await until('PostgreSQL', async () => (await execIn('postgres', 'pg_isready', '-U', 'bank',
    '-d', 'bank'), true))
  await compose(file, 'up', '-d', '--no-build', 'nats-init')
  const initExit = await run(podman, 'podman', ['wait', container('nats-init')])
  assert.equal(initExit.trim(), '0', `nats-init ran \`bank nats init\` (log: ${podman.log})`)
  await compose(file, 'up', '-d', '--no-build')
  const token = await until('the operator token', async () =>
    (await execIn('bank-1', 'cat', '/data/operator-token')).trim() || undefined)
  for (const name of ['operator.creds', 'ca.pem']) {
    fs.writeFileSync(path.join(dir, name), await execIn('bank-1', 'cat', `/nats/${name}`),
      { mode: 0o600 })
  }
  await instancesReady([ports.metrics1, ports.metrics2])
  const up = Date.now()
  const lines: string[] = []
  const result = await firstPayment({ NATS_URL: `tls://127.0.0.1:${ports.nats}`,
    NATS_CREDS: path.join(dir, 'operator.creds'), NATS_TLS_CA: path.join(dir, 'ca.pem'),
    BANK_OPERATOR_TOKEN: token }, (line) => lines.push(line))
  assert.equal(result.status, 'Successful', lines.join('\n'))
  t.diagnostic(`composed stack up in ${((up - started) / 1000).toFixed(1)} s; first payment ` +
    `settled ${((Date.now() - up) / 1000).toFixed(1)} s later`)
  // Both instances count what they served (the payment went to one or the other).
  let series = 0
  for (const port of [ports.metrics1, ports.metrics2]) {
    const response = await fetch(`http://127.0.0.1:${port}/metrics`)
    assert.equal(response.status, 200)
    series += (await response.text()).split('\n').filter((line) => line.startsWith('bank_'))
      .length
  }
  assert.ok(series > 0, 'the instances serve their metrics')
})
