import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parse, stringify } from 'yaml'

// The bank's images without a registry: a Debian bookworm base made with debootstrap from
// Debian's packages, imported into podman; Node.js 20 on it (this machine's own node binary
// and npm, since bookworm has Node.js 18); PostgreSQL 15 and nats-server from Debian's
// packages, standing in for Docker Hub's postgres:15 and nats:2.10; and the bank's image,
// built from the repository's Dockerfile with NODE_IMAGE set to that base. `npm ci` in the
// build reaches the npm registry, and apt-get the Debian mirror; nothing else is fetched.
// test/deploy/images.test.ts builds them and runs compose.yaml on them with podman-compose.
//
//   node --import tsx scripts/podman-images.ts [--storage <dir>] [--compose <file>]
//
// builds them into this machine's podman storage (or, with --storage, a private one in <dir>),
// prints their names and sizes, and with --compose writes compose.yaml on these images to
// <file>; docs/operations.md, "Images without a registry (podman)", says how it then runs.

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

export const images = {
  debian: 'localhost/debian:bookworm',
  node: 'localhost/bank-node:20-bookworm',
  postgres: 'localhost/bank-postgres:15',
  nats: 'localhost/bank-nats:2.9',
  bank: 'localhost/partner-bank:latest',
}

export const podmanLimits = {
  /** Containers' open files and processes: podman's defaults exceed some machines' limits. */
  nofile: 8192,
  nproc: 8192,
  /** Lines of a failed command's output quoted in its error. */
  error_lines: 40,
  /** debootstrap results older than this many days are deleted from the cache. */
  keep_days: 1,
}

/** The Debian packages the images need that this machine lacks (their commands missing). */
export function missingTools(): string[] {
  // Each command is its Debian package's name.
  const has = (command: string) => spawnSync('sh', ['-c', `command -v ${command}`]).status === 0
  return ['podman', 'podman-compose', 'debootstrap', 'runc'].filter((command) => !has(command))
}

/** How podman runs: its environment, and where what it wrote goes. */
export interface Podman {
  env: NodeJS.ProcessEnv
  /** Where the commands' output is appended (a command's failure quotes its tail). */
  log: string
}

/**
 * A podman of its own in `dir`: its storage, run-time files, networks and events there (so
 * that removing `dir` after `reset` leaves nothing behind), runc with cgroupfs (crun refuses
 * hybrid cgroups; there may be no systemd), ulimits this machine allows, and no registry
 * searched for short names.
 */
export function privatePodman(dir: string): Podman {
  const at = (name: string) => path.join(dir, name)
  for (const name of ['storage', 'run', 'networks', 'tmp']) {
    fs.mkdirSync(at(name), { recursive: true })
  }
  const limits = [`nofile=${podmanLimits.nofile}:${podmanLimits.nofile}`,
    `nproc=${podmanLimits.nproc}:${podmanLimits.nproc}`]
  fs.writeFileSync(at('containers.conf'), [
    '[containers]', `default_ulimits = ${JSON.stringify(limits)}`, 'log_driver = "k8s-file"',
    '[engine]', 'runtime = "runc"', 'cgroup_manager = "cgroupfs"', 'events_logger = "file"',
    `events_logfile_path = ${JSON.stringify(at('events.log'))}`,
    `tmp_dir = ${JSON.stringify(at('tmp'))}`,
    '[network]', `network_config_dir = ${JSON.stringify(at('networks'))}`, ''].join('\n'))
  fs.writeFileSync(at('storage.conf'), ['[storage]', 'driver = "overlay"',
    `graphroot = ${JSON.stringify(at('storage'))}`, `runroot = ${JSON.stringify(at('run'))}`,
    ''].join('\n'))
  fs.writeFileSync(at('registries.conf'), 'unqualified-search-registries = []\n')
  const env = { ...process.env, CONTAINERS_CONF: at('containers.conf'),
    CONTAINERS_STORAGE_CONF: at('storage.conf'), CONTAINERS_REGISTRIES_CONF: at('registries.conf') }
  return { env, log: at('podman.log') }
}

/** This machine's podman as configured (its own storage and settings). */
export function machinePodman(log: string): Podman {
  return { env: { ...process.env }, log }
}

/** Runs a command, its output appended to the log; fails with the output's tail. */
export function run(podman: Podman, command: string, args: string[],
  options: { cwd?: string } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    fs.appendFileSync(podman.log, `\n$ ${command} ${args.join(' ')}\n`)
    const child = spawn(command, args, { cwd: options.cwd ?? root, env: podman.env,
      stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let all = ''
    child.stdout.on('data', (chunk: Buffer) => { stdout += chunk; all += chunk })
    child.stderr.on('data', (chunk: Buffer) => { all += chunk })
    child.on('error', reject)
    child.on('close', (code, signal) => {
      fs.appendFileSync(podman.log, all)
      if (code === 0) return resolve(stdout)
      const tail = all.trimEnd().split('\n').slice(-podmanLimits.error_lines).join('\n')
      reject(new Error(`${command} ${args.join(' ')} ended with ${code ?? signal}:\n${tail}`))
    })
  })
}

/** Where debootstrap's results are kept between runs (BANK_IMAGE_CACHE, else the temp dir). */
export function imageCacheDir(): string {
  return process.env.BANK_IMAGE_CACHE ?? path.join(os.tmpdir(), 'partner-bank-images')
}

/**
 * Debian bookworm's minimal base (debootstrap --variant=minbase from deb.debian.org) as a
 * tar, made at most once a day: today's is kept in the cache and older ones are deleted.
 */
export async function debianRootfs(podman: Podman, cacheDir = imageCacheDir()): Promise<string> {
  fs.mkdirSync(cacheDir, { recursive: true })
  const day = new Date().toISOString().slice(0, 10)
  const tar = path.join(cacheDir, `debian-bookworm-minbase-${day}.tar`)
  if (fs.existsSync(tar)) return tar
  const rootfs = fs.mkdtempSync(path.join(cacheDir, 'rootfs-'))
  try {
    await run(podman, 'debootstrap', ['--variant=minbase', 'bookworm', rootfs,
      'http://deb.debian.org/debian'])
    // The package lists and debootstrap's downloaded packages are not part of an image.
    for (const sub of ['var/cache/apt/archives', 'var/lib/apt/lists']) {
      for (const entry of fs.readdirSync(path.join(rootfs, sub), { withFileTypes: true })) {
        if (entry.isFile()) fs.rmSync(path.join(rootfs, sub, entry.name))
      }
    }
    await run(podman, 'tar', ['-C', rootfs, '-cf', `${tar}.part`, '.'])
    fs.renameSync(`${tar}.part`, tar)
  } finally {
    fs.rmSync(rootfs, { recursive: true, force: true })
    fs.rmSync(`${tar}.part`, { force: true })
  }
  const old = /^debian-bookworm-minbase-(\d{4}-\d{2}-\d{2})\.tar$/
  for (const name of fs.readdirSync(cacheDir)) {
    const match = old.exec(name)
    if (match && match[1]! < day) fs.rmSync(path.join(cacheDir, name), { force: true })
  }
  return tar
}

/**
 * The build context of the Node.js base: the node binary running this (Node.js 20), its npm,
 * and the CA certificates Node.js is told to trust here (NODE_EXTRA_CA_CERTS: a proxy to the
 * npm registry that inspects TLS signs with one), so that `npm ci` in the build reaches the
 * registry as it does on this machine.
 */
function nodeContext(dir: string): string {
  const context = path.join(dir, 'node-context')
  fs.mkdirSync(context, { recursive: true })
  const node = fs.realpathSync(process.execPath)
  fs.copyFileSync(node, path.join(context, 'node'))
  const npm = path.resolve(path.dirname(node), '../lib/node_modules/npm')
  fs.cpSync(npm, path.join(context, 'npm'), { recursive: true, dereference: true })
  const extra = process.env.NODE_EXTRA_CA_CERTS
  fs.writeFileSync(path.join(context, 'extra-ca.pem'),
    extra && fs.existsSync(extra) ? fs.readFileSync(extra) : '')
  return context
}

/** How long each image took to make, in ms. */
export type BuildTimes = Record<keyof typeof images, number>

/** Makes every image of `images` in podman's storage; `dir` holds the Node.js context. */
export async function buildImages(podman: Podman, dir: string): Promise<BuildTimes> {
  const times = {} as BuildTimes
  const timed = async (name: keyof typeof images, step: () => Promise<unknown>) => {
    const started = Date.now()
    await step()
    times[name] = Date.now() - started
  }
  const deploy = path.join(root, 'deploy/podman')
  const build = (image: string, file: string, context: string, arg: string) =>
    run(podman, 'podman', ['build', '--network', 'host', '-t', image, '-f', file,
      '--build-arg', arg, context])
  const debian = `DEBIAN_IMAGE=${images.debian}`
  // An imported base already there is kept, so that the builds on it find their cached layers.
  const has = await run(podman, 'podman', ['image', 'exists', images.debian]).then(() => true,
    () => false)
  await timed('debian', async () => has || run(podman, 'podman', ['import',
    await debianRootfs(podman), images.debian]))
  await timed('node', () => build(images.node, path.join(deploy, 'node.Containerfile'),
    nodeContext(dir), debian))
  await timed('postgres', () => build(images.postgres,
    path.join(deploy, 'postgres.Containerfile'), deploy, debian))
  await timed('nats', () => build(images.nats, path.join(deploy, 'nats.Containerfile'), deploy,
    debian))
  await timed('bank', () => build(images.bank, path.join(root, 'Dockerfile'), root,
    `NODE_IMAGE=${images.node}`))
  return times
}

/** An image's size in bytes. */
export async function imageSize(podman: Podman, image: string): Promise<number> {
  return Number(await run(podman, 'podman', ['image', 'inspect', '--format', '{{.Size}}', image]))
}

export interface ComposeChanges {
  /** Each service's published ports, as `host:container`, in place of the file's. */
  ports?: Record<string, string[]>
  /** Settings added to (or replacing) a service's environment, by service. */
  environment?: Record<string, Record<string, string>>
}

/**
 * A compose file (compose.yaml) for podman without a registry: services built from the
 * Dockerfile run the bank's image (already built), and Docker Hub's postgres and nats images
 * are replaced by the Debian ones; `changes` move published ports and add settings.
 */
export function composeWithoutRegistry(source: string, changes: ComposeChanges = {}): string {
  const compose = parse(source, { merge: true }) as { services: Record<string, Service> }
  for (const key of Object.keys(compose)) {
    if (key.startsWith('x-')) delete (compose as Record<string, unknown>)[key]
  }
  for (const [name, service] of Object.entries(compose.services)) {
    if (service.build !== undefined) {
      delete service.build
      service.image = images.bank
    } else if (/^postgres:/.test(service.image ?? '')) service.image = images.postgres
    else if (/^nats:/.test(service.image ?? '')) service.image = images.nats
    const ports = changes.ports?.[name]
    if (ports) service.ports = ports
    const environment = changes.environment?.[name]
    if (environment) service.environment = { ...service.environment, ...environment }
  }
  // YAML 1.1, as podman-compose's PyYAML reads it: `restart: "no"` stays a string, not false.
  return stringify(compose, { version: '1.1' })
}

interface Service {
  image?: string
  build?: unknown
  ports?: string[]
  environment?: Record<string, string>
}

const usage = 'usage: node --import tsx scripts/podman-images.ts [--storage <dir>] ' +
  '[--compose <file>]'

/** The options of the command line: --storage <dir>, --compose <file>. */
function options(argv: string[]): { storage?: string; compose?: string } {
  const found: { storage?: string; compose?: string } = {}
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]]
    if ((flag !== '--storage' && flag !== '--compose') || !value) throw new Error(usage)
    found[flag === '--storage' ? 'storage' : 'compose'] = value
  }
  return found
}

async function main(argv: string[]): Promise<void> {
  const { storage, compose } = options(argv)
  const missing = missingTools()
  if (missing.length > 0) throw new Error(`install from Debian first: ${missing.join(' ')}`)
  const dir = storage ? path.resolve(storage) : fs.mkdtempSync(path.join(os.tmpdir(), 'images-'))
  fs.mkdirSync(dir, { recursive: true })
  const podman = storage ? privatePodman(dir) : machinePodman(path.join(dir, 'podman.log'))
  console.log(`building (output in ${podman.log})`)
  const times = await buildImages(podman, dir)
  for (const [name, image] of Object.entries(images)) {
    const mb = (await imageSize(podman, image)) / 1e6
    console.log(`${image}  ${mb.toFixed(0)} MB  ${(times[name as keyof BuildTimes] / 1000)
      .toFixed(0)} s`)
  }
  if (compose) {
    const source = fs.readFileSync(path.join(root, 'compose.yaml'), 'utf8')
    fs.writeFileSync(compose, composeWithoutRegistry(source))
    console.log(`wrote ${compose}: compose.yaml on these images`)
  }
  if (storage) {
    console.log(`podman with: CONTAINERS_CONF=${podman.env.CONTAINERS_CONF} ` +
      `CONTAINERS_STORAGE_CONF=${podman.env.CONTAINERS_STORAGE_CONF} ` +
      `CONTAINERS_REGISTRIES_CONF=${podman.env.CONTAINERS_REGISTRIES_CONF}`)
  }
}

if (process.argv[1] && fs.realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error)
    process.exit(1)
  })
}
